/**
 * Priority keys (PRIO-2 … PRIO-4): (rounds descending, experiment selection index, wave-major
 * slot index). Computed once at planning and kept for a waiter's life (PRIO-5).
 */
import type { Plan, PlannedSlot } from "../plan/mod.ts";
import type { PriorityKey } from "./priority_queue.ts";

/** `ceil(runnable / min(cap ?? G₀, G₀))` per experiment (PRIO-3). */
export function roundsOf(runnable: number, experimentCap: number | null, g0: number): number {
  const width = Math.min(experimentCap ?? g0, g0);
  return Math.ceil(runnable / Math.max(1, width));
}

/**
 * The priority key of every runnable slot, by plan position. Within an experiment, lanes are
 * its evals (or its groups, one lane per group) ordered by first eval discovery index; wave w
 * holds the w-th runnable slot of every lane.
 */
export function priorityKeys(plan: Plan, g0: number): Map<number, PriorityKey> {
  const keys = new Map<number, PriorityKey>();
  for (const experiment of plan.experiments) {
    const runnable = plan.slots.filter((s) =>
      s.experimentIndex === experiment.index && s.carry.action === "run"
    );
    const rounds = roundsOf(runnable.length, experiment.maxConcurrency, g0);
    const lanes = lanesOf(runnable);
    const maxWave = Math.max(0, ...lanes.map((lane) => lane.length));
    let slotIndex = 0;
    for (let wave = 0; wave < maxWave; wave++) {
      for (const lane of lanes) {
        const slot = lane[wave];
        if (slot) keys.set(slot.position, [-rounds, experiment.index, slotIndex++]);
      }
    }
  }
  return keys;
}

/** Groups runnable slots into lanes ordered by their first eval's discovery index. */
function lanesOf(runnable: readonly PlannedSlot[]): PlannedSlot[][] {
  const lanes = new Map<string, PlannedSlot[]>();
  const ordered = [...runnable].sort((a, b) => a.evalIndex - b.evalIndex || a.ordinal - b.ordinal);
  for (const slot of ordered) {
    const lane = slot.groupId !== null ? `group:${slot.groupId}` : `eval:${slot.evalId}`;
    lanes.set(lane, [...(lanes.get(lane) ?? []), slot]);
  }
  return [...lanes.values()];
}
