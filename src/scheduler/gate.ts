/**
 * A counting semaphore with grant-time priority (PRIO-1, STYLE.md §9): when a unit frees it goes
 * to the waiter with the smallest key present at that instant. Permits are `Disposable`.
 */
import { abortable } from "../_shared/mod.ts";
import { Heap, type HeapEntry, type PriorityKey } from "./priority_queue.ts";

/** One held unit; releasing twice is harmless. */
export interface Permit extends Disposable {
  release(): void;
}

/** A queued wait: its own heap entry. */
interface Waiter extends HeapEntry {
  grant(permit: Permit): void;
}

/** How a wait at a gate ended: granted, or stopped with the signal's reason. */
export type GateEntry = { readonly permit: Permit } | { readonly stopped: unknown };

/**
 * A wait queued by {@link PriorityGate.park}: a plain heap entry with no promise, closure or abort
 * listener, so that 10,000 parked slots cost 10,000 small objects.
 */
class ParkedWait<T> implements Waiter {
  seq = 0;
  index = -1;
  readonly key: PriorityKey;
  readonly #gate: PriorityGate;
  readonly #value: T;
  readonly #onEntry: (value: T, entry: GateEntry) => void;

  constructor(
    gate: PriorityGate,
    key: PriorityKey,
    value: T,
    onEntry: (value: T, entry: GateEntry) => void,
  ) {
    this.#gate = gate;
    this.key = key;
    this.#value = value;
    this.#onEntry = onEntry;
  }

  /** Called by the gate with the granted unit. */
  grant(permit: Permit): void {
    this.#onEntry(this.#value, { permit });
  }

  /**
   * Ends the wait: leaves the queue and hands `reason` over synchronously. False, handing over
   * nothing, when the wait already ended.
   */
  cancel(reason: unknown): boolean {
    if (!this.#gate.dequeue(this)) return false;
    this.#onEntry(this.#value, { stopped: reason });
    return true;
  }
}

/** What a gate reports to snapshots and the panel. */
export interface GateSnapshot {
  readonly capacity: number;
  readonly held: number;
  readonly waiting: number;
}

/** A priority semaphore of adjustable capacity. */
export class PriorityGate {
  #capacity: number;
  #held = 0;
  #waiters = new Heap<Waiter>();
  /** Called after every grant or release; used for snapshots and audits. */
  onChange: (() => void) | undefined;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  /** Units currently held. */
  get held(): number {
    return this.#held;
  }

  /** The current capacity. */
  get capacity(): number {
    return this.#capacity;
  }

  /** Number of waiters. */
  get waiting(): number {
    return this.#waiters.size;
  }

  /** The smallest waiting key, if any. */
  smallestWaitingKey(): PriorityKey | undefined {
    return this.#waiters.peek()?.key;
  }

  /** Counters for snapshots. */
  snapshot(): GateSnapshot {
    return { capacity: this.#capacity, held: this.#held, waiting: this.#waiters.size };
  }

  /** Takes a unit at once when one is free and nobody with a smaller key waits; else null. */
  tryAcquire(): Permit | null {
    if (this.#held >= this.#capacity || this.#waiters.size > 0) return null;
    return this.#take();
  }

  /**
   * Waits for a unit under `key`. Rejects with `signal.reason` when the signal aborts first;
   * a grant that races the abort is released again.
   */
  acquire(key: PriorityKey, options: { signal?: AbortSignal } = {}): Promise<Permit> {
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const immediate = this.tryAcquire();
    if (immediate) return Promise.resolve(immediate);
    return abortable<Permit>(signal, (resolve) => {
      const waiter: Waiter = { key, seq: 0, index: -1, grant: resolve };
      this.#enqueue(waiter);
      return () => void this.dequeue(waiter);
    });
  }

  /**
   * Waits under `key` without a promise: `onEntry(value, …)` is called synchronously with the
   * permit at the grant, or with the reason once {@link ParkedWait.cancel} ends the wait. Returns
   * null, queuing nothing, when a unit is free now (the caller takes the other path).
   */
  park<T>(
    key: PriorityKey,
    value: T,
    onEntry: (value: T, entry: GateEntry) => void,
  ): ParkedWait<T> | null {
    if (this.#held < this.#capacity && this.#waiters.size === 0) return null;
    const parked = new ParkedWait(this, key, value, onEntry);
    this.#enqueue(parked);
    return parked;
  }

  /** Removes a queued waiter; true when it was queued. */
  dequeue(waiter: Waiter): boolean {
    if (!this.#waiters.remove(waiter)) return false;
    this.onChange?.();
    return true;
  }

  #enqueue(waiter: Waiter): void {
    this.#waiters.push(waiter);
    this.onChange?.();
  }

  /** Changes the capacity; a raise grants waiters at once, a cut never revokes held units. */
  setCapacity(capacity: number): void {
    this.#capacity = capacity;
    this.#dispatch();
  }

  #take(): Permit {
    this.#held++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.#held--;
      this.#dispatch();
      this.onChange?.();
    };
    return { release, [Symbol.dispose]: release };
  }

  #dispatch(): void {
    while (this.#held < this.#capacity && this.#waiters.size > 0) {
      const next = this.#waiters.pop()!;
      next.grant(this.#take());
      this.onChange?.();
    }
  }
}
