/**
 * `runPlan` (STYLE.md §10.1): admits every runnable slot through the chain of scheduling.md §6 and
 * hands the per-Attempt work to `runAttempt`. Results are kept by plan position. Its parts live
 * beside it: `_run_parts.ts` wires them, `_admission.ts` holds the gates and the chain of one
 * slot, `_parking.ts` starts every chain (parked at its first gate), `_stop_control.ts` owns
 * stops, early exit and interrupt.
 */
import { onAbort } from "../_shared/mod.ts";
import type { SlotOutcome } from "../_shared/mod.ts";
import type { Plan, PlannedSlot } from "../plan/mod.ts";
import { SerialEvents } from "./_events.ts";
import { admitAll } from "./_parking.ts";
import { settleAll } from "./_race.ts";
import { createRunParts, type RunParts } from "./_run_parts.ts";
import { exclusiveSerialWarnings } from "./cap.ts";
import type { RunAttempt } from "./control.ts";
import type { GateEntry } from "./gate.ts";
import type { RunPlanOptions, SchedulerSnapshot } from "./types.ts";

const CARRIED: SlotOutcome = Object.freeze({ kind: "carried" });

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
  /** The reporter's callbacks, one at a time (ORD-3). */
  readonly #events: SerialEvents;
  readonly #p: RunParts;
  /** Outcomes by plan position, unless `onOutcome` takes them. */
  readonly #outcomes: (SlotOutcome | undefined)[];
  /** 1 where the slot's outcome is final. */
  readonly #settled: Uint8Array;
  /** Runnable slots left per experiment: its cleanup chain starts when none is left. */
  readonly #remaining: number[];
  readonly #cleanups: Promise<void>[] = [];
  #failure: { error: unknown } | undefined;

  constructor(plan: Plan, runAttempt: RunAttempt, options: RunPlanOptions) {
    this.#plan = plan;
    this.#events = new SerialEvents(options.onEvent, (error) => this.#fail(error));
    this.#o = { ...options, onEvent: this.#events.sink };
    this.#p = createRunParts(plan, runAttempt, this.#o);
    this.#outcomes = options.onOutcome ? [] : plan.slots.map(() => undefined);
    this.#settled = new Uint8Array(plan.slots.length);
    this.#remaining = plan.experiments.map((e) => e.runnable);
  }

  /** The current gate counters. */
  snapshot(): SchedulerSnapshot {
    let backoff = 0;
    let running = 0;
    for (const execution of this.#p.running.values()) {
      if (execution.inBackoff) backoff++;
      if (execution.started) running++;
    }
    const global = this.#p.admission.global;
    return {
      cap: global.capacity,
      heldSlots: global.held,
      globalWaiters: global.waiting,
      experimentPermits: this.#p.admission.experimentPermits(),
      lanes: this.#p.physical.laneSnapshot(),
      machineSlots: this.#p.physical.machine.snapshot(),
      ramp: this.#p.ramp?.status() ?? null,
      running,
      backoff,
      queued: this.#p.waiters.size,
      judgePrecheck: this.#p.judge.state,
      builds: this.#p.builds.snapshot(),
    };
  }

  /**
   * Admits and runs every runnable slot, then runs every triggered cleanup chain; resolves with
   * one outcome per planned slot. An internal error interrupts the run, lets cleanup finish, and
   * then rejects with that error (INT-3).
   */
  async run(): Promise<SlotOutcome[]> {
    // Relays the Invocation's interrupt into the run's own stops; removed when the run ends.
    using _interrupt = onAbort(this.#o.signal, () => this.#p.stops.interrupt());
    for (const slot of this.#plan.slots) {
      if (slot.carry.action === "carry") this.#settle(slot, CARRIED);
    }
    this.#open();
    try {
      await admitAll(this.#p.runnable, {
        waiters: this.#p.waiters,
        park: (slot, onEntry) => this.#p.admission.park(slot, onEntry),
        run: (slot, entry) => this.#runSlot(slot, entry),
      });
    } finally {
      this.#p.ramp?.stop(); // every Attempt settled: no window is left to judge
    }
    await this.#close();
    if (this.#failure) throw this.#failure.error;
    const left = this.#settled.indexOf(0);
    if (left >= 0) throw new Error(`Scheduler left plan slot ${left} without an outcome`);
    return this.#outcomes as SlotOutcome[];
  }

  /** Records a final outcome: kept by position, or handed to `onOutcome`. */
  #settle(slot: PlannedSlot, outcome: SlotOutcome): void {
    this.#settled[slot.position] = 1;
    if (this.#o.onOutcome) this.#o.onOutcome(slot, outcome);
    else this.#outcomes[slot.position] = outcome;
  }

  /** Registers the waiters and starts what runs beside the chains: warnings, judge, builds. */
  #open(): void {
    this.#p.waiters.open();
    const at = this.#o.clock.now();
    const gmax = this.#o.ramp?.settings.to ?? this.#o.cap; // LANE-4: a ramp's ceiling
    const ramp = this.#o.ramp !== undefined;
    for (
      const warning of exclusiveSerialWarnings(this.#plan, {
        gmax,
        at,
        ramp,
        ...(this.#o.capSource ? { capSource: this.#o.capSource } : {}),
      })
    ) {
      this.#o.onEvent(warning);
    }
    this.#p.judge.start();
    this.#p.builds.start(this.#p.runnable);
    if (this.#o.signal.aborted) this.#p.stops.interrupt();
    // ORPH-3: orphan recovery starts with the Invocation, also for Experiments that run nothing.
    if (!this.#p.stops.signal.aborted) this.#p.recovery.start();
  }

  /** Runs every cleanup chain and waits for recovery, builds and the event consumers. */
  async #close(): Promise<void> {
    for (const lifecycle of this.#p.lifecycles) this.#cleanups.push(lifecycle.cleanup());
    await settleAll(this.#cleanups.map((cleanup) => () => cleanup));
    await this.#p.recovery.settled(); // ORPH-5
    await this.#p.builds.settled();
    await this.#events.drained(); // ORD-3: the last callback settled before the run ends
  }

  /** One slot's chain; its outcome goes to its plan position. Never rejects: see {@link #fail}. */
  async #runSlot(slot: PlannedSlot, entry?: GateEntry): Promise<void> {
    try {
      this.#settle(slot, await this.#p.admission.admit(slot, entry));
    } catch (error) {
      this.#fail(error);
    } finally {
      this.#p.waiters.delete(slot.position);
      this.#p.physical.groups.settle(slot);
      if (--this.#remaining[slot.experimentIndex]! === 0) {
        this.#cleanups.push(this.#p.lifecycles[slot.experimentIndex]!.cleanup());
      }
    }
  }

  /** An internal error (INT-3): the run interrupts, lets cleanup finish, then rejects with it. */
  #fail(error: unknown): void {
    this.#failure ??= { error };
    this.#p.stops.interrupt();
  }
}
