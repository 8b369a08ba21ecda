/** Builds the lifecycles of one Invocation and their startup recovery, sharing lease notices. */
import type { AttemptResult } from "../_shared/mod.ts";
import type { Plan } from "../plan/mod.ts";
import { LeaseNotices } from "./_lifecycle_events.ts";
import { ExperimentLifecycle } from "./lifecycle.ts";
import { StartupRecovery } from "./orphan_recovery.ts";
import type { RunPlanOptions } from "./types.ts";

/** Code of a fresh sandbox's failed provider stop (`sandboxes.md` rule 38), the CHAIN-12 ledger. */
const FRESH_STOP_FAILED = "sandbox-stop-failed";

/** One lifecycle per planned Experiment, and the recovery tasks they await. */
export function createLifecycles(
  plan: Plan,
  run: {
    options: RunPlanOptions;
    /** The scheduler's stop-all signal (interrupt and internal errors). */
    signal: AbortSignal;
    onSetupFailed(experimentIndex: number): void;
  },
): { lifecycles: ExperimentLifecycle[]; recovery: StartupRecovery } {
  const { clock, random, onEvent: emit, coordination, beforeTeardown } = run.options;
  const notices = new LeaseNotices(clock, emit);
  const { signal } = run;
  const recovery = new StartupRecovery(
    plan,
    coordination ? { clock, random, emit, signal, coordination, notices } : undefined,
  );
  const lifecycles = plan.experiments.map((e) =>
    new ExperimentLifecycle(e, {
      clock,
      emit,
      signal,
      random,
      selectedEvalIds: e.evals.map((ev) => ev.id),
      onSetupFailed: () => run.onSetupFailed(e.index),
      notices,
      recovery: () => recovery.taskOf(e.index),
      ...(coordination ? { coordination } : {}),
      ...(beforeTeardown ? { beforeTeardown } : {}),
    })
  );
  return { lifecycles, recovery };
}

/** Puts a settled Attempt whose fresh sandbox could not be stopped into the ledger (CHAIN-12). */
export function noteFreshCleanup(lifecycle: ExperimentLifecycle, result: AttemptResult): void {
  for (const d of result.details.diagnostics) {
    if (d.code === FRESH_STOP_FAILED) lifecycle.noteFreshCleanupFailure(d.message);
  }
}
