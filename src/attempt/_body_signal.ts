import { onAbort } from "../_shared/mod.ts";

/**
 * The signal of `t` and `ctx`: it aborts with the Attempt's own signal, or when the test body
 * settled (rule 3.1.3). One controller and one listener that is removed at settle — not
 * `AbortSignal.any`, whose weak bookkeeping of dependent signals outlives every Attempt until the
 * next full garbage collection.
 */
export class BodySignal {
  readonly #controller = new AbortController();
  /** The relay from the Attempt's signal: the listener is the mechanism itself. */
  readonly #relay: Disposable | undefined;

  /**
   * `onSourceAbort` runs when the Attempt's signal aborts before the body settled (at once if it
   * already did): the runner arms its abandonment there, without a second listener.
   */
  constructor(source: AbortSignal, onSourceAbort?: () => void) {
    if (source.aborted) {
      this.#controller.abort(source.reason);
      onSourceAbort?.();
    } else {
      this.#relay = onAbort(source, () => {
        this.#controller.abort(source.reason);
        onSourceAbort?.();
      });
    }
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Aborts with `reason` unless the Attempt's signal already did; later aborts change nothing. */
  settle(reason: unknown): void {
    this.#relay?.[Symbol.dispose]();
    this.#controller.abort(reason);
  }
}
