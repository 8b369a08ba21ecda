/**
 * A counting semaphore with grant-time priority (PRIO-1, STYLE.md §9): when a unit frees it goes
 * to the waiter with the smallest key present at that instant. Permits are `Disposable`.
 */
import { type PriorityKey, PriorityQueue } from "./priority_queue.ts";

/** One held unit; releasing twice is harmless. */
export interface Permit extends Disposable {
  release(): void;
}

interface Waiter {
  readonly key: PriorityKey;
  readonly grant: (permit: Permit) => void;
}

/** How a wait at a gate ended: granted, or stopped with the signal's reason. */
export type GateEntry = { readonly permit: Permit } | { readonly stopped: unknown };

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
  #waiters = new PriorityQueue<Waiter>();
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
    return this.#waiters.peekKey();
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
    return new Promise<Permit>((resolve, reject) => {
      this.#wait(
        key,
        signal,
        (entry) => "permit" in entry ? resolve(entry.permit) : reject(entry.stopped),
      );
    });
  }

  /**
   * Waits under `key` without a promise: `onEntry` is called synchronously with the permit at the
   * grant, or with `signal.reason` once the signal aborts first. Returns false, queuing nothing,
   * when a unit is free now or the signal already aborted (the caller takes the other path).
   */
  park(key: PriorityKey, signal: AbortSignal, onEntry: (entry: GateEntry) => void): boolean {
    if (signal.aborted || (this.#held < this.#capacity && this.#waiters.size === 0)) return false;
    this.#wait(key, signal, onEntry);
    return true;
  }

  #wait(
    key: PriorityKey,
    signal: AbortSignal | undefined,
    onEntry: (entry: GateEntry) => void,
  ): void {
    const waiter: Waiter = {
      key,
      grant: (permit) => {
        signal?.removeEventListener("abort", onAbort);
        onEntry({ permit });
      },
    };
    const onAbort = () => {
      if (!this.#waiters.remove(waiter)) return;
      this.onChange?.();
      onEntry({ stopped: signal?.reason });
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    this.#waiters.push(key, waiter);
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
