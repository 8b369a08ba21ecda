/**
 * The Record writer's job queue: jobs of one key run in order, jobs of different keys in parallel,
 * at most `limit` at once. It holds only jobs not yet finished, each as the caller's own record
 * (no closure or promise per queued job), so a long backlog stays small.
 */

/** Ordered per key, parallel across keys, bounded. */
export class KeyedQueue<J> {
  readonly #limit: number;
  readonly #run: (job: J) => Promise<void>;
  /** Jobs not started yet, per key; a key is present while it is ready or being worked on. */
  readonly #queued = new Map<number, J[]>();
  /** Keys waiting for a worker, oldest first, from `#head` on. */
  #ready: number[] = [];
  #head = 0;
  readonly #workers = new Set<Promise<void>>();
  /** Jobs queued or running. */
  #size = 0;
  /** Callers of {@link whenAtMost}, each with the size it waits for. */
  #shrinkWaiters: { readonly size: number; readonly resolve: () => void }[] = [];
  /** The largest size a waiter waits for (-1 without waiters): above it, no waiter can resolve. */
  #largestWaited = -1;
  #error: { readonly error: unknown } | undefined;

  /** `run` must not reject: a rejection is a bug, rethrown by {@link idle}. */
  constructor(limit: number, run: (job: J) => Promise<void>) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError("limit must be ≥ 1");
    this.#limit = limit;
    this.#run = run;
  }

  /** Jobs queued or running. */
  get size(): number {
    return this.#size;
  }

  /** Resolves once at most `size` jobs are queued or running (at once when that holds now). */
  whenAtMost(size: number): Promise<void> {
    if (this.#size <= size) return Promise.resolve();
    if (size > this.#largestWaited) this.#largestWaited = size;
    return new Promise((resolve) => this.#shrinkWaiters.push({ size, resolve }));
  }

  /** Queues `job` behind every earlier job of `key`. */
  push(key: number, job: J): void {
    this.#size++;
    const list = this.#queued.get(key);
    if (list) {
      list.push(job);
      return;
    }
    this.#queued.set(key, [job]);
    this.#ready.push(key);
    this.#pump();
  }

  /** Resolves once nothing is queued or running; rejects with the first job that rejected. */
  async idle(): Promise<void> {
    // At most `limit` workers: the Promise.all is bounded.
    while (this.#workers.size > 0) await Promise.all([...this.#workers]);
    if (this.#error) throw this.#error.error;
  }

  #pump(): void {
    while (this.#workers.size < this.#limit && this.#head < this.#ready.length) {
      const key = this.#ready[this.#head++]!;
      if (this.#head >= 1024 && this.#head * 2 >= this.#ready.length) {
        this.#ready = this.#ready.slice(this.#head);
        this.#head = 0;
      }
      const worker: Promise<void> = this.#work(key).finally(() => {
        this.#workers.delete(worker);
        this.#pump();
      });
      this.#workers.add(worker);
    }
  }

  /** Runs the jobs of `key` until none is left, including ones pushed meanwhile. */
  async #work(key: number): Promise<void> {
    const list = this.#queued.get(key)!;
    try {
      for (let job = list.shift(); job !== undefined; job = list.shift()) {
        try {
          await this.#run(job);
        } finally {
          this.#size--;
          this.#shrunk();
        }
      }
    } catch (error) {
      this.#error ??= { error };
    } finally {
      // A job that rejected leaves the rest of its key unrun: they no longer count.
      this.#size -= list.length;
      this.#shrunk();
      this.#queued.delete(key);
    }
  }

  /** Resolves the waiters whose size is reached, oldest first; O(1) while none is. */
  #shrunk(): void {
    const size = this.#size;
    if (size > this.#largestWaited) return;
    const waiting = this.#shrinkWaiters;
    this.#shrinkWaiters = [];
    this.#largestWaited = -1;
    for (const w of waiting) {
      if (w.size >= size) {
        w.resolve();
      } else {
        this.#shrinkWaiters.push(w);
        if (w.size > this.#largestWaited) this.#largestWaited = w.size;
      }
    }
  }
}
