/**
 * Starts the admission chains of a run's runnable slots, parking a slot at its first gate when
 * its chain would begin by waiting there: a run of 10,000 slots keeps 10,000 queue entries
 * instead of 10,000 suspended chains.
 */
import type { PlannedSlot } from "../plan/mod.ts";
import type { WaiterIndex } from "./_waiters.ts";
import type { GateEntry } from "./gate.ts";

/** How {@link admitAll} parks a slot and runs its chain. */
export interface ChainStarts {
  readonly waiters: WaiterIndex;
  /** Parks `slot` at its first gate; false when its chain must start now. */
  park(slot: PlannedSlot, onEntry: (slot: PlannedSlot, entry: GateEntry) => void): boolean;
  /** Runs `slot`'s chain from the start, or from `entry` when it was parked; never rejects. */
  run(slot: PlannedSlot, entry?: GateEntry): Promise<void>;
}

/**
 * Starts the admission chain of every runnable slot, in key order; resolves once all settled.
 * A parked slot's chain starts at the grant, or at a stop of its wait. Grants follow the same
 * keys as if every chain waited itself (PRIO-1), and the chain resumes in a microtask, as after
 * an awaited grant.
 */
export function admitAll(runnable: readonly PlannedSlot[], chains: ChainStarts): Promise<void> {
  return new Promise((resolve) => {
    let left = runnable.length;
    if (left === 0) return resolve();
    const run = (slot: PlannedSlot, entry?: GateEntry) => {
      // `chains.run` never rejects: its failures are the run's internal errors.
      void chains.run(slot, entry).then(() => {
        if (--left === 0) resolve();
      });
    };
    // One callback for every parked slot: nothing per slot until its wait ends.
    const onEntry = (slot: PlannedSlot, entry: GateEntry) => {
      chains.waiters.unpark(slot.position);
      queueMicrotask(() => run(slot, entry));
    };
    for (const slot of runnable) {
      if (!chains.park(slot, onEntry)) run(slot);
    }
  });
}
