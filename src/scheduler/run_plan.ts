/**
 * `runPlan` (STYLE.md §10.1): admits every runnable slot through the chain of scheduling.md §6 and
 * hands the per-Attempt work to `runAttempt`. Results are kept by plan position.
 */
import { abortKind, AbortReason } from "../_shared/mod.ts";
import { type Clock, sleep, type TimerHandle } from "../_shared/mod.ts";
import type { AttemptResult, RunEventSink, SlotOutcome, SlotRef } from "../_shared/mod.ts";
import type { Random } from "../_shared/mod.ts";
import type { Plan, PlannedSlot } from "../plan/mod.ts";
import { raceAbort, withAbandonment } from "./_race.ts";
import { ATTEMPT_ABORT_GRACE_MS, ATTEMPT_MAX_RETRIES, SEND_MAX_TRIES } from "./constants.ts";
import { sendBackoffMs } from "./retry.ts";
import type { AbandonAttempt, AttemptControl, BackoffRequest, RunAttempt } from "./control.ts";
import { type GateSnapshot, type Permit, PriorityGate } from "./gate.ts";
import { priorityKeys } from "./keys.ts";
import { ExperimentLifecycle, SetupFailedError } from "./lifecycle.ts";
import type { PriorityKey } from "./priority_queue.ts";
import { type StopReason, StopRules } from "./stops.ts";

/** Options of {@link runPlan}. */
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
}

/** The read-only scheduler snapshot tests assert against (scheduling.md conventions). */
export interface SchedulerSnapshot {
  readonly cap: number;
  readonly heldSlots: number;
  readonly globalWaiters: number;
  readonly experimentPermits: Readonly<Record<string, GateSnapshot>>;
  readonly lanes: Readonly<Record<string, GateSnapshot>>;
  readonly running: number;
  readonly backoff: number;
}

/** A stop condition that ended a wait. */
class StopAbort extends Error {
  constructor(readonly reason: StopReason) {
    super(`stopped: ${reason}`);
    this.name = "StopAbort";
  }
}

interface Waiter {
  readonly slot: PlannedSlot;
  readonly controller: AbortController;
}

interface Running {
  readonly slot: PlannedSlot;
  readonly controller: AbortController;
  readonly held: Held;
}

/** Permits a slot holds along the chain (acquired in the order of CHAIN-13). */
interface Held {
  experiment: Permit | null;
  lane: Permit | null;
  slot: Permit | null;
}

function releaseHeld(held: Held): void {
  held.slot?.release();
  held.lane?.release();
  held.experiment?.release();
  held.slot = held.lane = held.experiment = null;
}

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
  readonly #runAttempt: RunAttempt;
  readonly #o: RunPlanOptions;
  readonly #global: PriorityGate;
  readonly #experimentGates = new Map<number, PriorityGate>();
  readonly #lanes = new Map<string, PriorityGate>();
  readonly #keys: Map<number, PriorityKey>;
  readonly #stops: StopRules;
  readonly #lifecycles: ExperimentLifecycle[];
  readonly #outcomes: (SlotOutcome | undefined)[];
  readonly #waiters = new Map<number, Waiter>();
  readonly #running = new Map<number, Running>();
  readonly #remaining: number[];
  readonly #cleanups: Promise<void>[] = [];
  #backoff = 0;

  constructor(plan: Plan, runAttempt: RunAttempt, options: RunPlanOptions) {
    this.#plan = plan;
    this.#runAttempt = runAttempt;
    this.#o = options;
    this.#global = new PriorityGate(options.cap);
    this.#keys = priorityKeys(plan, options.cap);
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
      if (e.laneKey !== null && !this.#lanes.has(e.laneKey)) {
        this.#lanes.set(e.laneKey, new PriorityGate(1));
      }
    }
    this.#lifecycles = plan.experiments.map((e) =>
      new ExperimentLifecycle(e, {
        clock: options.clock,
        emit: options.onEvent,
        signal: options.signal,
        selectedEvalIds: e.evals.map((ev) => ev.id),
      })
    );
  }

  /** The current gate counters. */
  snapshot(): SchedulerSnapshot {
    const experimentPermits: Record<string, GateSnapshot> = {};
    for (const [i, gate] of this.#experimentGates) {
      experimentPermits[this.#plan.experiments[i]!.id] = gate.snapshot();
    }
    const lanes: Record<string, GateSnapshot> = {};
    for (const [key, gate] of this.#lanes) lanes[key] = gate.snapshot();
    return {
      cap: this.#global.capacity,
      heldSlots: this.#global.held,
      globalWaiters: this.#global.waiting,
      experimentPermits,
      lanes,
      running: this.#running.size,
      backoff: this.#backoff,
    };
  }

  /** Admits and runs every runnable slot; resolves with one outcome per planned slot. */
  async run(): Promise<SlotOutcome[]> {
    const onInterrupt = () => this.#interrupt();
    this.#o.signal.addEventListener("abort", onInterrupt, { once: true });
    try {
      const runnable = this.#plan.slots.filter((s) => s.carry.action === "run");
      for (const slot of runnable) {
        this.#waiters.set(slot.position, { slot, controller: new AbortController() });
      }
      if (this.#o.signal.aborted) this.#interrupt();
      await settleAll(runnable.map((slot) => () => this.#runSlot(slot)));
      for (const lifecycle of this.#lifecycles) this.#cleanups.push(lifecycle.cleanup());
      await settleAll(this.#cleanups.map((p) => () => p));
      return this.#outcomes.map((outcome, i) => {
        if (!outcome) throw new Error(`Scheduler left plan slot ${i} without an outcome`);
        return outcome;
      });
    } finally {
      this.#o.signal.removeEventListener("abort", onInterrupt);
    }
  }

  async #runSlot(slot: PlannedSlot): Promise<void> {
    try {
      this.#outcomes[slot.position] = await this.#admit(slot);
    } finally {
      this.#waiters.delete(slot.position);
      if (--this.#remaining[slot.experimentIndex]! === 0) {
        this.#cleanups.push(this.#lifecycles[slot.experimentIndex]!.cleanup());
      }
    }
  }

  async #admit(slot: PlannedSlot): Promise<SlotOutcome> {
    const stop = this.#waiters.get(slot.position)!.controller.signal;
    const key = this.#keys.get(slot.position)!;
    const held: Held = { experiment: null, lane: null, slot: null };
    try {
      this.#throwIfStopped(slot);
      const experimentGate = this.#experimentGates.get(slot.experimentIndex);
      if (experimentGate) held.experiment = await experimentGate.acquire(key, { signal: stop });
      held.slot = await this.#global.acquire(key, { signal: stop });
      await this.#prepare(slot, key, held, stop);
    } catch (error) {
      releaseHeld(held);
      return this.#closeUnstarted(slot, error);
    }
    this.#waiters.delete(slot.position);
    try {
      return { kind: "executed", result: await this.#execute(slot, key, held) };
    } finally {
      releaseHeld(held);
    }
  }

  /**
   * CHAIN-7 … CHAIN-9 with a global slot held: preflight, lifecycle readiness and the exclusive
   * lane. Every wait releases the global slot first and re-takes it with the same key after.
   */
  async #prepare(
    slot: PlannedSlot,
    key: PriorityKey,
    held: Held,
    stop: AbortSignal,
  ): Promise<void> {
    const lifecycle = this.#lifecycles[slot.experimentIndex]!;
    const lane = this.#lanes.get(this.#plan.experiments[slot.experimentIndex]!.laneKey ?? "");
    for (;;) {
      this.#throwIfStopped(slot);
      if (!lifecycle.ready) {
        held.slot?.release();
        held.slot = null;
        await raceAbort(lifecycle.start(), stop);
      } else if (lane && !held.lane) {
        held.lane = lane.tryAcquire();
        if (held.lane) continue;
        held.slot?.release();
        held.slot = null;
        held.lane = await lane.acquire(key, { signal: stop });
      } else {
        return;
      }
      held.slot = await this.#global.acquire(key, { signal: stop });
    }
  }

  #throwIfStopped(slot: PlannedSlot): void {
    if (this.#o.signal.aborted) throw new AbortReason("interrupt");
    const reason = this.#stops.check(slot);
    if (reason) throw new StopAbort(reason);
  }

  #closeUnstarted(slot: PlannedSlot, error: unknown): SlotOutcome {
    const at = this.#o.clock.now();
    const ref = slotRef(slot);
    if (
      error instanceof SetupFailedError ||
      (error instanceof StopAbort && error.reason === "setup-failed")
    ) {
      this.#stops.setupFailed(slot.experimentId);
      this.#recheckWaiters(slot.experimentIndex);
      const message = error instanceof SetupFailedError ? error.message : "experiment setup failed";
      this.#o.onEvent({
        type: "slot_errored",
        at,
        slot: ref,
        code: "experiment-setup-failed",
        message,
      });
      return { kind: "errored-undispatched", code: "experiment-setup-failed", message };
    }
    const reason = error instanceof StopAbort
      ? error.reason as Exclude<StopReason, "setup-failed">
      : abortKind(error) === "interrupt"
      ? "interrupted"
      : undefined;
    if (reason === undefined) throw error;
    if (reason === "budget-exhausted") this.#stops.budgetSkipped(slot);
    this.#o.onEvent({ type: "not_dispatched", at, slot: ref, reason });
    return { kind: "not-dispatched", reason };
  }

  async #execute(slot: PlannedSlot, key: PriorityKey, held: Held): Promise<AttemptResult> {
    const { clock, onEvent } = this.#o;
    const controller = new AbortController();
    const running: Running = { slot, controller, held };
    this.#running.set(slot.position, running);
    const attemptId = this.#o.random.uuid();
    const startedAt = clock.now();
    const deadline = slot.timeoutMs === null ? null : startedAt + slot.timeoutMs;
    onEvent({ type: "attempt_start", at: startedAt, slot: slotRef(slot), attemptId });
    let timer: TimerHandle | undefined;
    if (slot.timeoutMs !== null) {
      timer = clock.setTimeout(() => controller.abort(new AbortReason("timeout")), slot.timeoutMs);
    }
    if (this.#o.signal.aborted) controller.abort(new AbortReason("interrupt"));
    const control: AttemptControl = {
      signal: controller.signal,
      attemptId,
      startedAt,
      deadline,
      limits: { sendMaxTries: SEND_MAX_TRIES, attemptMaxRetries: ATTEMPT_MAX_RETRIES },
      backoff: (request) => this.#backoffSleep(running, key, request),
      activity: (text) => onEvent({ type: "activity", at: clock.now(), slot: slotRef(slot), text }),
    };
    try {
      const result = await withAbandonment(this.#runAttempt(slot, control), controller.signal, {
        clock,
        graceMs: ATTEMPT_ABORT_GRACE_MS,
        abandoned: () =>
          this.#o.abandon(slot, {
            attemptId,
            startedAt,
            endedAt: clock.now(),
            kind: abortKind(controller.signal.reason) ?? "timeout",
          }),
      });
      onEvent({ type: "attempt_end", at: clock.now(), slot: slotRef(slot), result });
      this.#settled(slot, result);
      return result;
    } finally {
      if (timer !== undefined) clock.clearTimeout(timer);
      this.#running.delete(slot.position);
    }
  }

  async #backoffSleep(running: Running, key: PriorityKey, request: BackoffRequest): Promise<void> {
    const { clock, onEvent } = this.#o;
    const { signal } = running.controller;
    const ref = slotRef(running.slot);
    const delayMs = sendBackoffMs(request.retry - 1, this.#o.random.next(), request.retryAfterMs);
    const event = {
      slot: ref,
      reason: request.reason,
      retry: request.retry,
      maxRetries: SEND_MAX_TRIES,
      delayMs,
    };
    onEvent({ type: "backoff", at: clock.now(), state: "sleeping", ...event });
    running.held.slot?.release();
    running.held.slot = null;
    this.#backoff++;
    try {
      await sleep(clock, delayMs, { signal });
      running.held.slot = await this.#global.acquire(key, { signal });
      onEvent({ type: "backoff", at: clock.now(), state: "resumed", ...event });
    } finally {
      this.#backoff--;
    }
  }

  #settled(slot: PlannedSlot, result: AttemptResult): void {
    this.#stops.settled(slot, result);
    const experiment = this.#plan.experiments[slot.experimentIndex]!;
    if (result.verdict === "passed" && experiment.earlyExit && slot.kind === "pass") {
      for (const other of this.#running.values()) {
        if (
          other.slot !== slot && other.slot.experimentId === slot.experimentId &&
          other.slot.evalId === slot.evalId
        ) {
          other.controller.abort(new AbortReason("early-exit"));
        }
      }
    }
    this.#recheckWaiters(slot.experimentIndex);
  }

  /** Ends the waits of slots that a stop condition now applies to (CHAIN-6). */
  #recheckWaiters(experimentIndex: number): void {
    for (const waiter of this.#waiters.values()) {
      if (waiter.slot.experimentIndex !== experimentIndex) continue;
      const reason = this.#stops.check(waiter.slot);
      if (reason) waiter.controller.abort(new StopAbort(reason));
    }
  }

  #interrupt(): void {
    for (const waiter of this.#waiters.values()) {
      waiter.controller.abort(new AbortReason("interrupt"));
    }
    for (const running of this.#running.values()) {
      running.controller.abort(new AbortReason("interrupt"));
    }
  }

  #emitStopDiagnostic(
    d: {
      level: "warning" | "error";
      code: string;
      message: string;
      experimentId: string;
      evalId: string | null;
      data: Record<string, string | number | null>;
    },
  ): void {
    const unstarted =
      [...this.#waiters.values()].filter((w) =>
        w.slot.experimentId === d.experimentId && (d.evalId === null || w.slot.evalId === d.evalId)
      ).length;
    this.#o.onEvent({
      type: "diagnostic",
      at: this.#o.clock.now(),
      level: d.level,
      code: d.code,
      message: d.message,
      experimentId: d.experimentId,
      evalId: d.evalId,
      data: { ...d.data, unstarted },
      persist: true,
    });
  }
}

function slotRef(slot: PlannedSlot): SlotRef {
  return {
    position: slot.position,
    experimentId: slot.experimentId,
    evalId: slot.evalId,
    ordinal: slot.ordinal,
  };
}

/**
 * Starts every task and resolves when all have settled; rejects with the first failure after all
 * settled. Tasks here are lightweight waiters (CHAIN-0), not bounded work.
 */
function settleAll(tasks: readonly (() => Promise<void>)[]): Promise<void> {
  return new Promise((resolve, reject) => {
    let left = tasks.length;
    let failure: { error: unknown } | undefined;
    if (left === 0) return resolve();
    const done = () => {
      if (--left > 0) return;
      if (failure) reject(failure.error);
      else resolve();
    };
    for (const task of tasks) {
      task().then(done, (error) => {
        failure ??= { error };
        done();
      });
    }
  });
}
