/**
 * The stops of one run: the stop-all signal (interrupt, internal errors), the stop rules, the
 * early-exit of siblings, the waits a changed stop scope ends, and the closing of slots that
 * never started. It owns no gate: it ends waits through the waiter index and aborts running
 * Executions.
 */
import { AbortReason } from "../_shared/mod.ts";
import type { AttemptResult, Clock, SlotOutcome } from "../_shared/mod.ts";
import type { Plan, PlannedSlot } from "../plan/mod.ts";
import { BuildFailed, notDispatchedReason, StopAbort, undispatchedError } from "./_closing.ts";
import type { RunEventCallback } from "./_events.ts";
import { type Execution, slotRef } from "./_execution.ts";
import { noteFreshCleanup } from "./_lifecycles.ts";
import type { WaiterIndex } from "./_waiters.ts";
import { buildFailureDiagnostic } from "./builds.ts";
import { groupDiagnostic, type GroupLanes } from "./group_lanes.ts";
import { type ExperimentLifecycle, SetupFailedError } from "./lifecycle.ts";
import {
  type StopDiagnostic,
  type StopOptions,
  type StopReason,
  StopRules,
  type StopScope,
} from "./stops.ts";

/** What {@link StopControl} reads and ends. */
export interface StopControlDeps {
  readonly clock: Clock;
  readonly emit: RunEventCallback;
  readonly waiters: WaiterIndex;
  /** Started (or starting) Executions by plan position; early exit and interrupt abort them. */
  readonly running: ReadonlyMap<number, Execution>;
  readonly lifecycles: readonly ExperimentLifecycle[];
  readonly groups: GroupLanes;
  /** Aborted on interrupt and on internal errors: hooks and probes see it. */
  readonly stopAll: AbortController;
  /** The circuit breaker and the experiments blocked before any Attempt (RunPlanOptions). */
  readonly rules?: StopOptions;
}

/** The stop state of one run and the waits and Attempts a stop ends. */
export class StopControl {
  readonly #plan: Plan;
  readonly #d: StopControlDeps;
  readonly #rules: StopRules;

  constructor(plan: Plan, deps: StopControlDeps) {
    this.#plan = plan;
    this.#d = deps;
    this.#rules = new StopRules(plan, deps.rules);
    this.#rules.onDiagnostic = (d) => this.#emitStopDiagnostic(d);
  }

  /** The stop-all signal (interrupt and internal errors). */
  get signal(): AbortSignal {
    return this.#d.stopAll.signal;
  }

  /** The error that must end `slot`'s wait now (interrupt or a stop rule), or null. */
  check(slot: PlannedSlot): Error | null {
    if (this.signal.aborted) return new AbortReason("interrupt");
    const reason = this.#rules.check(slot);
    return reason ? this.#stopError(slot, reason) : null;
  }

  /** Stops the waiters of an experiment whose setup failed (LIFE-5). */
  setupFailed(experimentIndex: number): void {
    this.#recheck([this.#rules.setupFailed(experimentIndex)]);
  }

  /**
   * Applies a settled slot to the stop state, its early-exit siblings and the waiters a stop now
   * covers: the second half of CHAIN-12.
   */
  settled(slot: PlannedSlot, result: AttemptResult): void {
    const scopes = this.#rules.settled(slot, result);
    noteFreshCleanup(this.#d.lifecycles[slot.experimentIndex]!, result);
    const experiment = this.#plan.experiments[slot.experimentIndex]!;
    if (result.verdict === "passed" && experiment.earlyExit && slot.kind === "pass") {
      for (const other of this.#d.running.values()) {
        if (
          other.slot !== slot && other.slot.experimentIndex === slot.experimentIndex &&
          other.slot.evalId === slot.evalId
        ) {
          other.abort("early-exit");
        }
      }
    }
    this.#recheck(scopes);
  }

  /** Warns of a replacement, or stops the lane, when a group slot settles (GRP-6). */
  groupSettled(slot: PlannedSlot): void {
    const { groups, waiters } = this.#d;
    const decision = groups.decide(slot);
    const lane = groups.describe(slot);
    if (decision === null || lane === undefined) return;
    const unstarted = decision.action === "stop"
      ? groups.positionsOf(slot).filter((p) => waiters.has(p)).length
      : 0;
    this.#d.emit(groupDiagnostic(decision, lane, { unstarted, at: this.#d.clock.now() }));
  }

  /** Closes a slot that never started: errored without dispatch, or not dispatched (STOP-5). */
  closeUnstarted(slot: PlannedSlot, error: unknown): SlotOutcome {
    const { clock, emit, waiters } = this.#d;
    const at = clock.now();
    const ref = slotRef(slot);
    const errored = undispatchedError(error);
    if (errored) {
      waiters.delete(slot.position);
      emit({ type: "slot_errored", at, slot: ref, ...errored });
      if (error instanceof BuildFailed) emit(buildFailureDiagnostic(slot, error, at));
      return { kind: "errored-undispatched", code: errored.code, message: errored.message };
    }
    const reason = notDispatchedReason(error);
    if (reason === undefined) throw error;
    // Counted while this slot still waits, so `unstarted` includes it (BUD-5).
    if (reason === "budget-exhausted") this.#rules.budgetSkipped(slot);
    waiters.delete(slot.position);
    emit({ type: "not_dispatched", at, slot: ref, reason });
    return { kind: "not-dispatched", reason };
  }

  /** Stops granting, settles waiters as interrupted and aborts running Attempts (INT-1). */
  interrupt(): void {
    const { stopAll, waiters, running } = this.#d;
    stopAll.abort(new AbortReason("interrupt"));
    for (const position of waiters.positions()) {
      waiters.stop(position, new AbortReason("interrupt"));
    }
    for (const execution of running.values()) execution.abort("interrupt");
  }

  /** The error that ends a stopped slot's wait; a setup failure keeps its message (LIFE-5). */
  #stopError(slot: PlannedSlot, reason: StopReason): Error {
    if (reason !== "setup-failed") return new StopAbort(reason);
    return this.#d.lifecycles[slot.experimentIndex]!.failure ??
      new SetupFailedError("experiment setup failed");
  }

  /** Ends the waits of the waiters a changed stop scope now stops (CHAIN-6, STOP-3). */
  #recheck(scopes: readonly StopScope[]): void {
    for (const scope of scopes) {
      for (const position of this.#d.waiters.inScope(scope)) {
        const slot = this.#plan.slots[position]!;
        const reason = this.#rules.check(slot);
        if (reason) this.#d.waiters.stop(position, this.#stopError(slot, reason));
      }
    }
  }

  #emitStopDiagnostic(d: StopDiagnostic): void {
    const scope = {
      experimentIndex: this.#plan.experiments.findIndex((e) => e.id === d.experimentId),
      evalId: d.evalId,
    };
    this.#d.emit({
      type: "diagnostic",
      at: this.#d.clock.now(),
      level: d.level,
      code: d.code,
      message: d.message,
      experimentId: d.experimentId,
      evalId: d.evalId,
      data: { ...d.data, unstarted: this.#d.waiters.countInScope(scope) },
      persist: true,
    });
  }
}
