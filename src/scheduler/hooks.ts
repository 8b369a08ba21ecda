/**
 * Experiment hooks (LIFE-1): the `ExperimentHookContext` handed to `setup` and `teardown`, and the
 * bounded runner every cleanup hook goes through (LIFE-6 step 3, ORPH-3, LEASE-10, TIME-4).
 */
import {
  AbortReason,
  type Clock,
  errorMessage,
  onAbort,
  raceAbort,
  sleep,
} from "../_shared/mod.ts";
import type { JsonValue, RunEventSink } from "../_shared/mod.ts";
import type { ExperimentHookContext } from "../discovery/mod.ts";
import { CLEANUP_TIMEOUT_MS } from "./constants.ts";

/** Options of {@link experimentHookContext}. */
interface HookContextOptions {
  readonly experimentId: string;
  readonly selectedEvalIds: readonly string[];
  readonly hook: "setup" | "teardown";
  readonly signal: AbortSignal;
  readonly clock: Clock;
  /** Receives `hook_progress` events and persisted hook diagnostics. */
  readonly emit: RunEventSink;
}

/** The frozen `ctx` of one `setup` or `teardown` call. */
export function experimentHookContext(options: HookContextOptions): ExperimentHookContext {
  const { clock, emit, experimentId, hook } = options;
  const progress = (text: string) =>
    emit({ type: "hook_progress", at: clock.now(), experimentId, hook, text });
  return Object.freeze({
    experimentId,
    selectedEvalIds: Object.freeze([...options.selectedEvalIds]),
    signal: options.signal,
    progress: (u: { message: string }) => progress(u.message),
    log: (message: string) => progress(message),
    diagnostic: (
      d: {
        code: string;
        level: "warning" | "error";
        message: string;
        data?: Record<string, JsonValue>;
      },
    ) =>
      emit({
        type: "diagnostic",
        at: clock.now(),
        level: d.level,
        code: d.code,
        message: d.message,
        experimentId,
        evalId: null,
        data: d.data ?? null,
        persist: true,
      }),
  });
}

/** How a bounded hook ended. `forced`: the caller stopped waiting (INT-2); it may still run. */
export type HookOutcome =
  | { readonly ok: true }
  | {
    readonly ok: false;
    readonly forced: boolean;
    readonly message: string;
    readonly error: unknown;
  };

/** Options of {@link runBoundedHook}. */
interface BoundedHookOptions {
  readonly clock: Clock;
  /** @default CLEANUP_TIMEOUT_MS */
  readonly boundMs?: number;
  /** Aborting it stops waiting at once: the outcome is `forced` and the hook's signal aborts. */
  readonly stop?: AbortSignal;
}

/**
 * Runs `hook` with its own signal, which aborts (reason `timeout`) once `boundMs` passed; a throw,
 * a timeout or a stop is a failed outcome. Never rejects.
 */
export async function runBoundedHook(
  hook: (signal: AbortSignal) => unknown,
  options: BoundedHookOptions,
): Promise<HookOutcome> {
  const { clock, boundMs = CLEANUP_TIMEOUT_MS, stop } = options;
  if (stop?.aborted) {
    const error = new AbortReason("force");
    return { ok: false, forced: true, message: "skipped after a forced exit", error };
  }
  const controller = new AbortController();
  const timer = new AbortController();
  // A stop aborts the hook's signal and ends the wait, both with a `force` reason.
  const stopped = new AbortController();
  using _stop = onAbort(stop, () => {
    controller.abort(new AbortReason("force"));
    stopped.abort(new AbortReason("force"));
  });
  try {
    const bounded = Promise.race([
      Promise.resolve().then(() => hook(controller.signal)),
      sleep(clock, boundMs, { signal: timer.signal }).then(() => {
        controller.abort(new AbortReason("timeout"));
        throw new Error(`it did not finish within ${boundMs / 1000}s`);
      }),
    ]);
    await raceAbort(bounded, stopped.signal);
    return { ok: true };
  } catch (error) {
    const forced = error instanceof AbortReason && error.kind === "force" && stop?.aborted === true;
    return { ok: false, forced, message: errorMessage(error), error };
  } finally {
    timer.abort();
  }
}
