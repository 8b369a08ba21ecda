/**
 * Reuse identity (REC-4, CARRY-2): the configuration hash of an experiment and the input
 * fingerprint of an eval, combined into the execution identity digest. Labels, descriptions,
 * credentials and scheduling settings never enter identity.
 */
import { dirname, relative, resolve } from "node:path";
import { canonicalJson, sha256Hex } from "../_shared/mod.ts";
import { flatString } from "./_flat.ts";
import { slotIdOf } from "./ids.ts";
import type { DiscoveredEval, DiscoveredExperiment, DiscoveredGroup } from "../discovery/mod.ts";

const RELATIVE_IMPORT_REGEXP =
  /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\bexport\s*\*\s*from\s*)["'](\.{1,2}\/[^"']+|\/[^"']+)["']/g;

/** `sha256:<hex>` of the canonical JSON of `value`. */
export function digestOf(value: unknown): string {
  // Flat: identity digests are kept for the whole run, two per slot.
  return digestOfCanonical(canonicalJson(value));
}

/** `sha256:<hex>` of `text`, which is canonical JSON already. */
function digestOfCanonical(text: string): string {
  return flatString(`sha256:${sha256Hex(text)}`);
}

/**
 * The configuration hash of an experiment: agent, model, flags, its sandbox layer's identity
 * (computed by the caller from the sandbox domain), `sandboxReuse` and the sharedState key.
 */
export function configHashOf(
  experiment: DiscoveredExperiment,
  options: { readonly sandbox?: string | null } = {},
): string {
  const def = experiment.definition;
  const agent = def.agent as unknown as { name: string; kind: string; identity?: unknown };
  return digestOf({
    agent: { name: agent.name, kind: agent.kind, identity: agent.identity ?? null },
    model: def.model ?? null,
    flags: def.flags,
    sandbox: options.sandbox ?? null,
    sandboxReuse: def.sandboxReuse,
    sharedStateKey: def.sharedState?.key ?? null,
  });
}

/** The execution identity digest of one slot. */
export function executionDigestOf(configHash: string, inputFingerprint: string): string {
  // digestOf({ configHash, inputFingerprint }), its canonical JSON spelled out.
  return digestOfCanonical(
    `{"configHash":${JSON.stringify(configHash)},"inputFingerprint":${
      JSON.stringify(inputFingerprint)
    }}`,
  );
}

/** Configuration hashes by experiment ID and input fingerprints by eval ID of a selection. */
export interface PlanIdentity {
  /** Configuration hash by experiment ID. */
  readonly configHash: ReadonlyMap<string, string>;
  /** Input fingerprint by eval ID. */
  readonly inputFingerprint: ReadonlyMap<string, string>;
}

/** A sandbox layer as a definition holds it. */
type DefinedLayer = NonNullable<DiscoveredExperiment["definition"]["sandbox"]>;

/** What {@link planIdentityOf} fingerprints besides the selection. */
interface PlanIdentityOptions {
  /** The project root that eval files are relative to. */
  readonly root: string;
  /** Every discovered eval; the selection names them by ID. */
  readonly evals: readonly DiscoveredEval[];
  /** Every discovered eval group. */
  readonly groups: readonly DiscoveredGroup[];
  /** The identity of a sandbox layer, which the sandbox domain computes. */
  layerIdentity(layer: DefinedLayer | undefined): Promise<string | null>;
}

/**
 * Computes the configuration hash of every selected experiment and the input fingerprint of every
 * selected eval (REC-4), sandbox layers included. `exp` and `show` both compute identity here.
 */
export async function planIdentityOf(
  selected: readonly {
    readonly experiment: DiscoveredExperiment;
    readonly evals: readonly { readonly id: string }[];
  }[],
  options: PlanIdentityOptions,
): Promise<PlanIdentity> {
  const { layerIdentity } = options;
  const cache = new FingerprintCache(options.root);
  const evalsById = new Map(options.evals.map((e) => [e.id, e]));
  const groupsById = new Map(options.groups.map((g) => [g.id, g]));
  const configHash = new Map<string, string>();
  const inputFingerprint = new Map<string, string>();
  for (const { experiment, evals } of selected) {
    const sandbox = await layerIdentity(experiment.definition.sandbox);
    configHash.set(experiment.id, configHashOf(experiment, { sandbox }));
    for (const { id } of evals) {
      if (inputFingerprint.has(id)) continue;
      const discovered = evalsById.get(id)!;
      const group = discovered.groupId === undefined
        ? undefined
        : groupsById.get(discovered.groupId);
      // Most evals declare no layer: no identity to await.
      const sandbox = discovered.definition.sandbox;
      const groupSandbox = group?.definition.sandbox;
      inputFingerprint.set(
        id,
        await cache.fingerprint(discovered, group, {
          sandbox: sandbox === undefined ? null : await layerIdentity(sandbox),
          groupSandbox: groupSandbox === undefined ? null : await layerIdentity(groupSandbox),
        }),
      );
    }
  }
  return { configHash, inputFingerprint };
}

/** The identity fields of one planned slot. */
interface SlotIdentity {
  readonly slotId: string;
  readonly configHash: string;
  readonly inputFingerprint: string;
  readonly executionIdentityDigest: string;
}

/** One planned slot, as {@link slotIdentifier} identifies it. */
interface SlotRef {
  /** The slot's experiment. */
  readonly experimentId: string;
  /** The slot's eval. */
  readonly evalId: string;
  /** The Attempt's ordinal within the pair, from 0. */
  readonly ordinal: number;
}

/**
 * Returns a function giving the SlotId and execution identity digest of a slot of `identity`.
 * It remembers the digest of the last pair: the ordinals of a pair come one after another, so they
 * share one hash computation and one string.
 */
export function slotIdentifier(identity: PlanIdentity): (slot: SlotRef) => SlotIdentity {
  let last = { configHash: "", inputFingerprint: "", digest: "" };
  const digestFor = (configHash: string, inputFingerprint: string): string => {
    if (last.configHash === configHash && last.inputFingerprint === inputFingerprint) {
      return last.digest;
    }
    last = {
      configHash,
      inputFingerprint,
      digest: executionDigestOf(configHash, inputFingerprint),
    };
    return last.digest;
  };
  return ({ experimentId, evalId, ordinal }) => {
    const configHash = identity.configHash.get(experimentId)!;
    const inputFingerprint = identity.inputFingerprint.get(evalId)!;
    return {
      slotId: slotIdOf(evalId, ordinal),
      configHash,
      inputFingerprint,
      executionIdentityDigest: digestFor(configHash, inputFingerprint),
    };
  };
}

/** No metadata seen yet. */
const NONE = Symbol("none");

/** Computes input fingerprints, hashing each source file once. */
export class FingerprintCache {
  readonly #root: string;
  readonly #closures = new Map<string, Promise<string[]>>();
  readonly #hashes = new Map<string, Promise<string>>();
  /** The `sources` of each entry file as the eval names it: many evals share one file. */
  readonly #sources = new Map<string, Promise<Readonly<Record<string, string>>>>();
  readonly #sourcesJson = new Map<string, Promise<string>>();
  /** The canonical JSON of the metadata object seen last: consecutive evals mostly share one. */
  #lastMetadata: { value: unknown; json: string | undefined } = { value: NONE, json: undefined };

  constructor(root: string) {
    this.#root = root;
  }

  /**
   * The input fingerprint of an eval: its ID, kind, metadata, eval-level sandbox, the hash of its
   * entry file's local import closure, and its group's fingerprint.
   */
  async fingerprint(
    e: DiscoveredEval,
    group: DiscoveredGroup | undefined,
    layers: { readonly sandbox?: string | null; readonly groupSandbox?: string | null } = {},
  ): Promise<string> {
    const sources = await this.#sourcesJsonOf(e.file);
    const def = e.definition;
    const groupJson = group
      ? canonicalJson({
        id: group.id,
        members: group.memberIds,
        sandbox: layers.groupSandbox ?? null,
        onUnavailable: group.definition.onUnavailable,
      })
      : "null";
    if (def.metadata !== this.#lastMetadata.value) {
      this.#lastMetadata = { value: def.metadata, json: canonicalJson(def.metadata) };
    }
    const metadata = this.#lastMetadata.json;
    if (metadata === undefined) throw new TypeError(`eval ${e.id} has no metadata object`);
    // canonicalJson of { evalId, kind, metadata, sandbox, sources, group }, its keys in sorted
    // order, built from parts: a dataset's evals share their file's sources and most share one
    // metadata object, so only the ID and layers are new per eval.
    return digestOfCanonical(
      `{"evalId":${JSON.stringify(e.id)},"group":${groupJson},` +
        `"kind":${JSON.stringify(def.evaluationKind)},"metadata":${metadata},` +
        `"sandbox":${JSON.stringify(layers.sandbox ?? null)},"sources":${sources}}`,
    );
  }

  /** The canonical JSON of {@link #sourcesOf}, computed once per entry file. */
  #sourcesJsonOf(file: string): Promise<string> {
    let found = this.#sourcesJson.get(file);
    if (!found) {
      found = this.#sourcesOf(file).then(canonicalJson);
      this.#sourcesJson.set(file, found);
    }
    return found;
  }

  /** Root-relative path → content hash of every file in the closure of `file`. */
  #sourcesOf(file: string): Promise<Readonly<Record<string, string>>> {
    let found = this.#sources.get(file);
    if (!found) {
      found = this.#hashSources(resolve(this.#root, file));
      this.#sources.set(file, found);
    }
    return found;
  }

  async #hashSources(entry: string): Promise<Readonly<Record<string, string>>> {
    const sources: Record<string, string> = {};
    for (const file of await this.#closure(entry)) {
      sources[relative(this.#root, file).split("\\").join("/")] = await this.#hash(file);
    }
    return sources;
  }

  /** The entry file and every file it reaches through relative or absolute imports, sorted. */
  #closure(entry: string): Promise<string[]> {
    let found = this.#closures.get(entry);
    if (!found) {
      found = this.#walk(entry);
      this.#closures.set(entry, found);
    }
    return found;
  }

  async #walk(entry: string): Promise<string[]> {
    const seen = new Set<string>();
    const queue = [entry];
    while (queue.length > 0) {
      const file = queue.pop()!;
      if (seen.has(file)) continue;
      seen.add(file);
      let text: string;
      try {
        text = await Deno.readTextFile(file);
      } catch {
        continue;
      }
      for (const match of text.matchAll(RELATIVE_IMPORT_REGEXP)) {
        const spec = match[1]!;
        queue.push(spec.startsWith("/") ? spec : resolve(dirname(file), spec));
      }
    }
    return [...seen].sort();
  }

  #hash(file: string): Promise<string> {
    let found = this.#hashes.get(file);
    if (!found) {
      found = Deno.readFile(file).then((bytes) => sha256Hex(bytes), () => "missing");
      this.#hashes.set(file, found);
    }
    return found;
  }
}
