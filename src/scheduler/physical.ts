/**
 * Physical admission (scheduling.md CHAIN-9, LANE, REUSE-1/2, MSB, sandboxes.md §4.4): in this
 * order, (a) the exclusive lane, (b) a reuse-pool lease, (c) a machine slot and create pacing when
 * a fresh sandbox will be created. Each step is tried at once; the first one that must wait is
 * handed back to the scheduler, which releases the global slot before waiting (CHAIN-13). Group
 * lanes (CHAIN-1) and the waits of a running Attempt (new pool instances) are here too.
 */
import type { Clock, RunEventSink, WaitScope } from "../_shared/mod.ts";
import type { Plan, PlannedSlot } from "../plan/mod.ts";
import { type GateSnapshot, type Permit, PriorityGate } from "./gate.ts";
import { GroupLanes } from "./group_lanes.ts";
import { MachineBudget, type MachineSlotSource } from "./machine_budget.ts";
import { Pacing } from "./pacing.ts";
import type { PriorityKey } from "./priority_queue.ts";

/** Sandbox options of `runPlan`. */
export interface PhysicalOptions {
  /** Machine slots (MSB); without it no provider has a machine budget. */
  readonly machineSlots?: MachineSlotSource;
  /** Config `createsPerSecond`, over the defaults (e2b 1). */
  readonly createsPerSecond?: Readonly<Record<string, number>>;
  /** @default {MACHINE_SLOT_POLL_MS} */
  readonly machineSlotPollMs?: number;
}

/** The physical units a slot holds, acquired in the order of CHAIN-13. */
export interface PhysicalHeld {
  lane: Permit | null;
  pool: Permit | null;
  machine: Permit | null;
  paced: boolean;
}

/**
 * A step that could not be taken at once: wait for it (holding no global slot). A lane or pool
 * lease calls `onGrant` synchronously in the step that grants it (see `PriorityGate.acquire`).
 */
type PhysicalWait = (
  key: PriorityKey,
  signal: AbortSignal,
  onGrant?: () => void,
) => Promise<void>;

const NO_SLOTS: MachineSlotSource = {
  limitOf: () => undefined,
  tryAcquire: () => Promise.resolve(null),
};

/** The physical gates of one Invocation. */
export class PhysicalAdmission {
  readonly groups: GroupLanes;
  readonly machine: MachineBudget;
  readonly pacing: Pacing;
  readonly #plan: Plan;
  readonly #gmax: number;
  readonly #lanes = new Map<string, PriorityGate>();
  readonly #pools = new Map<string, PriorityGate>();
  readonly #waits = new Map<string, number>();
  readonly #emit: RunEventSink;
  readonly #clock: Clock;

  constructor(
    plan: Plan,
    o: { gmax: number; clock: Clock; emit: RunEventSink; options?: PhysicalOptions },
  ) {
    this.#plan = plan;
    this.#gmax = o.gmax;
    this.#emit = o.emit;
    this.#clock = o.clock;
    this.groups = new GroupLanes(plan);
    this.pacing = new Pacing(o.options?.createsPerSecond ?? {}, o.clock);
    this.machine = new MachineBudget(o.options?.machineSlots ?? NO_SLOTS, {
      clock: o.clock,
      ...(o.options?.machineSlotPollMs !== undefined
        ? { pollMs: o.options.machineSlotPollMs }
        : {}),
      onFirstWait: (provider, held, limit) =>
        o.emit({
          type: "diagnostic",
          at: o.clock.now(),
          level: "info",
          code: "sandbox-budget-waiting",
          message: `waiting for machine sandbox budget · ${provider} ${held}/${limit}`,
          experimentId: null,
          evalId: null,
          data: { provider, held, limit },
          persist: false,
        }),
    });
    for (const slot of plan.slots) {
      const laneKey = this.laneKeyOf(slot);
      if (laneKey !== null && !this.#lanes.has(laneKey)) {
        this.#lanes.set(laneKey, new PriorityGate(1));
      }
      const poolKey = this.#poolKeyOf(slot);
      if (poolKey !== null && !this.#pools.has(poolKey)) {
        this.#pools.set(poolKey, new PriorityGate(this.poolCapacity(slot)));
      }
    }
  }

  /** The exclusive lane key of a slot: its sandbox's, else its experiment's (fake plans). */
  laneKeyOf(slot: PlannedSlot): string | null {
    if (slot.sandbox) return slot.sandbox.laneKey;
    return this.#plan.experiments[slot.experimentIndex]!.laneKey;
  }

  /** The pool capacity `max(1, min(Gmax, maxConcurrency ?? Gmax))`; 1 for groups (REUSE-1). */
  poolCapacity(slot: PlannedSlot): number {
    if (slot.sandbox?.reuse === "group") return 1;
    const cap = this.#plan.experiments[slot.experimentIndex]!.maxConcurrency ?? this.#gmax;
    return Math.max(1, Math.min(this.#gmax, cap));
  }

  /** Exclusive lanes by key. */
  laneSnapshot(): Record<string, GateSnapshot> {
    const out: Record<string, GateSnapshot> = {};
    for (const [key, gate] of this.#lanes) out[key] = gate.snapshot();
    return out;
  }

  /** Reuse-pool lease gates by `<experimentIndex>:<pool key prefix>`. */
  poolSnapshot(): Record<string, GateSnapshot> {
    const out: Record<string, GateSnapshot> = {};
    for (const [key, gate] of this.#pools) out[key] = gate.snapshot();
    return out;
  }

  /**
   * Takes every step of CHAIN-9 that is free now, in order, and returns the wait of the first one
   * that is not (or null when all are held). The caller waits without its global slot, then calls
   * again. Synchronous unless a machine slot file has to be tried, so that the first grants of a
   * run keep their priority order (PRIO-1).
   */
  next(
    slot: PlannedSlot,
    held: PhysicalHeld,
  ): PhysicalWait | null | Promise<PhysicalWait | null> {
    const lane = this.#laneOf(slot);
    if (lane && !held.lane) {
      held.lane = lane.tryAcquire();
      if (!held.lane) {
        const laneKey = this.laneKeyOf(slot)!;
        return this.#tracked("lane", laneKey, () => null, async (key, signal, onGrant) => {
          held.lane = await lane.acquire(key, { signal, ...(onGrant ? { onGrant } : {}) });
        });
      }
    }
    const poolKey = this.#poolKeyOf(slot);
    const pool = poolKey === null ? undefined : this.#pools.get(poolKey);
    if (pool && !held.pool) {
      held.pool = pool.tryAcquire();
      if (!held.pool) {
        return async (key, signal, onGrant) =>
          void (held.pool = await pool.acquire(key, { signal, ...(onGrant ? { onGrant } : {}) }));
      }
    }
    const provider = slot.sandbox?.reuse === "fresh" ? slot.sandbox.provider : null;
    if (provider === null) return null;
    return this.#freshSteps(provider, slot.experimentId, held);
  }

  /** (c) for a fresh sandbox: a machine slot (MSB-3), then create pacing (rule 59). */
  async #freshSteps(
    provider: string,
    experimentId: string,
    held: PhysicalHeld,
  ): Promise<PhysicalWait | null> {
    if (!held.machine) {
      held.machine = await this.machine.tryAcquire(provider, experimentId);
      if (!held.machine) {
        const detail = () => {
          const c = this.machine.snapshot()[provider];
          return c ? `${c.held}/${c.capacity}` : null;
        };
        return this.#tracked("machine-slot", provider, detail, async (key, signal) => {
          held.machine = await this.machine.acquire(provider, key, { signal, experimentId });
        });
      }
    }
    const pacer = this.pacing.of(provider);
    if (pacer && !held.paced) {
      held.paced = pacer.tryTake();
      if (!held.paced) {
        return async (key, signal) => {
          await pacer.take(key, { signal });
          held.paced = true;
        };
      }
    }
    return null;
  }

  /** Wraps a wait so that the first waiter of (scope, key) starts a run-scope row, the last ends it. */
  #tracked(
    scope: WaitScope,
    key: string,
    detail: () => string | null,
    wait: PhysicalWait,
  ): PhysicalWait {
    const id = `${scope}\u0000${key}`;
    const event = (state: "started" | "ended") =>
      this.#emit({
        type: "wait",
        at: this.#clock.now(),
        scope,
        key,
        experimentId: null,
        state,
        detail: detail(),
      });
    return async (priority, signal, onGrant) => {
      const before = this.#waits.get(id) ?? 0;
      this.#waits.set(id, before + 1);
      if (before === 0) event("started");
      try {
        await wait(priority, signal, onGrant);
      } finally {
        const left = this.#waits.get(id)! - 1;
        if (left > 0) this.#waits.set(id, left);
        else {
          this.#waits.delete(id);
          event("ended");
        }
      }
    };
  }

  #laneOf(slot: PlannedSlot): PriorityGate | undefined {
    const key = this.laneKeyOf(slot);
    return key === null ? undefined : this.#lanes.get(key);
  }

  #poolKeyOf(slot: PlannedSlot): string | null {
    const s = slot.sandbox;
    if (!s || s.reuse !== "pool" || s.poolKey === null) return null;
    return `${slot.experimentIndex}:${s.poolKey}`;
  }
}

/** Releases every physical unit still held. */
export function releasePhysical(held: PhysicalHeld): void {
  held.machine?.release();
  held.pool?.release();
  held.lane?.release();
  held.machine = held.pool = held.lane = null;
}
