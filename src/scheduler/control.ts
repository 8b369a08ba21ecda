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

/** Phases in which a group sandbox can fail (GRP-6, sandboxes.md rule 89). */
export type GroupSandboxPhase =
  | "sandbox.create"
  | "sandbox.setup"
  | "sandbox.prepare"
  | "sandbox.reset";

/** The physical waits a sandbox Attempt drives itself, and what it reports back. */
export interface SandboxAdmission {
  /** Capacity of the Attempt's reuse pool (REUSE-1); 1 for a group sandbox. */
  readonly poolCapacity: number;
  /**
   * The Attempt's priority key, the one its scheduler grants use (PRIO-2 … PRIO-5): the pool
   * lease queue serves the smallest key first (PRIO-1). Numbers compare by value, tuples
   * lexicographically.
   */
  readonly priority: number | readonly number[];
  /**
   * A machine slot of the Attempt's provider for a new pool instance (MSB-3, REUSE-5), waited
   * for without a global slot before `attempt_start` (W11). Resolves with its release, or
   * undefined when the provider has no machine budget.
   */
  acquireMachineSlot(signal: AbortSignal): Promise<(() => void) | undefined>;
  /** Create pacing (sandboxes.md rule 59) before a create try the scheduler did not pace. */
  pace(signal: AbortSignal): Promise<void>;
  /** The group sandbox failed in `phase` (GRP-6); applied when the Attempt settles. */
  groupSandboxFailed(phase: GroupSandboxPhase): void;
}

/** The scheduler's side of one executing Attempt. */
export interface AttemptControl {
  /** Aborted on the deadline (`timeout`), interrupt (`interrupt`) or early exit (`early-exit`). */
  readonly signal: AbortSignal;
  /** Set when `attempt_start` is emitted. */
  readonly attemptId: string;
  /** When `attempt_start` was emitted; the deadline counts from here (TIME-2). */
  readonly startedAt: number;
  /** Deadline as epoch ms, or null when unlimited (or not started yet). */
  readonly deadline: number | null;
  /**
   * Emits `attempt_start` and starts the deadline of an Attempt whose start the work decides (pool
   * leases; CHAIN-10, sandboxes.md rule 46). Idempotent; absent when the scheduler started the
   * Attempt before handing it over.
   */
  start?(): void;
  /** True once `attempt_start` was emitted. */
  readonly started?: boolean;
  /** Ends the timed part: cleanup is outside the deadline (sandboxes.md rule 46). */
  endTimed?(): void;
  /** Present for sandbox Attempts. */
  readonly sandbox?: SandboxAdmission;
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
