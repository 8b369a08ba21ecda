/**
 * Delivers the run's events to the reporter one callback at a time, in emission (completion) order
 * (ORD-3). A synchronous reporter is called at once, exactly as if it were the sink itself; while
 * an asynchronous callback is pending, later events queue and are delivered after it settles.
 */
import type { RunEvent, RunEventSink } from "../_shared/mod.ts";

/** A reporter callback: synchronous, or asynchronous (awaited before the next event). */
export type RunEventCallback = (event: RunEvent) => void | PromiseLike<void>;

/** Serializes the callbacks of one reporter. */
export class SerialEvents {
  readonly #callback: RunEventCallback;
  readonly #onError: (error: unknown) => void;
  /** Queued events; `#next` is the first not yet delivered (no O(n) shifts). */
  #queue: RunEvent[] = [];
  #next = 0;
  #busy = false;
  /** The pending asynchronous callback and the delivery after it. */
  #pending: Promise<void> | null = null;

  /** `onError` receives the rejection of an asynchronous callback; later events still go out. */
  constructor(callback: RunEventCallback, onError: (error: unknown) => void) {
    this.#callback = callback;
    this.#onError = onError;
  }

  /**
   * The sink the scheduler emits into. A synchronous throw of the callback reaches the emitter,
   * like a throwing sink would.
   */
  readonly sink: RunEventSink = (event) => {
    this.#queue.push(event);
    if (!this.#busy) this.#deliver();
  };

  /** Resolves once every event emitted so far was delivered and its callback settled. */
  async drained(): Promise<void> {
    while (this.#pending) await this.#pending;
  }

  #deliver(): void {
    this.#busy = true;
    while (this.#next < this.#queue.length) {
      const event = this.#queue[this.#next++]!;
      let out: void | PromiseLike<void>;
      try {
        out = this.#callback(event);
      } catch (error) {
        this.#idle();
        throw error;
      }
      if (isThenable(out)) {
        const pending: Promise<void> = Promise.resolve(out).then(
          () => this.#resume(pending),
          (error) => {
            this.#onError(error);
            this.#resume(pending);
          },
        );
        this.#pending = pending;
        return;
      }
    }
    this.#idle();
  }

  /** Continues after an asynchronous callback; a later synchronous throw goes to `onError`. */
  #resume(pending: Promise<void>): void {
    if (this.#pending === pending) this.#pending = null;
    try {
      this.#deliver();
    } catch (error) {
      this.#onError(error);
    }
  }

  #idle(): void {
    this.#busy = false;
    if (this.#next === this.#queue.length) {
      this.#queue = [];
      this.#next = 0;
    }
  }
}

function isThenable(value: unknown): value is PromiseLike<void> {
  return typeof value === "object" && value !== null &&
    typeof (value as { then?: unknown }).then === "function";
}
