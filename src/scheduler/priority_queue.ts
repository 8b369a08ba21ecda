/**
 * A binary min-heap ordered by a numeric-tuple key (PRIO-1: grant to the smallest key). Every
 * operation, removal of an arbitrary entry included, is O(log n), so a gate with 10,000 waiters
 * stays cheap when stop rules pull many of them out at once. `Heap` keeps caller-made entries
 * (a gate's waiters are their own heap entries, with no wrapper and no index map);
 * `PriorityQueue` wraps arbitrary values.
 */

/**
 * A priority key; smaller is served first. Tuples compare lexicographically. A run's scheduler
 * uses each slot's rank in tuple-key order instead (one number per slot, same order); the keys
 * of one queue are either all numbers or all tuples.
 */
export type PriorityKey = number | readonly number[];

/** Compares two keys: numbers by value, tuples lexicographically. */
export function compareKeys(a: PriorityKey, b: PriorityKey): number {
  if (typeof a === "number" || typeof b === "number") {
    if (typeof a === "number" && typeof b === "number") return a - b;
    throw new TypeError("Cannot compare a numeric priority key with a tuple key");
  }
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = a[i]! - b[i]!;
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

/** What a {@link Heap} keeps: its key, and the bookkeeping the heap writes into it. */
export interface HeapEntry {
  readonly key: PriorityKey;
  /** Insertion number: equal keys leave in insertion order. */
  seq: number;
  /** Current heap index, or -1 while not queued; kept up to date by every move. */
  index: number;
}

/** A min-heap of entries by key; equal keys leave in insertion order. */
export class Heap<E extends HeapEntry> {
  #heap: E[] = [];
  #seq = 0;

  /** Number of queued entries. */
  get size(): number {
    return this.#heap.length;
  }

  /** Adds an entry that is not queued yet. */
  push(entry: E): void {
    entry.seq = this.#seq++;
    entry.index = this.#heap.length;
    this.#heap.push(entry);
    this.#up(entry.index);
  }

  /** The smallest entry without removing it. */
  peek(): E | undefined {
    return this.#heap[0];
  }

  /** Removes and returns the smallest entry. */
  pop(): E | undefined {
    const top = this.#heap[0];
    if (top !== undefined) this.#removeAt(0);
    return top;
  }

  /** Removes one specific entry; returns whether it was queued here. */
  remove(entry: E): boolean {
    if (entry.index < 0 || this.#heap[entry.index] !== entry) return false;
    this.#removeAt(entry.index);
    return true;
  }

  /** Every queued entry, in no particular order. */
  values(): E[] {
    return [...this.#heap];
  }

  #removeAt(i: number): void {
    const heap = this.#heap;
    const entry = heap[i]!;
    entry.index = -1;
    const last = heap.pop()!;
    if (i < heap.length) {
      heap[i] = last;
      last.index = i;
      this.#down(i);
      this.#up(last.index);
    }
  }

  #less(a: E, b: E): boolean {
    return (compareKeys(a.key, b.key) || a.seq - b.seq) < 0;
  }

  #swap(i: number, j: number): void {
    const heap = this.#heap;
    const a = heap[i]!;
    const b = heap[j]!;
    heap[i] = b;
    heap[j] = a;
    b.index = i;
    a.index = j;
  }

  #up(i: number): void {
    const heap = this.#heap;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#less(heap[i]!, heap[parent]!)) return;
      this.#swap(i, parent);
      i = parent;
    }
  }

  #down(i: number): void {
    const heap = this.#heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && this.#less(heap[l]!, heap[m]!)) m = l;
      if (r < heap.length && this.#less(heap[r]!, heap[m]!)) m = r;
      if (m === i) return;
      this.#swap(i, m);
      i = m;
    }
  }
}

interface Entry<T> extends HeapEntry {
  readonly value: T;
}

/** A min-heap of distinct values by key; equal keys leave in insertion order. */
export class PriorityQueue<T> {
  readonly #heap = new Heap<Entry<T>>();
  readonly #entries = new Map<T, Entry<T>>();

  /** Number of queued values. */
  get size(): number {
    return this.#heap.size;
  }

  /** Adds a value under `key`; a value already queued is moved to the new key. */
  push(key: PriorityKey, value: T): void {
    this.remove(value);
    const entry: Entry<T> = { key, seq: 0, index: -1, value };
    this.#heap.push(entry);
    this.#entries.set(value, entry);
  }

  /** The smallest value without removing it. */
  peek(): T | undefined {
    return this.#heap.peek()?.value;
  }

  /** The smallest key, if any. */
  peekKey(): PriorityKey | undefined {
    return this.#heap.peek()?.key;
  }

  /** Removes and returns the smallest value. */
  pop(): T | undefined {
    const top = this.#heap.pop();
    if (top === undefined) return undefined;
    this.#entries.delete(top.value);
    return top.value;
  }

  /** Removes one specific value (by identity); returns whether it was queued. */
  remove(value: T): boolean {
    const entry = this.#entries.get(value);
    if (entry === undefined) return false;
    this.#entries.delete(value);
    return this.#heap.remove(entry);
  }

  /** Every queued value, in no particular order. */
  values(): T[] {
    return this.#heap.values().map((entry) => entry.value);
  }
}
