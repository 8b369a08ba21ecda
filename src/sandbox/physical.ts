/**
 * Plan-time resolution of one pair's physical sandbox (sandboxes.md rules 2, 7, 9, 10, 21, 72):
 * the template's provider and its plan (no daemon I/O), scheduling metadata, fixtures in copy
 * order, the requested lifetime and the pool identity. Provider plans are memoized per template.
 */
import { canonicalJson, errorMessage, sha256Hex } from "../_shared/mod.ts";
import { isSandboxError } from "./errors.ts";
import { checkLayerPaths, layerHookIdentities } from "./layer.ts";
import { layerState } from "./_layer_state.ts";
import { poolIdentity, poolScope } from "./pool.ts";
import type { ProviderRegistry } from "./registry.ts";
import type { SandboxLayer, SandboxProvider } from "./types.ts";

/** A layer of a pair with the id of its owner. */
export interface PhysicalLayer {
  readonly layer: SandboxLayer;
  /** Experiment id, Eval id or Eval group id (rule 9). */
  readonly owner: string;
  readonly side: "experiment" | "eval" | "group";
}

/** What a pair resolves from. */
export interface PhysicalInput {
  /** Template layer first. */
  readonly layers: readonly PhysicalLayer[];
  readonly reuse: "fresh" | "pool" | "group";
  readonly evalId: string;
  readonly groupId: string | null;
  /** Identity of the agent's install plan (rule 72 `agentInstallIdentity`). */
  readonly agentIdentity: string;
}

/** A pair's physical sandbox (the plan's `PlannedSandbox` adds the pair it belongs to). */
export interface PhysicalSandbox {
  readonly provider: string;
  /** Exclusive lane key (LANE-1), or null for shared admission. */
  readonly laneKey: string | null;
  /** `recommendedConcurrency` (CAP-2 input); 1 for exclusive providers. */
  readonly defaultConcurrency: number;
  readonly exclusive: boolean;
  /** The provider plan's identity (sandboxes.md rule 21). */
  readonly identity: string;
  /** The provider's own plan, opaque here. */
  readonly physical: unknown;
  /**
   * Image/template build keys of the provider's plan (sandboxes.md rule 62): each Attempt waits
   * for all of them before dispatch (CHAIN-2); empty when nothing has to be built.
   */
  readonly buildKeys: readonly string[];
  /** Host fixture directories in copy order: the Experiment's, then the Eval's or group's. */
  readonly fixtures: readonly string[];
  /** The template's declared `lifetimeMs`, if any. */
  readonly lifetimeMs: number | null;
  /** Pool identity (rule 72) for `pool` and `group`; null for `fresh`. */
  readonly poolKey: string | null;
  /** The Eval's own layer declares setup or teardown hooks (rule 72 scope, rule 75). */
  readonly evalHooks: boolean;
}

/** Resolves pairs; throws `SandboxConfigError` for a bad fixture or an unknown provider. */
type PhysicalResolver = (input: PhysicalInput) => Promise<PhysicalSandbox>;

/** Creates a resolver over `registry` that plans each template once. */
export function createPhysicalResolver(
  o: { registry: ProviderRegistry; projectRoot: string; signal: AbortSignal },
): PhysicalResolver {
  const plans = new Map<
    SandboxLayer,
    Promise<
      { provider: SandboxProvider; plan: unknown; identity: string; buildKeys: readonly string[] }
    >
  >();
  const paths = new Map<SandboxLayer, Promise<void>>();
  const planOf = (template: SandboxLayer) => {
    let planned = plans.get(template);
    if (!planned) {
      planned = (async () => {
        const { provider, spec } = await o.registry.forLayer(template);
        const out = await provider.plan(spec, { projectRoot: o.projectRoot, signal: o.signal });
        return {
          provider,
          plan: out.plan,
          identity: out.identity,
          buildKeys: Object.freeze([...out.buildKeys]),
        };
      })();
      plans.set(template, planned);
    }
    return planned;
  };
  const checkPaths = (layer: SandboxLayer) => {
    let checked = paths.get(layer);
    if (!checked) {
      checked = checkLayerPaths(layer, o.projectRoot);
      paths.set(layer, checked);
    }
    return checked;
  };
  return async (input) => {
    const [template] = input.layers;
    if (template === undefined) throw new TypeError("Cannot resolve a pair without a template");
    for (const { layer } of input.layers) await checkPaths(layer);
    const { provider, plan, identity, buildKeys } = await planOf(template.layer);
    const exclusive = provider.scheduling.admission === "exclusive";
    const evalHooks = input.layers.some((l) =>
      l.side === "eval" && layerState(l.layer).hooks.length > 0
    );
    const scope = poolScope({
      ...(input.groupId !== null ? { groupId: input.groupId } : {}),
      evalId: input.evalId,
      evalLayerHasHooks: evalHooks,
    });
    return {
      provider: provider.name,
      laneKey: exclusive ? provider.scheduling.laneKey : null,
      defaultConcurrency: exclusive ? 1 : provider.scheduling.recommendedConcurrency,
      exclusive,
      identity,
      physical: plan,
      buildKeys,
      fixtures: fixturesOf(input.layers),
      lifetimeMs: layerState(template.layer).lifetimeMs ?? null,
      poolKey: input.reuse === "fresh" ? null : poolIdentity({
        providerIdentity: identity,
        agentInstallIdentity: input.agentIdentity,
        hookIdentities: input.layers.flatMap((l) => layerHookIdentities(l.layer, l.owner)),
        scope,
      }),
      evalHooks,
    };
  };
}

/** The identity of an agent's install plan: its name and declared identity. */
export function agentInstallIdentity(agent: { name: string; identity?: unknown }): string {
  return sha256Hex(canonicalJson({ name: agent.name, identity: agent.identity ?? null }));
}

/** Fixture directories in copy order: the Experiment's, then the Eval's or group's (rule 10). */
function fixturesOf(layers: readonly PhysicalLayer[]): string[] {
  const ordered = [...layers].sort((a, b) => sideRank(a) - sideRank(b));
  return ordered.flatMap((l) => {
    const fixture = layerState(l.layer).fixture;
    return fixture ? [fixture.path] : [];
  });
}

function sideRank(l: PhysicalLayer): number {
  return l.side === "experiment" ? 0 : 1;
}

/** A sandbox option that no pair can be planned with, reported before anything runs. */
interface PhysicalProblem {
  /** The sandbox error's code. */
  readonly code: string;
  /** The error's message, prefixed with the experiment file. */
  readonly message: string;
  /** What to fix. */
  readonly hint: string;
}

/** Options of {@link resolvePhysicalPairs}. */
interface ResolvePairsOptions<P> {
  /** Resolves one pair's input. */
  readonly resolve: PhysicalResolver;
  /** What `resolve` gets for a pair. */
  inputOf(pair: P): PhysicalInput;
  /** The file that declared the pair's experiment, prefixed to a problem's message. */
  fileOf(pair: P): string;
}

/**
 * Resolves the physical sandbox of every pair, in order, keyed by the pair's key. A sandbox error
 * of a pair becomes a problem (one per distinct message) to report with the pairing conflicts
 * (sandboxes.md rule 4); any other error is rethrown.
 */
export async function resolvePhysicalPairs<P extends { readonly key: string }>(
  pairs: Iterable<P>,
  options: ResolvePairsOptions<P>,
): Promise<{ sandboxes: Map<string, P & PhysicalSandbox>; problems: PhysicalProblem[] }> {
  const sandboxes = new Map<string, P & PhysicalSandbox>();
  const problems = new Map<string, PhysicalProblem>();
  for (const pair of pairs) {
    const input = options.inputOf(pair);
    try {
      const found = await options.resolve(input);
      sandboxes.set(pair.key, Object.freeze({ ...pair, ...found }));
    } catch (error) {
      if (!isSandboxError(error)) throw error;
      const message = `${options.fileOf(pair)}: ${errorMessage(error)}`;
      problems.set(message, {
        code: error.code,
        message,
        hint: "fix the sandbox options of the experiment, eval or eval group",
      });
    }
  }
  return { sandboxes, problems: [...problems.values()] };
}
