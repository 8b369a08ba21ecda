/**
 * The signal of `t` and `ctx`: it aborts with the Attempt's own signal, or when the test body
 * settled (rule 3.1.3). One controller and one listener that is removed at settle — not
 * `AbortSignal.any`, whose weak bookkeeping of dependent signals outlives every Attempt until the
 * next full garbage collection.
 */
export class BodySignal {
  readonly #controller = new AbortController();
  readonly #source: AbortSignal;
  readonly #relay = () => this.#controller.abort(this.#source.reason);

  constructor(source: AbortSignal) {
    this.#source = source;
    if (source.aborted) this.#controller.abort(source.reason);
    else source.addEventListener("abort", this.#relay, { once: true });
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Aborts with `reason` unless the Attempt's signal already did; later aborts change nothing. */
  settle(reason: unknown): void {
    this.#source.removeEventListener("abort", this.#relay);
    this.#controller.abort(reason);
  }
}
