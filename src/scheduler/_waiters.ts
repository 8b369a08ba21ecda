/**
 * The not-yet-started slots of a run (CHAIN-0 waiters), indexed by experiment and by
 * (experiment, eval), so that a stop rule reaches exactly the waiters it affects.
 */
import type { PlannedSlot } from "../plan/mod.ts";
import type { StopScope } from "./stops.ts";

/** One pending Attempt: aborting its controller ends whatever wait it is in. */
export interface Waiter {
  readonly slot: PlannedSlot;
  readonly controller: AbortController;
}

const EMPTY: ReadonlySet<Waiter> = new Set();

/** Waiters by plan position, experiment and eval key; every operation is O(1). */
export class WaiterIndex {
  readonly #byPosition = new Map<number, Waiter>();
  readonly #byExperiment = new Map<number, Set<Waiter>>();
  readonly #byEval = new Map<string, Set<Waiter>>();

  /** Number of waiters. */
  get size(): number {
    return this.#byPosition.size;
  }

  /** Registers a waiter for `slot`. */
  add(slot: PlannedSlot): Waiter {
    const waiter: Waiter = { slot, controller: new AbortController() };
    this.#byPosition.set(slot.position, waiter);
    setOf(this.#byExperiment, slot.experimentIndex).add(waiter);
    setOf(this.#byEval, evalKey(slot.experimentIndex, slot.evalId)).add(waiter);
    return waiter;
  }

  /** The waiter of a plan position, if it still waits. */
  get(position: number): Waiter | undefined {
    return this.#byPosition.get(position);
  }

  /** Removes a waiter (it started or closed); unknown positions are ignored. */
  delete(position: number): void {
    const waiter = this.#byPosition.get(position);
    if (!waiter) return;
    this.#byPosition.delete(position);
    const { experimentIndex, evalId } = waiter.slot;
    this.#byExperiment.get(experimentIndex)?.delete(waiter);
    this.#byEval.get(evalKey(experimentIndex, evalId))?.delete(waiter);
  }

  /** The waiters a stop scope covers (a live view; copy before removing while iterating). */
  inScope(scope: StopScope): ReadonlySet<Waiter> {
    const set = scope.evalId === null
      ? this.#byExperiment.get(scope.experimentIndex)
      : this.#byEval.get(evalKey(scope.experimentIndex, scope.evalId));
    return set ?? EMPTY;
  }

  /** Every waiter. */
  values(): IterableIterator<Waiter> {
    return this.#byPosition.values();
  }
}

function evalKey(experimentIndex: number, evalId: string): string {
  return `${experimentIndex}\u0000${evalId}`;
}

function setOf<K>(map: Map<K, Set<Waiter>>, key: K): Set<Waiter> {
  let set = map.get(key);
  if (!set) {
    set = new Set();
    map.set(key, set);
  }
  return set;
}
