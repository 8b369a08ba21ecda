/** What the scheduler hands the per-Attempt work, and what it needs back. */
import type { AbortKind } from "../_shared/mod.ts";
import type { AttemptResult } from "../_shared/mod.ts";
import type { PlannedSlot } from "../plan/mod.ts";

/** A send-retry backoff request (RETRY-4); the scheduler computes the delay (RETRY-2). */
export interface BackoffRequest {
  readonly reason: string;
  /** 1-based retry number within the send. */
  readonly retry: number;
  /** The rejection's server hint (Retry-After), 0 when absent. */
  readonly retryAfterMs: number;
}

/** Retry limits (RETRY-2); not user-configurable. */
export interface RetryLimits {
  /** Physical tries per send. */
  readonly sendMaxTries: number;
  /** Retries per Attempt. */
  readonly attemptMaxRetries: number;
}

/** The scheduler's side of one executing Attempt. */
export interface AttemptControl {
  /** Aborted on the deadline (`timeout`), interrupt (`interrupt`) or early exit (`early-exit`). */
  readonly signal: AbortSignal;
  readonly attemptId: string;
  /** When `attempt_start` was emitted; the deadline counts from here (TIME-2). */
  readonly startedAt: number;
  /** Deadline as epoch ms, or null when unlimited. */
  readonly deadline: number | null;
  /** Retry limits of sends. */
  readonly limits: RetryLimits;
  /**
   * Sleeps the backoff delay without holding a global slot, then re-takes one with the Attempt's
   * original priority. Rejects with `signal.reason` when the signal aborts meanwhile.
   */
  backoff(request: BackoffRequest): Promise<void>;
  /** Reports the Attempt's current activity for the live panel. */
  activity(text: string): void;
}

/** The per-Attempt work: runs one Attempt to its settled result; must not throw. */
export type RunAttempt = (slot: PlannedSlot, control: AttemptControl) => Promise<AttemptResult>;

/** Builds the result of an Attempt whose body did not return within the abort grace period. */
export type AbandonAttempt = (
  slot: PlannedSlot,
  info: {
    readonly attemptId: string;
    readonly startedAt: number;
    readonly endedAt: number;
    readonly kind: AbortKind;
  },
) => AttemptResult;
