/**
 * Runs the Experiment's `teardown`, bounded, and reports it as `experiment_teardown` events (LIFE-6
 * step 3).
 */
import type { Clock, RunEventSink } from "../_shared/mod.ts";
import type { ExperimentHookContext } from "../discovery/mod.ts";
import { lifecycleDiagnostic } from "./_lifecycle_events.ts";
import { experimentHookContext, runBoundedHook } from "./hooks.ts";

/** How step 3 ended; `forced`: skipped or abandoned after a second interrupt (INT-2). */
export type TeardownStep = "ok" | "failed" | "forced";

/**
 * Runs `teardown` bounded by CLEANUP_TIMEOUT_MS; a failure or timeout emits the warning
 * `experiment-teardown-failed` (LIFE-7: verdicts never change). Skipped once `force` aborted.
 */
export async function runExperimentTeardown(
  teardown: (ctx: ExperimentHookContext) => void | Promise<void>,
  options: {
    experimentId: string;
    selectedEvalIds: readonly string[];
    clock: Clock;
    emit: RunEventSink;
    force?: AbortSignal | undefined;
  },
): Promise<TeardownStep> {
  const { clock, emit, experimentId, force } = options;
  if (force?.aborted) return "forced";
  const startedAt = clock.now();
  const base = { type: "experiment_teardown", experimentId } as const;
  emit({ ...base, at: startedAt, status: "started", durationMs: null, message: null });
  const outcome = await runBoundedHook(
    (signal) =>
      teardown(experimentHookContext({
        experimentId,
        selectedEvalIds: options.selectedEvalIds,
        hook: "teardown",
        signal,
        clock,
        emit,
      })),
    { clock, ...(force ? { stop: force } : {}) },
  );
  if (!outcome.ok && outcome.forced) return "forced";
  const durationMs = clock.now() - startedAt;
  if (outcome.ok) {
    emit({ ...base, at: clock.now(), status: "done", durationMs, message: null });
    return "ok";
  }
  emit({ ...base, at: clock.now(), status: "failed", durationMs, message: outcome.message });
  emit(lifecycleDiagnostic(clock.now(), {
    level: "warning",
    code: "experiment-teardown-failed",
    message: `teardown of ${experimentId} failed: ${outcome.message}`,
    experimentId,
  }));
  return "failed";
}
