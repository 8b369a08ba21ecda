/** The options and the snapshot of a scheduler. */
import type { Clock, Random, RunEventSink } from "../_shared/mod.ts";
import type { AbandonAttempt } from "./control.ts";
import type { GateSnapshot } from "./gate.ts";
import type { JudgePrecheck, JudgePrecheckState } from "./judge.ts";

/** Options of `runPlan`. */
export interface RunPlanOptions {
  /** Aborts on the first interrupt: no more grants, running Attempts are aborted. */
  readonly signal: AbortSignal;
  readonly clock: Clock;
  readonly random: Random;
  readonly onEvent: RunEventSink;
  /** The global cap G. */
  readonly cap: number;
  /** Builds the result of an Attempt abandoned after the abort grace period. */
  readonly abandon: AbandonAttempt;
  /** Judge endpoints and their probe (STOP-7); without it no precheck runs. */
  readonly judge?: JudgePrecheck;
}

/** The read-only scheduler snapshot tests assert against (scheduling.md conventions). */
export interface SchedulerSnapshot {
  readonly cap: number;
  /**
   * Held global slots. Equals `running − backoff` (RUN-4) whenever no Attempt is between its
   * grant and its `attempt_start` (a few microtasks, CHAIN-7 … CHAIN-10); never less.
   */
  readonly heldSlots: number;
  readonly globalWaiters: number;
  readonly experimentPermits: Readonly<Record<string, GateSnapshot>>;
  readonly lanes: Readonly<Record<string, GateSnapshot>>;
  /** Machine sandbox slots by provider; none in this release. */
  readonly machineSlots: Readonly<Record<string, GateSnapshot>>;
  /** Ramp state; no ramp in this release. */
  readonly ramp: null;
  /** Attempts between `attempt_start` and `attempt_end` (RUN-1). */
  readonly running: number;
  /** Running Attempts without a global slot because of send backoff (RUN-2). */
  readonly backoff: number;
  /** Runnable slots not yet started nor closed. */
  readonly queued: number;
  readonly judgePrecheck: JudgePrecheckState;
}
