/** A binary min-heap ordered by a numeric-tuple key (PRIO-1: grant to the smallest key). */

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
}

/** A min-heap of values by key; equal keys leave in insertion order. */
export class PriorityQueue<T> {
  #heap: Entry<T>[] = [];
  #seq = 0;

  /** Number of queued values. */
  get size(): number {
    return this.#heap.length;
  }

  /** Adds a value under `key`. */
  push(key: PriorityKey, value: T): void {
    this.#heap.push({ key, seq: this.#seq++, value });
    this.#up(this.#heap.length - 1);
  }

  /** The smallest value without removing it. */
  peek(): T | undefined {
    return this.#heap[0]?.value;
  }

  /** Removes and returns the smallest value. */
  pop(): T | undefined {
    const top = this.#heap[0];
    const last = this.#heap.pop();
    if (top === undefined || last === undefined) return undefined;
    if (this.#heap.length > 0) {
      this.#heap[0] = last;
      this.#down(0);
    }
    return top.value;
  }

  /** Removes one specific value (by identity); returns whether it was queued. */
  remove(value: T): boolean {
    const i = this.#heap.findIndex((entry) => entry.value === value);
    if (i < 0) return false;
    const last = this.#heap.pop()!;
    if (i < this.#heap.length) {
      this.#heap[i] = last;
      this.#down(i);
      this.#up(i);
    }
    return true;
  }

  /** Every queued value, in no particular order. */
  values(): T[] {
    return this.#heap.map((entry) => entry.value);
  }

  #less(a: Entry<T>, b: Entry<T>): boolean {
    return (compareKeys(a.key, b.key) || a.seq - b.seq) < 0;
  }

  #up(i: number): void {
    const heap = this.#heap;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#less(heap[i]!, heap[parent]!)) return;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
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
      [heap[i], heap[m]] = [heap[m]!, heap[i]!];
      i = m;
    }
  }
}
