/**
 * The not-yet-started slots of a run (CHAIN-0 waiters) and how a stop ends each one's wait, by
 * plan position. A waiter parked at its first gate is only that gate's queue entry; a waiter whose
 * chain runs gets an AbortController the first time it waits on something a stop must end. Stop
 * scopes resolve through per-experiment position lists sorted by eval id, so a run of 10,000
 * slots keeps a few typed arrays instead of a controller, listener and set entries per slot.
 */
import type { PlannedSlot } from "../plan/mod.ts";
import type { PriorityOrder } from "./keys.ts";
import type { StopScope } from "./stops.ts";

/** A parked wait that a stop ends (a gate's queue entry). */
export interface ParkedWaiter {
  /** Ends the wait with `reason`; false when it already ended. */
  cancel(reason: unknown): boolean;
}

/** Waiting, with no parked entry and no controller yet. */
const PENDING = Object.freeze({ pending: true });

type State = typeof PENDING | ParkedWaiter | AbortController;

/** Waiters by plan position, in priority-key order within every scope. */
export class WaiterIndex {
  readonly #slots: readonly PlannedSlot[];
  /** Registered positions in key order. */
  readonly #order: Int32Array;
  /** Rank in `#order` by position. */
  readonly #rank: Int32Array;
  /** Each experiment's registered positions, sorted by eval id, then rank. */
  readonly #byExperiment: Int32Array[];
  readonly #state: (State | undefined)[];
  #size = 0;

  /** Indexes the runnable slots of `slots` in key order; {@link open} registers them. */
  constructor(slots: readonly PlannedSlot[], runnable: PriorityOrder, experiments: number) {
    this.#slots = slots;
    this.#order = Int32Array.from(runnable.order, (s) => s.position);
    this.#rank = runnable.rank;
    this.#state = new Array(slots.length);
    const lists: number[][] = Array.from({ length: experiments }, () => []);
    for (const slot of runnable.order) lists[slot.experimentIndex]?.push(slot.position);
    this.#byExperiment = lists.map((list) =>
      Int32Array.from(list.sort((a, b) => compare(slots[a]!.evalId, slots[b]!.evalId)))
    );
  }

  /** Registers every indexed slot as a waiter (once, when the run starts). */
  open(): void {
    for (const position of this.#order) this.#state[position] = PENDING;
    this.#size = this.#order.length;
  }

  /** Number of waiters. */
  get size(): number {
    return this.#size;
  }

  /** True while the slot at `position` waits. */
  has(position: number): boolean {
    return this.#state[position] !== undefined;
  }

  /** True while the waiter is neither parked nor stopped nor past its first wait. */
  pending(position: number): boolean {
    return this.#state[position] === PENDING;
  }

  /** Notes that a pending waiter is parked at a gate. */
  park(position: number, parked: ParkedWaiter): void {
    if (this.#state[position] === PENDING) this.#state[position] = parked;
  }

  /** Notes that a parked waiter's wait ended (granted): its chain goes on. */
  unpark(position: number): void {
    const state = this.#state[position];
    if (state !== undefined && state !== PENDING && !(state instanceof AbortController)) {
      this.#state[position] = PENDING;
    }
  }

  /** The signal that ends the waiter's current wait when a stop covers it. */
  signal(position: number): AbortSignal {
    const state = this.#state[position];
    if (state instanceof AbortController) return state.signal;
    const controller = new AbortController();
    if (state !== undefined) this.#state[position] = controller;
    return controller.signal;
  }

  /** Ends the waiter's wait with `reason` (the first reason wins); unknown positions are ignored. */
  stop(position: number, reason: unknown): void {
    const state = this.#state[position];
    if (state === undefined) return;
    if (state instanceof AbortController) return state.abort(reason);
    if (state !== PENDING) {
      this.#state[position] = PENDING;
      if ((state as ParkedWaiter).cancel(reason)) return;
    }
    const controller = new AbortController();
    controller.abort(reason);
    this.#state[position] = controller;
  }

  /** Removes a waiter (it started or closed); unknown positions are ignored. */
  delete(position: number): void {
    if (this.#state[position] === undefined) return;
    this.#state[position] = undefined;
    this.#size--;
  }

  /** The positions a stop scope covers that still wait, in key order. */
  inScope(scope: StopScope): number[] {
    const out: number[] = [];
    this.#scan(scope, (position) => void out.push(position));
    return out;
  }

  /** How many waiters a stop scope covers. */
  countInScope(scope: StopScope): number {
    let n = 0;
    this.#scan(scope, () => void n++);
    return n;
  }

  /** Every waiting position, in key order. */
  positions(): number[] {
    const out: number[] = [];
    for (const position of this.#order) if (this.has(position)) out.push(position);
    return out;
  }

  #scan(scope: StopScope, visit: (position: number) => void): void {
    const { experimentIndex, evalId } = scope;
    if (evalId === null) {
      for (const position of this.#order) {
        if (this.has(position) && this.#slots[position]!.experimentIndex === experimentIndex) {
          visit(position);
        }
      }
      return;
    }
    const list = this.#byExperiment[experimentIndex];
    if (list === undefined) return;
    const positions = [];
    for (let i = this.#firstOf(list, evalId); i < list.length; i++) {
      const position = list[i]!;
      if (this.#slots[position]!.evalId !== evalId) break;
      if (this.has(position)) positions.push(position);
    }
    positions.sort((a, b) => this.#rank[a]! - this.#rank[b]!);
    for (const position of positions) visit(position);
  }

  /** The first index of `list` whose eval id is not below `evalId` (binary search). */
  #firstOf(list: Int32Array, evalId: string): number {
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (compare(this.#slots[list[mid]!]!.evalId, evalId) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
