/**
 * Keeps a long run's heap near what it really holds (issue 20, docs/memory.md). V8 lets its old
 * generation grow to about four times the live heap before it collects, so a run of many short
 * Attempts, whose garbage outlives the young generation, peaks far above its live data. The
 * governor looks at the heap every {@link CHECK_EVERY} run events and, once the heap in use passes
 * a limit, runs a full collection and sets the next limit from what is left.
 *
 * The collection is V8's `gc` function, made available to a fresh context at run time; where the
 * runtime does not allow that, the governor does nothing.
 */

/** How the governor reads and collects the heap; a seam for tests. */
export interface HeapPort {
  /** Bytes of heap in use. */
  used(): number;
  /** A full, synchronous collection. */
  collect(): void;
}

/** Run events between two looks at the heap. */
const CHECK_EVERY = 32;
/** The first limit, in bytes: a small run never collects. */
const FIRST_LIMIT = 64 * 1024 * 1024;
/** After a collection, the next limit is the larger of live × this factor and live + this margin. */
const GROWTH_FACTOR = 1.5;
const GROWTH_MARGIN = 32 * 1024 * 1024;

/** Collects when the heap grew well past its live size; see the module documentation. */
export class HeapGovernor {
  readonly #port: HeapPort;
  #limit = FIRST_LIMIT;
  #events = 0;
  #collections = 0;

  constructor(port: HeapPort) {
    this.#port = port;
  }

  /** Full collections so far. */
  get collections(): number {
    return this.#collections;
  }

  /** Called for every run event: cheap, except on the rare call that collects. */
  tick(): void {
    if (++this.#events % CHECK_EVERY === 0) this.check();
  }

  /**
   * Looks at the heap now, and collects when it is past the limit: planning calls it between its
   * phases, whose garbage would otherwise pile up until the run's first events.
   */
  check(): void {
    if (this.#port.used() <= this.#limit) return;
    this.#port.collect();
    this.#collections++;
    const live = this.#port.used();
    this.#limit = Math.max(live * GROWTH_FACTOR, live + GROWTH_MARGIN);
  }
}

let shared: Promise<HeapGovernor> | undefined;

/**
 * The governor of this process's heap, one per process so that planning and the run share its
 * limit; it never collects when `gc` is unavailable.
 */
export function processHeapGovernor(): Promise<HeapGovernor> {
  shared ??= processHeapPort().then((port) => new HeapGovernor(port ?? NO_HEAP));
  return shared;
}

/** This process's heap, or undefined when the runtime does not make `gc` available. */
export async function processHeapPort(): Promise<HeapPort | undefined> {
  try {
    const [{ default: v8 }, { default: vm }] = await Promise.all([
      import("node:v8"),
      import("node:vm"),
    ]);
    // The flag exposes `gc` to contexts created from now on; the program's own context is
    // unchanged.
    v8.setFlagsFromString("--expose-gc");
    const gc: unknown = vm.runInNewContext("typeof gc === 'function' ? gc : undefined");
    if (typeof gc !== "function") return undefined;
    return { used: () => v8.getHeapStatistics().used_heap_size, collect: () => gc() };
  } catch {
    return undefined;
  }
}

/** A heap that is never over its limit. */
const NO_HEAP: HeapPort = { used: () => 0, collect: () => {} };
