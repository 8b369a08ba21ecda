/**
 * Steps shared by fresh sandboxes, pool instances and leases (sandboxes.md §3.1 steps 5–10) and the
 * failure mapping of rule 34.
 */
import { errorMessage } from "../_shared/mod.ts";
import type { CleanupStack } from "./cleanup.ts";
import { isSandboxError } from "./errors.ts";
import { layerState } from "./_layer_state.ts";
import type { HookContext, PrepareStep, SandboxHandle, SandboxLayer, SandboxOps } from "./types.ts";

/** A layer of an Attempt with the id of the Experiment, Eval or group that declared it. */
export interface AttemptLayer {
  readonly layer: SandboxLayer;
  readonly owner: string;
}

/** Where a step runs. */
export interface StepContext {
  readonly handle: SandboxHandle;
  readonly signal: AbortSignal;
  readonly cleanup: CleanupStack;
  /** A facade whose relative host paths resolve against `hostDir` (rule 26). */
  readonly facadeFor: (hostDir: string | undefined) => SandboxOps;
  readonly hooks: HookContext;
}

/** Why a sandbox step failed, as the Attempt records it (rule 34). */
export interface SandboxFailure {
  readonly code: string;
  readonly phase: string;
  readonly message: string;
  /** `experiment` halts the Experiment's dispatch. */
  readonly scope: "attempt" | "experiment";
  /** True when the Attempt signal had aborted: the runner decides `timeout` (rule 47). */
  readonly aborted: boolean;
  readonly data?: unknown;
  readonly cause: unknown;
}

/** Maps an error of `phase` to the Attempt failure of rule 34. */
export function failureOf(
  error: unknown,
  options: { phase: string; signal: AbortSignal },
): SandboxFailure {
  const { phase, signal } = options;
  const sandbox = isSandboxError(error);
  const code = sandbox ? error.code : `${phase.replaceAll(".", "-")}-failed`;
  const scope = (error as { scope?: unknown } | null)?.scope === "experiment"
    ? "experiment"
    : "attempt";
  const data = sandbox ? (error as { data?: unknown }).data : undefined;
  const own = (error as { phase?: unknown } | null)?.phase;
  return {
    code,
    phase: typeof own === "string" ? own : phase,
    message: errorMessage(error),
    scope,
    aborted: signal.aborted,
    ...(data !== undefined ? { data } : {}),
    cause: error,
  };
}

/**
 * Step 5: for each layer in order, push all of its teardowns, then run its setups (rule 35: a
 * teardown runs iff its layer's setup phase was entered).
 */
export async function runLayerSetups(
  layers: readonly AttemptLayer[],
  ctx: StepContext,
): Promise<void> {
  const { handle } = ctx;
  for (const { layer } of layers) {
    const state = layerState(layer);
    const sb = ctx.facadeFor(state.hostDir);
    for (const hook of state.hooks) {
      if (hook.kind !== "teardown") continue;
      ctx.cleanup.push({
        kind: "layer-teardown",
        sandboxId: handle.id,
        run: (signal) => hook.fn(sb, { signal, progress: ctx.hooks.progress }),
      });
    }
    for (const hook of state.hooks) {
      if (hook.kind === "setup") await hook.fn(sb, ctx.hooks);
    }
  }
}

/** Step 7: every layer's prepare steps, in order; `onCleanup` pushes onto the Attempt stack. */
export async function runPrepareSteps(
  layers: readonly AttemptLayer[],
  ctx: StepContext,
): Promise<void> {
  for (const { layer } of layers) {
    const state = layerState(layer);
    const sb = ctx.facadeFor(state.hostDir);
    for (const step of state.prepare) await runPrepareStep(step, sb, ctx);
  }
}

async function runPrepareStep(step: PrepareStep, sb: SandboxOps, ctx: StepContext): Promise<void> {
  const { handle } = ctx;
  if (typeof step === "string") {
    await sb.runShellOrThrow(step);
  } else if (Array.isArray(step)) {
    const [cmd, ...args] = step as readonly [string, ...string[]];
    await sb.runCommandOrThrow(cmd, args);
  } else {
    const fn = step as Exclude<PrepareStep, string | readonly string[]>;
    await fn(sb, {
      ...ctx.hooks,
      onCleanup: (cleanup) =>
        ctx.cleanup.push({ kind: "prepare-cleanup", sandboxId: handle.id, run: () => cleanup() }),
    });
  }
}

/** Which shell runs scripts (rule 12): the handle's own answer, else one probe. */
export async function probeShell(
  handle: SandboxHandle,
  signal: AbortSignal,
): Promise<"bash" | "sh"> {
  const own = (handle as { shell?: unknown }).shell;
  if (own === "bash" || own === "sh") return own;
  const r = await handle.exec({ argv: ["sh", "-c", "test -x /bin/bash"] }, { signal });
  return r.exitCode === 0 ? "bash" : "sh";
}
