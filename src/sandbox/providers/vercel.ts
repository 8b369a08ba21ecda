/**
 * The `vercel` provider (sandboxes.md §8.4): one Vercel Sandbox microVM per physical sandbox,
 * named `niceeval-<token[0..12)>` and tagged with the owner stamp of §7.1, started from a snapshot
 * or a runtime. It talks to the SDK only through a {@link VercelPort}; the SDK port is loaded on
 * first use, so plans without vercel never load the SDK.
 */
import {
  canonicalJson,
  type Clock,
  errorMessage,
  hasErrorName,
  sha256Hex,
} from "../../_shared/mod.ts";
import { classifyTransportError } from "../create.ts";
import { ProviderError } from "../errors.ts";
import type {
  CreateContext,
  CreateErrorClass,
  OwnedInstance,
  OwnerStamp,
  SandboxProvider,
} from "../types.ts";
import { vercelCredentials, vercelPrecondition } from "./vercel/credentials.ts";
import { VERCEL_WORKDIR, VercelHandle } from "./vercel/handle.ts";
import {
  destroyVercelSandbox,
  type VercelCreateParams,
  type VercelInstance,
  type VercelPort,
  vercelStatus,
  withCleanupSignal,
} from "./vercel/port.ts";

export { VercelHandle } from "./vercel/handle.ts";
export type {
  VercelCreateParams,
  VercelFinishedCommand,
  VercelInstance,
  VercelPort,
  VercelRunParams,
  VercelSummary,
} from "./vercel/port.ts";

/** Default lifetime when the Attempt has none (rule 48). */
const DEFAULT_LIFETIME_MS = 45 * 60_000;
/** Prints the shell a script runs with (rule 12). */
const SHELL_PROBE = "if [ -x /bin/bash ]; then echo bash; else echo sh; fi";
/** The tag of each owner-stamp field (§7.1). */
const STAMP_TAGS = {
  host: "niceeval-host",
  pid: "niceeval-pid",
  processStart: "niceeval-start",
  runId: "niceeval-run",
  provisionToken: "niceeval-token",
} as const satisfies Record<keyof OwnerStamp, string>;
/** Every niceeval sandbox name starts with this (rule 91). */
const NAME_PREFIX = "niceeval-";

/** The `vercelSandbox()` options a layer keeps. */
export interface VercelSpec {
  readonly snapshotId?: string;
  readonly runtime?: string;
  readonly vcpus?: number;
}

/** A planned vercel sandbox. */
export interface VercelPlan {
  readonly source: VercelCreateParams["source"];
  readonly vcpus?: number;
}

/** What the vercel provider needs from its host. */
export interface VercelProviderOptions {
  /** The host environment snapshot: the credentials of rule 130. */
  readonly hostEnv: Readonly<Record<string, string>>;
  readonly clock: Clock;
  /** @default {the SDK port over the credentials of hostEnv} */
  readonly port?: VercelPort;
}

/** Creates the `vercel` provider. */
export function createVercelProvider(
  o: VercelProviderOptions,
): SandboxProvider<VercelSpec, VercelPlan> {
  let loading: Promise<VercelPort> | undefined;
  const port = () =>
    loading ??= o.port !== undefined ? Promise.resolve(o.port) : import("./vercel/sdk_port.ts")
      .then(({ createSdkPort }) => createSdkPort(vercelCredentials(o.hostEnv)));
  return {
    name: "vercel",
    scheduling: Object.freeze({
      recommendedConcurrency: 1,
      admission: "shared",
      laneKey: "vercel",
    }),
    plan: (spec) => Promise.resolve(planVercel(spec)),
    create: async (plan, ctx) => createVercel(await port(), plan, ctx, o.clock),
    classifyCreateError: classifyVercelCreateError,
    precondition: () => vercelPrecondition(o.hostEnv),
    findOwned: async (filter, signal) => findOwnedSandboxes(await port(), filter, signal),
    destroyDetached: async (id, signal) => {
      signal.throwIfAborted();
      return await destroyVercelSandbox(await port(), id, { signal });
    },
  };
}

function planVercel(
  spec: VercelSpec,
): { plan: VercelPlan; identity: string; buildKeys: readonly string[] } {
  const source: VercelPlan["source"] = spec.snapshotId !== undefined
    ? { type: "snapshot", snapshotId: spec.snapshotId }
    : { type: "runtime", runtime: spec.runtime ?? "node24" };
  const vcpus = spec.vcpus === undefined ? {} : { vcpus: spec.vcpus };
  const identity = sha256Hex(canonicalJson({ provider: "vercel", source, ...vcpus }));
  return { plan: { source, ...vcpus }, identity, buildKeys: [] };
}

/** The owner stamp as tags (§7.1). */
export function vercelTags(owner: OwnerStamp): Record<string, string> {
  return {
    [STAMP_TAGS.host]: owner.host,
    [STAMP_TAGS.pid]: String(owner.pid),
    [STAMP_TAGS.processStart]: owner.processStart,
    [STAMP_TAGS.runId]: owner.runId,
    [STAMP_TAGS.provisionToken]: owner.provisionToken,
  };
}

/**
 * Creates one sandbox, then probes its shell. A failure after the instance exists deletes it
 * before rejecting (rule 22); every failure rejects as a classified `ProviderError`.
 */
async function createVercel(
  port: VercelPort,
  plan: VercelPlan,
  ctx: CreateContext,
  clock: Clock,
): Promise<VercelHandle> {
  ctx.signal.throwIfAborted();
  const lifetimeMs = Number.isFinite(ctx.lifetimeMs) ? ctx.lifetimeMs : DEFAULT_LIFETIME_MS;
  const name = `${NAME_PREFIX}${ctx.owner.provisionToken.slice(0, 12)}`;
  let instance: VercelInstance;
  try {
    instance = await port.create({
      name,
      source: plan.source,
      timeout: lifetimeMs,
      ...(plan.vcpus === undefined ? {} : { vcpus: plan.vcpus }),
      tags: vercelTags(ctx.owner),
      signal: ctx.signal,
    });
  } catch (error) {
    if (ctx.signal.aborted) {
      // The abort may have come after the API made the sandbox; its name is known, so delete it.
      await removePartial(port, name, ctx, clock);
      throw ctx.signal.reason;
    }
    throw createFailure(error, lifetimeMs);
  }
  try {
    const shell = await probeShell(instance, ctx.signal);
    return new VercelHandle({ port, instance, shell, clock });
  } catch (error) {
    await removePartial(port, instance.name, ctx, clock);
    ctx.signal.throwIfAborted();
    throw new ProviderError(classifyVercelCreateError(error), errorMessage(error), {
      cause: error,
    });
  }
}

/** The shell scripts run with (rule 12), probed once per sandbox. */
async function probeShell(instance: VercelInstance, signal: AbortSignal): Promise<"bash" | "sh"> {
  signal.throwIfAborted();
  const probe = await instance.runCommand({
    cmd: "sh",
    args: ["-c", SHELL_PROBE],
    cwd: VERCEL_WORKDIR,
    sudo: false,
    signal,
  });
  const shell = (await probe.stdout({ signal })).trim();
  if (probe.exitCode !== 0 || (shell !== "bash" && shell !== "sh")) {
    throw new Error(
      `Cannot probe the shell of vercel sandbox "${instance.name}": exit ${probe.exitCode}`,
    );
  }
  return shell;
}

/** A create error as a `ProviderError`; credential, snapshot and argument errors halt the Experiment. */
function createFailure(error: unknown, lifetimeMs: number): ProviderError {
  const kind = classifyVercelCreateError(error);
  const status = vercelStatus(error);
  const experiment = kind === "fatal" && status !== undefined && status >= 400 && status < 500;
  // A 400 is how the API refuses a timeout beyond the plan's maximum (rule 49).
  const detail = status === 400 ? ` (requested lifetimeMs ${lifetimeMs})` : "";
  return new ProviderError(kind, `${errorMessage(error)}${detail}`, {
    cause: error,
    scope: experiment ? "experiment" : "attempt",
  });
}

/**
 * Kill-on-failure (rule 22), bounded like a cleanup entry: a failed delete is reported, the create
 * error is what rejects.
 */
async function removePartial(
  port: VercelPort,
  name: string,
  ctx: CreateContext,
  clock: Clock,
): Promise<void> {
  try {
    await withCleanupSignal(clock, (signal) => destroyVercelSandbox(port, name, { signal }));
  } catch (error) {
    ctx.diagnostic({
      code: "sandbox-stop-failed",
      level: "error",
      message: `Cannot delete the partial vercel sandbox "${name}": ${errorMessage(error)}`,
      data: { sandboxId: name },
    });
  }
}

/** Rule 135: 429 → `rate_limit`; 400, 401, 403, 404 → `fatal`; the shared table otherwise. */
export function classifyVercelCreateError(error: unknown): CreateErrorClass {
  if (hasErrorName(error, "ProviderError")) return (error as ProviderError).kind;
  const status = vercelStatus(error);
  if (status === 429) return "rate_limit";
  if (status === 400 || status === 401 || status === 403 || status === 404) return "fatal";
  // The shared table's 5xx row; the SDK keeps the status on `response`, where it does not look.
  if (status !== undefined && status >= 500 && status <= 599) return "ambiguous";
  return classifyTransportError(error);
}

/**
 * Lists sandboxes by one tag (the token, else the host), or by the `niceeval-` name prefix for a
 * filter without either; every other field is matched here (rule 133). Only sandboxes that carry
 * a provision token count as stamped.
 */
async function findOwnedSandboxes(
  port: VercelPort,
  filter: Partial<OwnerStamp>,
  signal: AbortSignal,
): Promise<OwnedInstance[]> {
  signal.throwIfAborted();
  const query = filter.provisionToken !== undefined
    ? { tag: [STAMP_TAGS.provisionToken, filter.provisionToken] as const }
    : filter.host !== undefined
    ? { tag: [STAMP_TAGS.host, filter.host] as const }
    : { namePrefix: NAME_PREFIX };
  const found: OwnedInstance[] = [];
  for await (const s of port.list(query, { signal })) {
    const tags = s.tags ?? {};
    if (tags[STAMP_TAGS.provisionToken] === undefined) continue;
    const owner = ownerFromTags(tags);
    const matches = (Object.keys(STAMP_TAGS) as (keyof OwnerStamp)[])
      .every((field) => filter[field] === undefined || owner[field] === filter[field]);
    if (!matches) continue;
    found.push({
      id: s.name,
      owner,
      state: s.status === "running" || s.status === "pending"
        ? "running"
        : s.status === "stopped" || s.status === "failed" || s.status === "aborted"
        ? "stopped"
        : "unknown",
      ...(Number.isFinite(s.createdAt) ? { createdAt: new Date(s.createdAt) } : {}),
    });
  }
  return found;
}

/** The owner stamp read back from tags; a field whose tag is missing or malformed is left out. */
function ownerFromTags(tags: Readonly<Record<string, string>>): Partial<OwnerStamp> {
  const owner: Record<string, string | number> = {};
  for (const [field, tag] of Object.entries(STAMP_TAGS)) {
    const value = tags[tag];
    if (value === undefined) continue;
    if (field !== "pid") owner[field] = value;
    else if (/^[0-9]+$/.test(value)) owner.pid = Number(value);
  }
  return owner as Partial<OwnerStamp>;
}
