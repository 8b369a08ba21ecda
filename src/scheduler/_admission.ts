/**
 * The admission chain of one slot (CHAIN-1 … CHAIN-12): group predecessor, builds, judge
 * precheck, preflight, the experiment permit, the global slot, lifecycle readiness and physical
 * admission, then the Execution of its Attempt. It also parks a slot at its first gate when its
 * chain would begin by waiting there. Stops reach it through {@link StopControl} and the waiter
 * index. The chain is one async function on purpose: its synchronous stretches (first grants in
 * key order, the last preflight with the start) must not gain microtask turns.
 */
import { abortKind, raceAbort } from "../_shared/mod.ts";
import type { AttemptResult, SlotOutcome } from "../_shared/mod.ts";
import type { Plan, PlannedSlot } from "../plan/mod.ts";
import { JudgeFailed, StopAbort } from "./_closing.ts";
import { emptyHeld, Execution, type ExecutionDeps, type Held, releaseHeld } from "./_execution.ts";
import type { StopControl } from "./_stop_control.ts";
import type { WaiterIndex } from "./_waiters.ts";
import type { BuildGate } from "./builds.ts";
import {
  type GateEntry,
  type GateSnapshot,
  type Permit,
  PriorityGate,
  type Ticket,
} from "./gate.ts";
import type { JudgeGate } from "./judge.ts";
import type { ExperimentLifecycle } from "./lifecycle.ts";
import type { PhysicalAdmission } from "./physical.ts";
import type { PriorityKey } from "./priority_queue.ts";
import type { RampController } from "./ramp.ts";
import type { RunPlanOptions } from "./types.ts";

/** The gates and waits {@link Admission} passes a slot through. */
export interface AdmissionDeps {
  readonly cap: number;
  /** The ramp moving the global cap, if any: the gate starts at its cap and feeds it. */
  readonly ramp: RampController | null;
  /** Priority keys by plan position (runnable slots only): ranks in key order (PRIO-1). */
  readonly keys: Int32Array;
  readonly physical: PhysicalAdmission;
  readonly builds: BuildGate;
  readonly judge: JudgeGate;
  readonly lifecycles: readonly ExperimentLifecycle[];
  readonly waiters: WaiterIndex;
  readonly stops: StopControl;
  /** Started Executions by plan position; an Execution leaves it when its Attempt ended. */
  readonly running: Map<number, Execution>;
  /** What every Execution needs, except the global gate, which {@link Admission} owns. */
  readonly execution: Omit<ExecutionDeps, "global" | "ramp">;
  readonly backpressure: RunPlanOptions["backpressure"];
  readonly retain: RunPlanOptions["retain"];
}

/** The in-process gates of one run (global cap, experiment permits) and the chain through them. */
export class Admission {
  readonly global: PriorityGate;
  readonly #plan: Plan;
  readonly #experimentGates = new Map<number, PriorityGate>();
  readonly #d: AdmissionDeps;
  readonly #execution: ExecutionDeps;

  constructor(plan: Plan, deps: AdmissionDeps) {
    this.#plan = plan;
    this.#d = deps;
    const { ramp } = deps;
    this.global = new PriorityGate(ramp?.cap ?? deps.cap);
    if (ramp) {
      // The first grant starts the windows; every grant and release is accounted (RAMP-4, -5).
      this.global.onChange = () => {
        if (!ramp.started && this.global.held > 0) ramp.start();
        ramp.observe();
      };
    }
    this.#execution = { ...deps.execution, global: this.global, ramp };
    for (const e of plan.experiments) {
      if (e.maxConcurrency !== null) {
        this.#experimentGates.set(e.index, new PriorityGate(e.maxConcurrency));
      }
    }
  }

  /** The experiment permits' counters, by experiment id. */
  experimentPermits(): Record<string, GateSnapshot> {
    const permits: Record<string, GateSnapshot> = {};
    for (const [i, gate] of this.#experimentGates) {
      permits[this.#plan.experiments[i]!.id] = gate.snapshot();
    }
    return permits;
  }

  /**
   * Parks `slot` at its first gate when nothing comes before that gate in its chain and no unit
   * is free; `onEntry` receives the permit, or the reason that stopped the wait. False when the
   * slot must start its chain now (also when a stop already ended its wait).
   */
  park(slot: PlannedSlot, onEntry: (slot: PlannedSlot, entry: GateEntry) => void): boolean {
    const { waiters, physical, builds, judge } = this.#d;
    if (!waiters.pending(slot.position)) return false;
    if (physical.groups.predecessor(slot) !== null) return false;
    if (builds.needs(slot) || judge.wait() !== null) return false;
    try {
      this.#preflight(slot);
    } catch {
      return false; // the chain closes the slot with the same check
    }
    const experimentGate = this.#experimentGates.get(slot.experimentIndex);
    const key = this.#d.keys[slot.position]!;
    // A permit's grant takes the slot's place in the global queue in the same step (PRIO-1).
    const parked = experimentGate
      ? experimentGate.park(key, slot, onEntry, this.global)
      : this.global.park(key, slot, onEntry);
    if (parked === null) return false;
    waiters.park(slot.position, parked);
    return true;
  }

  /**
   * The admission chain of one slot through the end of its Attempt (one function: see the module
   * comment); failures that are not a slot's outcome reject. `entry` is the outcome of the wait
   * at the first gate when the slot was parked there (see {@link park}).
   */
  async admit(slot: PlannedSlot, entry?: GateEntry): Promise<SlotOutcome> {
    const key = this.#d.keys[slot.position]!;
    const held: Held = emptyHeld();
    const experimentGate = this.#experimentGates.get(slot.experimentIndex);
    /** The place at the first gate taken when the group predecessor settled. */
    const early: { ticket: Ticket | null } = { ticket: null };
    try {
      if (entry === undefined) {
        // Inline: with nothing to wait for, the gates below are reached synchronously.
        const { groups } = this.#d.physical;
        const previous = groups.predecessor(slot);
        if (previous) {
          groups.onPredecessorSettled(
            slot,
            () => void (early.ticket = this.#enterEarly(slot, key)),
          );
          await raceAbort(previous, this.#stopOf(slot));
        }
        const built = this.#d.builds.wait(slot); // CHAIN-2, holding nothing (W2)
        if (built) await raceAbort(built, this.#stopOf(slot));
        const judged = this.#d.judge.wait();
        if (judged) await raceAbort(judged, this.#stopOf(slot));
        this.#preflight(slot);
      } else if ("stopped" in entry) throw entry.stopped;
      else if (experimentGate) {
        held.experiment = entry.permit;
        held.ticket = entry.next ?? null;
      } else held.slot = entry.permit;
      if (early.ticket !== null) {
        const ticket = early.ticket;
        const permit = await ticket.take(this.#stopOf(slot));
        early.ticket = null;
        if (experimentGate) {
          held.experiment = permit;
          held.ticket = ticket.next;
        } else held.slot = permit;
      }
      // Synchronous when a unit is free: waiters start in key order, so the first grants of a
      // run follow priority (PRIO-1) instead of the order of microtask continuations.
      if (experimentGate && held.experiment === null) {
        held.experiment = experimentGate.tryAcquire() ??
          await experimentGate.acquire(key, {
            signal: this.#stopOf(slot),
            onGrant: () => void (held.ticket = this.global.reserve(key)),
          });
      }
      held.slot ??= held.ticket === null
        ? this.global.tryAcquire() ?? await this.global.acquire(key, { signal: this.#stopOf(slot) })
        : await this.#claim(slot, held);
      await this.#prepare(slot, key, held);
      // CHAIN-7 once more, synchronously with the start: nothing can change in between.
      this.#preflight(slot);
    } catch (error) {
      early.ticket?.cancel();
      releaseHeld(held);
      return this.#d.stops.closeUnstarted(slot, error);
    }
    const { waiters, running, stops } = this.#d;
    waiters.delete(slot.position);
    const execution = new Execution(slot, key, held, this.#execution);
    running.set(slot.position, execution);
    try {
      if (!execution.defersStart) execution.start();
      const result = await execution.run();
      // Aborted before its lease was handed over: it never started, so nothing was reserved.
      if (!execution.started && execution.abortReason !== undefined) {
        return stops.closeUnstarted(slot, unstartedAbort(execution.abortReason));
      }
      this.#ended(execution, result);
      await this.#backpressure();
      return { kind: "executed", result: this.#d.retain?.(result) ?? result };
    } finally {
      running.delete(slot.position);
      // The lane's next slot takes its places before this slot's permit and slot are freed.
      this.#d.physical.groups.settle(slot);
      releaseHeld(held);
    }
  }

  /**
   * Runs preflight, lifecycle readiness and physical admission (exclusive lane, pool lease, machine
   * slot, pacing) with a global slot held (CHAIN-7 … CHAIN-9). Every wait releases the global slot
   * first and re-takes it with the same key after (PRIO-5, CHAIN-13), so no global slot is ever
   * held while waiting for anything else.
   */
  async #prepare(slot: PlannedSlot, key: PriorityKey, held: Held): Promise<void> {
    const lifecycle = this.#d.lifecycles[slot.experimentIndex]!;
    for (;;) {
      this.#preflight(slot);
      const ready = lifecycle.trigger();
      if (ready) {
        yieldSlot(held);
        await raceAbort(ready, this.#stopOf(slot));
      } else {
        let wait = this.#d.physical.next(slot, held);
        if (wait instanceof Promise) wait = await wait;
        if (wait === null) return;
        yieldSlot(held);
        // A lane or pool grant takes the slot's place in the global queue in the same step.
        await wait(key, this.#stopOf(slot), () => void (held.ticket = this.global.reserve(key)));
      }
      held.slot = held.ticket === null
        ? await this.global.acquire(key, { signal: this.#stopOf(slot) })
        : await this.#claim(slot, held);
    }
  }

  /**
   * In the step that settles the slot's group predecessor: takes its place at its first gate when
   * nothing else comes first (CHAIN-1 … CHAIN-6), so that the permit and slot the predecessor
   * frees next rank it with every other waiter (PRIO-1, PRIO-7). Null when it must wait first.
   */
  #enterEarly(slot: PlannedSlot, key: number): Ticket | null {
    const { waiters, builds, judge } = this.#d;
    if (!waiters.has(slot.position) || this.#stopOf(slot).aborted) return null;
    if (builds.needs(slot) || judge.wait() !== null) return null;
    try {
      this.#preflight(slot);
    } catch {
      return null; // the chain closes the slot with the same check
    }
    const experimentGate = this.#experimentGates.get(slot.experimentIndex);
    return experimentGate ? experimentGate.reserve(key, this.global) : this.global.reserve(key);
  }

  /** Claims the global place taken at the previous grant (see {@link Ticket}). */
  async #claim(slot: PlannedSlot, held: Held): Promise<Permit> {
    const permit = await held.ticket!.take(this.#stopOf(slot));
    held.ticket = null;
    return permit;
  }

  /** Ends the Attempt, updates the stops, and stops counting it as running (CHAIN-12). */
  #ended(execution: Execution, result: AttemptResult): void {
    const { slot } = execution;
    execution.end(result);
    this.#d.ramp?.settled(result);
    this.#d.stops.settled(slot, result);
    this.#d.stops.groupSettled(slot);
    this.#d.running.delete(slot.position); // ended: it no longer counts as running
  }

  /**
   * Holds the ended Attempt's global slot while the event consumers catch up. An interrupt ends
   * the wait: the consumers drain on their own before the Invocation finishes.
   */
  async #backpressure(): Promise<void> {
    const wait = this.#d.backpressure?.();
    if (!wait) return;
    const signal = this.#d.stops.signal;
    try {
      await raceAbort(wait, signal);
    } catch (error) {
      if (!signal.aborted) throw error;
    }
  }

  /** Throws when the slot must not start now (CHAIN-4, CHAIN-7). */
  #preflight(slot: PlannedSlot): void {
    const stop = this.#d.stops.check(slot);
    if (stop) throw stop;
    if (this.#d.physical.groups.stoppedIn(slot) !== null) throw new StopAbort("group-unavailable");
    const judge = this.#d.judge;
    const endpoint = judge.failedEndpointOf(slot);
    if (endpoint !== null) throw new JudgeFailed(endpoint, judge.failureOf(endpoint));
  }

  /** The signal that ends `slot`'s current wait when a stop covers it (created on first use). */
  #stopOf(slot: PlannedSlot): AbortSignal {
    return this.#d.waiters.signal(slot.position);
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
