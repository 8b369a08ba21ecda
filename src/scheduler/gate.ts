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

/**
 * How a wait at a gate ended: granted, or stopped with the signal's reason. A grant at a gate
 * parked with a next gate carries the place taken there in the same step (see {@link Ticket}).
 */
export type GateEntry =
  | { readonly permit: Permit; readonly next?: Ticket }
  | { readonly stopped: unknown };

/**
 * A place in a gate's queue taken synchronously when the waiter's previous unit is granted, and
 * claimed by its chain a few microtasks later with {@link take}. A release that lets a waiter
 * through one gate and frees a unit of the next one therefore ranks that waiter with everyone
 * already queued there, instead of granting the unit before the waiter arrives (PRIO-1, PRIO-7).
 * A unit granted before the claim stays held for it.
 */
export class Ticket implements Waiter {
  seq = 0;
  index = -1;
  readonly key: PriorityKey;
  readonly #gate: PriorityGate;
  readonly #then: PriorityGate | undefined;
  #permit: Permit | null = null;
  #claim: ((permit: Permit) => void) | null = null;
  #ended = false;
  /** The place at the next gate, taken when this one was granted; the claimer takes it over. */
  next: Ticket | null = null;

  constructor(gate: PriorityGate, key: PriorityKey, then?: PriorityGate) {
    this.#gate = gate;
    this.key = key;
    this.#then = then;
  }

  /** Called by the gate with the granted unit; takes the place at the next gate in that step. */
  grant(permit: Permit): void {
    if (this.#then) this.next = this.#then.reserve(this.key);
    if (this.#claim) {
      this.#ended = true;
      this.#claim(permit);
    } else this.#permit = permit;
  }

  /**
   * Resolves with the unit once granted (at once when it already was). Rejects with
   * `signal.reason` when the signal aborts first, giving the place up.
   */
  take(signal?: AbortSignal): Promise<Permit> {
    if (this.#ended) return Promise.reject(new TypeError("The ticket was already used"));
    if (signal?.aborted) {
      this.cancel();
      return Promise.reject(signal.reason);
    }
    const permit = this.#permit;
    if (permit !== null) {
      this.#ended = true;
      this.#permit = null;
      return Promise.resolve(permit);
    }
    return abortable<Permit>(signal, (resolve) => {
      this.#claim = resolve;
      return () => this.cancel();
    });
  }

  /**
   * Gives the place up: leaves the queue, or releases a unit granted but not taken (and the place
   * taken at the next gate). Idempotent; nothing once the unit was taken.
   */
  cancel(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#claim = null;
    this.next?.cancel();
    this.next = null;
    if (this.#permit !== null) {
      const permit = this.#permit;
      this.#permit = null;
      permit.release();
    } else this.#gate.dequeue(this);
  }
}

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
  readonly #next: PriorityGate | undefined;

  constructor(
    gate: PriorityGate,
    key: PriorityKey,
    value: T,
    onEntry: (value: T, entry: GateEntry) => void,
    next: PriorityGate | undefined,
  ) {
    this.#gate = gate;
    this.key = key;
    this.#value = value;
    this.#onEntry = onEntry;
    this.#next = next;
  }

  /** Called by the gate with the granted unit; takes the place at the next gate in that step. */
  grant(permit: Permit): void {
    const next = this.#next?.reserve(this.key);
    this.#onEntry(this.#value, next ? { permit, next } : { permit });
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
   * a grant that races the abort is released again. `onGrant` runs synchronously in the step
   * that grants the unit, before the waiter's chain resumes: there it takes its place at the
   * next gate (see {@link Ticket}).
   */
  acquire(
    key: PriorityKey,
    options: { signal?: AbortSignal; onGrant?: () => void } = {},
  ): Promise<Permit> {
    const { signal, onGrant } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const immediate = this.tryAcquire();
    if (immediate) {
      onGrant?.();
      return Promise.resolve(immediate);
    }
    return abortable<Permit>(signal, (resolve) => {
      const grant = onGrant
        ? (permit: Permit) => {
          onGrant();
          resolve(permit);
        }
        : resolve;
      const waiter: Waiter = { key, seq: 0, index: -1, grant };
      this.#enqueue(waiter);
      return () => void this.dequeue(waiter);
    });
  }

  /**
   * Waits under `key` without a promise: `onEntry(value, …)` is called synchronously with the
   * permit at the grant, or with the reason once {@link ParkedWait.cancel} ends the wait. Returns
   * null, queuing nothing, when a unit is free now (the caller takes the other path). With
   * `next`, the grant also takes the waiter's place there (`entry.next`).
   */
  park<T>(
    key: PriorityKey,
    value: T,
    onEntry: (value: T, entry: GateEntry) => void,
    next?: PriorityGate,
  ): ParkedWait<T> | null {
    if (this.#held < this.#capacity && this.#waiters.size === 0) return null;
    const parked = new ParkedWait(this, key, value, onEntry, next);
    this.#enqueue(parked);
    return parked;
  }

  /**
   * Takes a place under `key` now, granted in key order like any waiter (see {@link Ticket});
   * with `then`, its grant takes the place at that gate in the same step (`ticket.next`).
   */
  reserve(key: PriorityKey, then?: PriorityGate): Ticket {
    const ticket = new Ticket(this, key, then);
    this.#enqueue(ticket);
    this.#dispatch();
    return ticket;
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
