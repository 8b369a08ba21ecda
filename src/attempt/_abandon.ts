/**
 * Stops waiting for an Attempt's timed part (sandbox, agent setup, body, assertions) once its
 * signal aborted and ATTEMPT_ABORT_GRACE_MS passed, so that a body ignoring `t.signal` cannot keep
 * its sandbox alive: the runner then runs agent teardown and the cleanup stack itself, and the
 * sandbox is destroyed or retired (TIME-3, INT-1). The abandoned promise keeps running unobserved.
 *
 * The scheduler abandons at the same instant; this timer is armed first (from the abort relay of
 * the body signal, before the scheduler arms its own), and `onAbandon` ends the Attempt's timed
 * part synchronously, which tells the scheduler that only bounded cleanup is left.
 */
import type { Clock, TimerHandle } from "../_shared/mod.ts";
import { ATTEMPT_ABORT_GRACE_MS } from "../_shared/mod.ts";

/** What {@link Abandonment.race} resolves with when the grace passed first. */
export const ABANDONED: unique symbol = Symbol("abandoned");

/** The abandonment of one Attempt's timed part; armed once, when its signal aborts. */
export class Abandonment {
  readonly #clock: Clock;
  readonly #onAbandon: () => void;
  #timer: TimerHandle | undefined;
  #state: "idle" | "armed" | "abandoned" | "done" = "idle";
  #resolve: ((value: typeof ABANDONED) => void) | undefined;
  readonly #abandoned = new Promise<typeof ABANDONED>((resolve) => this.#resolve = resolve);

  /** `onAbandon` runs synchronously when the grace passed, before any waiter resumes. */
  constructor(clock: Clock, onAbandon: () => void) {
    this.#clock = clock;
    this.#onAbandon = onAbandon;
  }

  /** True once the grace passed while the timed part still ran. */
  get abandoned(): boolean {
    return this.#state === "abandoned";
  }

  /** Starts the grace; no effect once armed, or once the timed part settled. */
  arm(): void {
    if (this.#state !== "idle") return;
    this.#state = "armed";
    this.#timer = this.#clock.setTimeout(() => {
      this.#timer = undefined;
      this.#state = "abandoned";
      this.#onAbandon();
      this.#resolve?.(ABANDONED);
    }, ATTEMPT_ABORT_GRACE_MS);
  }

  /** Resolves with `work`'s value, or with {@link ABANDONED} when the grace passes first. */
  async race<T>(work: Promise<T>): Promise<T | typeof ABANDONED> {
    try {
      return await Promise.race([work, this.#abandoned]);
    } finally {
      if (this.#state !== "abandoned") {
        this.#state = "done";
        if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
        this.#timer = undefined;
      }
    }
  }
}
