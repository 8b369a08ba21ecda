/**
 * `runPlan` (STYLE.md §10.1): admits every runnable slot through the chain of scheduling.md §6 and
 * hands the per-Attempt work to `runAttempt`. Results are kept by plan position.
 */
import { abortKind, AbortReason, onAbort, raceAbort } from "../_shared/mod.ts";
import type { AttemptResult, SlotOutcome } from "../_shared/mod.ts";
import type { Plan, PlannedSlot } from "../plan/mod.ts";
import {
  emptyHeld,
  Execution,
  type ExecutionDeps,
  type Held,
  releaseHeld,
  slotRef,
} from "./_execution.ts";
import {
  BuildFailed,
  JudgeFailed,
  notDispatchedReason,
  StopAbort,
  undispatchedError,
} from "./_closing.ts";
import { SerialEvents } from "./_events.ts";
import { settleAll } from "./_race.ts";
import { WaiterIndex } from "./_waiters.ts";
import { buildFailureDiagnostic, BuildGate } from "./builds.ts";
import { exclusiveSerialWarnings } from "./cap.ts";
import type { RunAttempt } from "./control.ts";
import { type GateEntry, type GateSnapshot, PriorityGate } from "./gate.ts";
import { JudgeGate } from "./judge.ts";
import { priorityOrder } from "./keys.ts";
import { type ExperimentLifecycle, SetupFailedError } from "./lifecycle.ts";
import { createLifecycles, noteFreshCleanup } from "./_lifecycles.ts";
import type { StartupRecovery } from "./orphan_recovery.ts";
import { PhysicalAdmission } from "./physical.ts";
import { groupDiagnostic } from "./group_lanes.ts";
import type { PriorityKey } from "./priority_queue.ts";
import { type StopDiagnostic, type StopReason, StopRules, type StopScope } from "./stops.ts";
import type { RunPlanOptions, SchedulerSnapshot } from "./types.ts";

/** Runs a plan; see {@link createScheduler} for snapshots. */
export function runPlan(
  plan: Plan,
  runAttempt: RunAttempt,
  options: RunPlanOptions,
): Promise<SlotOutcome[]> {
  return createScheduler(plan, runAttempt, options).run();
}

/** Creates a scheduler whose state tests can inspect while it runs. */
export function createScheduler(
  plan: Plan,
  runAttempt: RunAttempt,
  options: RunPlanOptions,
): Scheduler {
  return new Scheduler(plan, runAttempt, options);
}

/** One Invocation's in-process gates and the admission chain. */
export class Scheduler {
  readonly #plan: Plan;
  readonly #o: RunPlanOptions;
  readonly #global: PriorityGate;
  readonly #experimentGates = new Map<number, PriorityGate>();
  readonly #physical: PhysicalAdmission;
  /** Priority keys by plan position (runnable slots only): ranks in key order (PRIO-1). */
  readonly #keys: Int32Array;
  readonly #stops: StopRules;
  readonly #lifecycles: ExperimentLifecycle[];
  readonly #recovery: StartupRecovery;
  readonly #judge: JudgeGate;
  readonly #builds: BuildGate;
  /** The reporter's callbacks, one at a time (ORD-3). */
  readonly #events: SerialEvents;
  readonly #execution: ExecutionDeps;
  readonly #outcomes: (SlotOutcome | undefined)[];
  /** Runnable slots in key order; registered as waiters when the run starts. */
  readonly #runnable: readonly PlannedSlot[];
  readonly #waiters: WaiterIndex;
  readonly #running = new Map<number, Execution>();
  readonly #remaining: number[];
  readonly #cleanups: Promise<void>[] = [];
  /** Aborted on interrupt and on internal errors: hooks and probes see it. */
  readonly #stopAll = new AbortController();
  #failure: { error: unknown } | undefined;

  constructor(plan: Plan, runAttempt: RunAttempt, options: RunPlanOptions) {
    this.#plan = plan;
    this.#events = new SerialEvents(options.onEvent, (error) => this.#fail(error));
    this.#o = { ...options, onEvent: this.#events.sink };
    this.#global = new PriorityGate(options.cap);
    const { order, rank } = priorityOrder(plan, options.cap);
    this.#keys = rank;
    this.#runnable = order;
    this.#waiters = new WaiterIndex(plan.slots, { order, rank }, plan.experiments.length);
    this.#stops = new StopRules(plan);
    this.#stops.onDiagnostic = (d) => this.#emitStopDiagnostic(d);
    this.#outcomes = plan.slots.map((s) =>
      s.carry.action === "carry" ? { kind: "carried" } : undefined
    );
    this.#remaining = plan.experiments.map((e) => e.runnable);
    for (const e of plan.experiments) {
      if (e.maxConcurrency !== null) {
        this.#experimentGates.set(e.index, new PriorityGate(e.maxConcurrency));
      }
    }
    const signal = this.#stopAll.signal;
    const { clock, onEvent: emit } = this.#o;
    this.#physical = new PhysicalAdmission(plan, {
      gmax: options.cap,
      clock,
      emit,
      ...(options.sandbox ? { options: options.sandbox } : {}),
    });
    const built = createLifecycles(plan, {
      options: this.#o,
      signal,
      onSetupFailed: (index) => this.#recheck([this.#stops.setupFailed(index)]),
    });
    this.#lifecycles = built.lifecycles;
    this.#recovery = built.recovery;
    this.#judge = new JudgeGate(plan, options.judge, { clock, signal, emit });
    this.#builds = new BuildGate(options.builds, { clock, signal });
    this.#execution = {
      ...this.#o,
      emit,
      runAttempt,
      global: this.#global,
      physical: this.#physical,
    };
  }

  /** The current gate counters. */
  snapshot(): SchedulerSnapshot {
    const experimentPermits: Record<string, GateSnapshot> = {};
    for (const [i, gate] of this.#experimentGates) {
      experimentPermits[this.#plan.experiments[i]!.id] = gate.snapshot();
    }
    let backoff = 0;
    let running = 0;
    for (const execution of this.#running.values()) {
      if (execution.inBackoff) backoff++;
      if (execution.started) running++;
    }
    return {
      cap: this.#global.capacity,
      heldSlots: this.#global.held,
      globalWaiters: this.#global.waiting,
      experimentPermits,
      lanes: this.#physical.laneSnapshot(),
      machineSlots: this.#physical.machine.snapshot(),
      ramp: null,
      running,
      backoff,
      queued: this.#waiters.size,
      judgePrecheck: this.#judge.state,
      builds: this.#builds.snapshot(),
    };
  }

  /**
   * Admits and runs every runnable slot, then runs every triggered cleanup chain; resolves with
   * one outcome per planned slot. An internal error interrupts the run, lets cleanup finish, and
   * then rejects with that error (INT-3).
   */
  async run(): Promise<SlotOutcome[]> {
    // Relays the Invocation's interrupt into the run's own stops; removed when the run ends.
    using _interrupt = onAbort(this.#o.signal, () => this.#interrupt());
    const runnable = this.#runnable;
    this.#waiters.open();
    const at = this.#o.clock.now();
    for (const warning of exclusiveSerialWarnings(this.#plan, { gmax: this.#o.cap, at })) {
      this.#o.onEvent(warning);
    }
    this.#judge.start();
    this.#builds.start(runnable);
    if (this.#o.signal.aborted) this.#interrupt();
    // ORPH-3: orphan recovery starts with the Invocation, also for Experiments that run nothing.
    if (!this.#stopAll.signal.aborted) this.#recovery.start();
    await this.#admitAll(runnable);
    for (const lifecycle of this.#lifecycles) this.#cleanups.push(lifecycle.cleanup());
    await settleAll(this.#cleanups.map((p) => () => p));
    await this.#recovery.settled(); // ORPH-5
    await this.#builds.settled();
    await this.#events.drained(); // ORD-3: the last callback settled before the run ends
    if (this.#failure) throw this.#failure.error;
    return this.#outcomes.map((outcome, i) => {
      if (!outcome) throw new Error(`Scheduler left plan slot ${i} without an outcome`);
      return outcome;
    });
  }

  /**
   * Starts the admission chain of every runnable slot, in key order; resolves once all settled.
   * A slot whose chain would begin by waiting at its first gate (its experiment permit, else the
   * global slot) is parked there as a plain queue entry, and its chain starts at the grant, or at
   * a stop of its wait: a run of 10,000 slots keeps 10,000 queue entries instead of 10,000
   * suspended chains. Grants follow the same keys as if every chain waited itself (PRIO-1), and
   * the chain resumes in a microtask, as after an awaited grant.
   */
  #admitAll(runnable: readonly PlannedSlot[]): Promise<void> {
    return new Promise((resolve) => {
      let left = runnable.length;
      if (left === 0) return resolve();
      const run = (slot: PlannedSlot, entry?: GateEntry) => {
        // #runSlot never rejects: failures go to #fail.
        void this.#runSlot(slot, entry).then(() => {
          if (--left === 0) resolve();
        });
      };
      // One callback for every parked slot: nothing per slot until its wait ends.
      const onEntry = (slot: PlannedSlot, entry: GateEntry) => {
        this.#waiters.unpark(slot.position);
        queueMicrotask(() => run(slot, entry));
      };
      for (const slot of runnable) {
        if (!this.#park(slot, onEntry)) run(slot);
      }
    });
  }

  /**
   * Parks `slot` at its first gate when nothing comes before that gate in its chain and no unit
   * is free; `onEntry` receives the permit, or the reason that stopped the wait. False when the
   * slot must start its chain now (also when a stop already ended its wait).
   */
  #park(slot: PlannedSlot, onEntry: (slot: PlannedSlot, entry: GateEntry) => void): boolean {
    if (!this.#waiters.pending(slot.position)) return false;
    if (this.#physical.groups.predecessor(slot) !== null) return false;
    if (this.#builds.needs(slot) || this.#judge.wait() !== null) return false;
    try {
      this.#preflight(slot);
    } catch {
      return false; // the chain closes the slot with the same check
    }
    const gate = this.#experimentGates.get(slot.experimentIndex) ?? this.#global;
    const parked = gate.park(this.#keys[slot.position]!, slot, onEntry);
    if (parked === null) return false;
    this.#waiters.park(slot.position, parked);
    return true;
  }

  /** The signal that ends `slot`'s current wait when a stop covers it (created on first use). */
  #stopOf(slot: PlannedSlot): AbortSignal {
    return this.#waiters.signal(slot.position);
  }

  async #runSlot(slot: PlannedSlot, entry?: GateEntry): Promise<void> {
    try {
      this.#outcomes[slot.position] = await this.#admit(slot, entry);
    } catch (error) {
      this.#fail(error);
    } finally {
      this.#waiters.delete(slot.position);
      this.#physical.groups.settle(slot);
      if (--this.#remaining[slot.experimentIndex]! === 0) {
        this.#cleanups.push(this.#lifecycles[slot.experimentIndex]!.cleanup());
      }
    }
  }

  /**
   * The admission chain of one slot (CHAIN-1 … CHAIN-12). `entry` is the outcome of the wait at
   * the first gate when the slot was parked there (see {@link #admitAll}).
   */
  async #admit(slot: PlannedSlot, entry?: GateEntry): Promise<SlotOutcome> {
    const key = this.#keys[slot.position]!;
    const held: Held = emptyHeld();
    const experimentGate = this.#experimentGates.get(slot.experimentIndex);
    try {
      if (entry === undefined) {
        // Inline: with nothing to wait for, the gates below are reached synchronously.
        const previous = this.#physical.groups.predecessor(slot);
        if (previous) await raceAbort(previous, this.#stopOf(slot));
        const built = this.#builds.wait(slot); // CHAIN-2, holding nothing (W2)
        if (built) await raceAbort(built, this.#stopOf(slot));
        const judged = this.#judge.wait();
        if (judged) await raceAbort(judged, this.#stopOf(slot));
        this.#preflight(slot);
      } else if ("stopped" in entry) throw entry.stopped;
      else if (experimentGate) held.experiment = entry.permit;
      else held.slot = entry.permit;
      // Synchronous when a unit is free: waiters start in key order, so the first grants of a
      // run follow priority (PRIO-1) instead of the order of microtask continuations.
      if (experimentGate && held.experiment === null) {
        held.experiment = experimentGate.tryAcquire() ??
          await experimentGate.acquire(key, { signal: this.#stopOf(slot) });
      }
      held.slot ??= this.#global.tryAcquire() ??
        await this.#global.acquire(key, { signal: this.#stopOf(slot) });
      await this.#prepare(slot, key, held);
      // CHAIN-7 once more, synchronously with the start: nothing can change in between.
      this.#preflight(slot);
    } catch (error) {
      releaseHeld(held);
      return this.#closeUnstarted(slot, error);
    }
    this.#waiters.delete(slot.position);
    const execution = new Execution(slot, key, held, this.#execution);
    this.#running.set(slot.position, execution);
    try {
      if (!execution.defersStart) execution.start();
      const result = await execution.run();
      // Aborted before its lease was handed over: it never started, so nothing was reserved.
      if (!execution.started && execution.abortReason !== undefined) {
        return this.#closeUnstarted(slot, unstartedAbort(execution.abortReason));
      }
      execution.end(result);
      this.#settled(slot, result);
      this.#groupSettled(slot);
      this.#running.delete(slot.position); // ended: it no longer counts as running
      await this.#backpressure();
      return { kind: "executed", result: this.#o.retain?.(result) ?? result };
    } finally {
      this.#running.delete(slot.position);
      releaseHeld(held);
    }
  }

  /**
   * CHAIN-7 … CHAIN-9 with a global slot held: preflight, lifecycle readiness and physical
   * admission (exclusive lane, pool lease, machine slot, pacing). Every wait releases the global
   * slot first and re-takes it with the same key after (PRIO-5, CHAIN-13), so no global slot is
   * ever held while waiting for anything else.
   */
  async #prepare(slot: PlannedSlot, key: PriorityKey, held: Held): Promise<void> {
    const lifecycle = this.#lifecycles[slot.experimentIndex]!;
    for (;;) {
      this.#preflight(slot);
      const ready = lifecycle.trigger();
      if (ready) {
        yieldSlot(held);
        await raceAbort(ready, this.#stopOf(slot));
      } else {
        let wait = this.#physical.next(slot, held);
        if (wait instanceof Promise) wait = await wait;
        if (wait === null) return;
        yieldSlot(held);
        await wait(key, this.#stopOf(slot));
      }
      held.slot = await this.#global.acquire(key, { signal: this.#stopOf(slot) });
    }
  }

  /**
   * Holds the ended Attempt's global slot while the event consumers catch up. An interrupt ends
   * the wait: the consumers drain on their own before the Invocation finishes.
   */
  async #backpressure(): Promise<void> {
    const wait = this.#o.backpressure?.();
    if (!wait) return;
    try {
      await raceAbort(wait, this.#stopAll.signal);
    } catch (error) {
      if (!this.#stopAll.signal.aborted) throw error;
    }
  }

  /** GRP-6 when a group slot settles: a replacement warning, or the lane stops. */
  #groupSettled(slot: PlannedSlot): void {
    const groups = this.#physical.groups;
    const decision = groups.decide(slot);
    const lane = groups.describe(slot);
    if (decision === null || lane === undefined) return;
    const unstarted = decision.action === "stop"
      ? groups.positionsOf(slot).filter((p) => this.#waiters.has(p)).length
      : 0;
    this.#o.onEvent(groupDiagnostic(decision, lane, { unstarted, at: this.#o.clock.now() }));
  }

  /** CHAIN-4 / CHAIN-7: throws when the slot must not start now. */
  #preflight(slot: PlannedSlot): void {
    if (this.#stopAll.signal.aborted) throw new AbortReason("interrupt");
    const reason = this.#stops.check(slot);
    if (reason) throw this.#stopError(slot, reason);
    if (this.#physical.groups.stoppedIn(slot) !== null) throw new StopAbort("group-unavailable");
    const endpoint = this.#judge.failedEndpointOf(slot);
    if (endpoint !== null) throw new JudgeFailed(endpoint, this.#judge.failureOf(endpoint));
  }

  /** The error that ends a stopped slot's wait; a setup failure keeps its message (LIFE-5). */
  #stopError(slot: PlannedSlot, reason: StopReason): Error {
    if (reason !== "setup-failed") return new StopAbort(reason);
    return this.#lifecycles[slot.experimentIndex]!.failure ??
      new SetupFailedError("experiment setup failed");
  }

  /** Closes a slot that never started: errored without dispatch, or not dispatched (STOP-5). */
  #closeUnstarted(slot: PlannedSlot, error: unknown): SlotOutcome {
    const at = this.#o.clock.now();
    const ref = slotRef(slot);
    const errored = undispatchedError(error);
    if (errored) {
      this.#waiters.delete(slot.position);
      this.#o.onEvent({ type: "slot_errored", at, slot: ref, ...errored });
      if (error instanceof BuildFailed) this.#o.onEvent(buildFailureDiagnostic(slot, error, at));
      return { kind: "errored-undispatched", code: errored.code, message: errored.message };
    }
    const reason = notDispatchedReason(error);
    if (reason === undefined) throw error;
    // Counted while this slot still waits, so `unstarted` includes it (BUD-5).
    if (reason === "budget-exhausted") this.#stops.budgetSkipped(slot);
    this.#waiters.delete(slot.position);
    this.#o.onEvent({ type: "not_dispatched", at, slot: ref, reason });
    return { kind: "not-dispatched", reason };
  }

  /** CHAIN-12, second half: stop state, early-exit siblings, waiters a stop now covers. */
  #settled(slot: PlannedSlot, result: AttemptResult): void {
    const scopes = this.#stops.settled(slot, result);
    noteFreshCleanup(this.#lifecycles[slot.experimentIndex]!, result);
    const experiment = this.#plan.experiments[slot.experimentIndex]!;
    if (result.verdict === "passed" && experiment.earlyExit && slot.kind === "pass") {
      for (const other of this.#running.values()) {
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

  /** Ends the waits of the waiters a changed stop scope now stops (CHAIN-6, STOP-3). */
  #recheck(scopes: readonly StopScope[]): void {
    for (const scope of scopes) {
      for (const position of this.#waiters.inScope(scope)) {
        const slot = this.#plan.slots[position]!;
        const reason = this.#stops.check(slot);
        if (reason) this.#waiters.stop(position, this.#stopError(slot, reason));
      }
    }
  }

  /** An internal error (INT-3): the run interrupts, lets cleanup finish, then rejects with it. */
  #fail(error: unknown): void {
    this.#failure ??= { error };
    this.#interrupt();
  }

  /** INT-1: no further grants; waiters settle interrupted; running Attempts are aborted. */
  #interrupt(): void {
    this.#stopAll.abort(new AbortReason("interrupt"));
    for (const position of this.#waiters.positions()) {
      this.#waiters.stop(position, new AbortReason("interrupt"));
    }
    for (const execution of this.#running.values()) execution.abort("interrupt");
  }

  #emitStopDiagnostic(d: StopDiagnostic): void {
    const scope = {
      experimentIndex: this.#plan.experiments.findIndex((e) => e.id === d.experimentId),
      evalId: d.evalId,
    };
    this.#o.onEvent({
      type: "diagnostic",
      at: this.#o.clock.now(),
      level: d.level,
      code: d.code,
      message: d.message,
      experimentId: d.experimentId,
      evalId: d.evalId,
      data: { ...d.data, unstarted: this.#waiters.countInScope(scope) },
      persist: true,
    });
  }
}

/** The stop that closes an Attempt aborted before it started (early exit, interrupt). */
function unstartedAbort(reason: unknown): unknown {
  return abortKind(reason) === "early-exit" ? new StopAbort("early-exit") : reason;
}

/** Gives the global slot back before a wait (CHAIN-8, CHAIN-9). */
function yieldSlot(held: Held): void {
  held.slot?.release();
  held.slot = null;
}
