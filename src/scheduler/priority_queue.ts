/**
 * A binary min-heap ordered by a numeric-tuple key (PRIO-1: grant to the smallest key). Every
 * operation, removal of an arbitrary value included, is O(log n), so a gate with 10,000 waiters
 * stays cheap when stop rules pull many of them out at once.
 */

/** A priority key compared lexicographically; smaller is served first. */
export type PriorityKey = readonly number[];

/** Lexicographic comparison of two keys. */
export function compareKeys(a: PriorityKey, b: PriorityKey): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = a[i]! - b[i]!;
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

interface Entry<T> {
  readonly key: PriorityKey;
  readonly seq: number;
  readonly value: T;
  /** Current heap index; kept up to date by every move. */
  index: number;
}

/** A min-heap of distinct values by key; equal keys leave in insertion order. */
export class PriorityQueue<T> {
  #heap: Entry<T>[] = [];
  #entries = new Map<T, Entry<T>>();
  #seq = 0;

  /** Number of queued values. */
  get size(): number {
    return this.#heap.length;
  }

  /** Adds a value under `key`; a value already queued is moved to the new key. */
  push(key: PriorityKey, value: T): void {
    this.remove(value);
    const entry: Entry<T> = { key, seq: this.#seq++, value, index: this.#heap.length };
    this.#heap.push(entry);
    this.#entries.set(value, entry);
    this.#up(entry.index);
  }

  /** The smallest value without removing it. */
  peek(): T | undefined {
    return this.#heap[0]?.value;
  }

  /** The smallest key, if any. */
  peekKey(): PriorityKey | undefined {
    return this.#heap[0]?.key;
  }

  /** Removes and returns the smallest value. */
  pop(): T | undefined {
    const top = this.#heap[0];
    if (top === undefined) return undefined;
    this.#removeAt(0);
    return top.value;
  }

  /** Removes one specific value (by identity); returns whether it was queued. */
  remove(value: T): boolean {
    const entry = this.#entries.get(value);
    if (entry === undefined) return false;
    this.#removeAt(entry.index);
    return true;
  }

  /** Every queued value, in no particular order. */
  values(): T[] {
    return this.#heap.map((entry) => entry.value);
  }

  #removeAt(i: number): void {
    const heap = this.#heap;
    const entry = heap[i]!;
    this.#entries.delete(entry.value);
    const last = heap.pop()!;
    if (i < heap.length) {
      heap[i] = last;
      last.index = i;
      this.#down(i);
      this.#up(last.index);
    }
  }

  #less(a: Entry<T>, b: Entry<T>): boolean {
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
