/**
 * Priority keys (PRIO-2 … PRIO-4): (capped below G₀ first, rounds descending, experiment selection
 * index, wave-major slot index). Computed once at planning and kept for a waiter's life (PRIO-5).
 * An experiment capped below G₀ can never use more than its cap, so it goes ahead of the
 * uncapped ones, which back-fill every other slot (docs/priority.md).
 */
import type { Plan, PlannedSlot } from "../plan/mod.ts";
import { compareKeys } from "./priority_queue.ts";

/** `ceil(runnable / min(cap ?? G₀, G₀))` per experiment (PRIO-3). */
function roundsOf(runnable: number, experimentCap: number | null, g0: number): number {
  const width = Math.min(experimentCap ?? g0, g0);
  return Math.ceil(runnable / Math.max(1, width));
}

/**
 * The priority key of every runnable slot, by plan position (carried positions have none).
 * Within an experiment, lanes are its evals (or its groups, one lane per group) ordered by first
 * eval discovery index; wave w holds the w-th runnable slot of every lane. Linear in the number
 * of slots (after one sort).
 */
function priorityKeys(plan: Plan, g0: number): (readonly number[] | undefined)[] {
  const keys = new Array<readonly number[] | undefined>(plan.slots.length);
  const byExperiment = plan.experiments.map((): PlannedSlot[] => []);
  for (const slot of plan.slots) {
    if (slot.carry.action === "run") byExperiment[slot.experimentIndex]?.push(slot);
  }
  for (const experiment of plan.experiments) {
    const runnable = byExperiment[experiment.index] ?? [];
    const rounds = roundsOf(runnable.length, experiment.maxConcurrency, g0);
    const uncapped = (experiment.maxConcurrency ?? g0) >= g0 ? 1 : 0;
    const lanes = lanesOf(runnable);
    let maxWave = 0;
    for (const lane of lanes) maxWave = Math.max(maxWave, lane.length);
    let slotIndex = 0;
    for (let wave = 0; wave < maxWave; wave++) {
      for (const lane of lanes) {
        const slot = lane[wave];
        if (slot) keys[slot.position] = [uncapped, -rounds, experiment.index, slotIndex++];
      }
    }
  }
  return keys;
}

/** The runnable slots in key order, and each one's rank in it (its key as one number). */
export interface PriorityOrder {
  readonly order: readonly PlannedSlot[];
  /** Rank by plan position; -1 for carried slots. */
  readonly rank: Int32Array;
}

/**
 * The runnable slots sorted by {@link priorityKeys}. Keys are distinct, so a slot's rank orders
 * exactly as its tuple key does: the scheduler keeps one number per slot instead of a tuple.
 */
export function priorityOrder(plan: Plan, g0: number): PriorityOrder {
  const keys = priorityKeys(plan, g0);
  const order = plan.slots.filter((s) => s.carry.action === "run")
    .sort((a, b) => compareKeys(keys[a.position]!, keys[b.position]!));
  const rank = new Int32Array(plan.slots.length).fill(-1);
  order.forEach((slot, i) => rank[slot.position] = i);
  return { order, rank };
}

/**
 * Groups runnable slots into lanes ordered by their first eval's discovery index. After the sort
 * an eval's slots are adjacent, so only group lanes need a lookup.
 */
function lanesOf(runnable: readonly PlannedSlot[]): PlannedSlot[][] {
  const lanes: PlannedSlot[][] = [];
  const groups = new Map<string, PlannedSlot[]>();
  const ordered = [...runnable].sort((a, b) => a.evalIndex - b.evalIndex || a.ordinal - b.ordinal);
  let previous: PlannedSlot | undefined;
  let evalLane: PlannedSlot[] = [];
  for (const slot of ordered) {
    if (slot.groupId !== null) {
      const lane = groups.get(slot.groupId);
      if (lane) lane.push(slot);
      else {
        const created = [slot];
        groups.set(slot.groupId, created);
        lanes.push(created);
      }
    } else if (previous?.groupId === null && previous.evalId === slot.evalId) {
      evalLane.push(slot);
    } else {
      evalLane = [slot];
      lanes.push(evalLane);
    }
    previous = slot;
  }
  return lanes;
}
