/**
 * The circuit breaker (docs/bail.md): when the first `after` settled Attempts of an experiment
 * all errored the same way, the error is systematic (a rejected key, an endpoint that is down, a
 * missing binary) and the experiment stops dispatching. Any other settlement among the first
 * `after` disarms it for the rest of the Invocation.
 */
import type { AttemptError, AttemptResult } from "../_shared/mod.ts";

/** Error codes that never count as systematic: they depend on the Attempt, not on the setup. */
const NOT_SYSTEMATIC = new Set(["timeout", "interrupted"]);

/** A status line such as `HTTP 401` in an error message. */
const HTTP_STATUS_REGEXP = /\bHTTP (\d{3})\b/;
/** The suffix of exhausted send retries (RETRY-3): `(<n> tries, <reason>)`. */
const RETRY_REASON_REGEXP = /\((?:\d+ (?:tries|retries)), ([a-z_]+)\)\s*$/;

/** One experiment's breaker: the shape of its first error and how many settles matched it. */
interface Streak {
  readonly shape: string;
  readonly error: AttemptError;
  count: number;
}

/** The breakers of one Invocation, one per experiment. */
export class CircuitBreaker {
  readonly #after: number;
  readonly #streaks = new Map<string, Streak>();
  /** Experiments whose breaker is disarmed (a different settlement came first) or tripped. */
  readonly #done = new Set<string>();

  /** @param after Settled Attempts that must all error the same way; 0 turns the breaker off. */
  constructor(after: number) {
    this.#after = after;
  }

  /**
   * Folds one settled Attempt of `experimentId` into its breaker.
   *
   * @returns The error of the first settlement when this settle tripped the breaker, else null.
   */
  settled(experimentId: string, result: AttemptResult): AttemptError | null {
    if (this.#after <= 0 || this.#done.has(experimentId)) return null;
    const error = result.verdict === "errored" ? result.error : null;
    const shape = error && !NOT_SYSTEMATIC.has(error.code) ? errorShape(error) : null;
    const streak = this.#streaks.get(experimentId);
    if (shape === null || (streak !== undefined && streak.shape !== shape)) {
      this.#done.add(experimentId);
      this.#streaks.delete(experimentId);
      return null;
    }
    const current = streak ?? { shape, error: error!, count: 0 };
    current.count++;
    this.#streaks.set(experimentId, current);
    if (current.count < this.#after) return null;
    this.#done.add(experimentId);
    this.#streaks.delete(experimentId);
    return current.error;
  }
}

/**
 * What two errors must share to be "the same error": code, scope, phase, and the sub-reason of
 * the message: its HTTP status, else the reason of exhausted retries, else the whole message.
 */
export function errorShape(error: AttemptError): string {
  const status = HTTP_STATUS_REGEXP.exec(error.message)?.[1];
  const retried = RETRY_REASON_REGEXP.exec(error.message)?.[1];
  const reason = status !== undefined
    ? `HTTP ${status}`
    : retried !== undefined
    ? `retries:${retried}`
    : error.message;
  return [error.code, error.scope, error.phase, reason].join("\u0000");
}
