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
 * holds the w-th runnable slot of every lane. Linear in the number of slots (after one sort).
 */
export function priorityKeys(plan: Plan, g0: number): Map<number, PriorityKey> {
  const keys = new Map<number, PriorityKey>();
  const byExperiment = plan.experiments.map((): PlannedSlot[] => []);
  for (const slot of plan.slots) {
    if (slot.carry.action === "run") byExperiment[slot.experimentIndex]?.push(slot);
  }
  for (const experiment of plan.experiments) {
    const runnable = byExperiment[experiment.index] ?? [];
    const rounds = roundsOf(runnable.length, experiment.maxConcurrency, g0);
    const lanes = lanesOf(runnable);
    let maxWave = 0;
    for (const lane of lanes) maxWave = Math.max(maxWave, lane.length);
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
    const name = slot.groupId !== null ? `group:${slot.groupId}` : `eval:${slot.evalId}`;
    const lane = lanes.get(name);
    if (lane) lane.push(slot);
    else lanes.set(name, [slot]);
  }
  return [...lanes.values()];
}
