/**
 * The run-event contract: what the scheduler and the attempt runner report, and what the Record
 * writer, the panel and the reporters consume. Times are epoch milliseconds.
 */
import type { JsonValue } from "./json.ts";
import type { StreamEvent, Usage } from "./stream.ts";
import type { ScoreResult, SealedAssertion } from "./verdict.ts";

/** Outcome of an executed Attempt (REC-2 `outcome`). */
type AttemptOutcome = "completed" | "errored" | "cancelled" | "interrupted";

/** Verdict of a settled Attempt as reported. */
export type AttemptVerdict = "passed" | "failed" | "errored" | "skipped" | "scored" | "interrupted";

/** Why a planned slot closed without executing. */
export type NotDispatchedReason =
  | "early-exit"
  | "budget-exhausted"
  | "halted"
  | "fail-fast"
  | "group-unavailable"
  | "interrupted";

/** The classified error of an Attempt. */
export interface AttemptError {
  readonly code: string;
  readonly phase: string;
  readonly message: string;
  readonly scope: "attempt" | "eval" | "experiment";
  /**
   * `<project-relative file>:<line>:<column>` of the user frame that threw, or null (no Error
   * thrown, a non-Error thrown, or no frame in the project).
   */
  readonly location: string | null;
  /** The thrown error's stack trimmed to user frames, one `at …` line each, or null. */
  readonly stack: string | null;
}

/** One retry tally of an Attempt. */
export interface RetryTally {
  readonly phase: "agent.send" | "sandbox.create";
  readonly reason: string;
  readonly count: number;
}

/** A diagnostic recorded with an Attempt or a Run. */
export interface RecordedDiagnostic {
  readonly code: string;
  readonly level: "info" | "warning" | "error";
  readonly message: string;
  readonly data: Readonly<Record<string, JsonValue>> | null;
}

/** One turn as persisted in `events.json`. */
export interface TurnLog {
  readonly sessionId: string | null;
  /** 0 for the main session, then 1, 2, … per `t.newSession()`. */
  readonly session: number;
  readonly index: number;
  readonly input: string;
  readonly status: "completed" | "failed";
  readonly events: readonly StreamEvent[];
  readonly usage: Usage | null;
  readonly startedAt: number;
  readonly endedAt: number;
}

/** Everything the Record keeps of an executed Attempt besides `attempt.json`. */
interface AttemptDetails {
  readonly assertions: readonly SealedAssertion[];
  readonly turns: readonly TurnLog[];
  readonly phases: readonly {
    readonly phase: string;
    readonly startedAt: number;
    readonly endedAt: number;
  }[];
  readonly diagnostics: readonly RecordedDiagnostic[];
  readonly logs: readonly { readonly at: number; readonly text: string }[];
}

/** The settled result of one executed Attempt. */
export interface AttemptResult {
  readonly attemptId: string;
  readonly experimentId: string;
  readonly evalId: string;
  readonly ordinal: number;
  readonly kind: "pass" | "score";
  readonly outcome: AttemptOutcome;
  readonly verdict: AttemptVerdict;
  readonly score: number | null;
  readonly scoreResult: ScoreResult | null;
  /**
   * Score evals: the most the Attempt could earn, `null` when unknown (docs/scores.md); absent for
   * pass evals and in results made before it existed.
   */
  readonly possible?: number | null;
  /** Score evals: the eval's declared pass threshold in points, `null` when none declared. */
  readonly passAt?: number | null;
  readonly skipReason: string | null;
  readonly error: AttemptError | null;
  readonly startedAt: number;
  readonly endedAt: number;
  /** Time counted against the deadline (TIME-2). */
  readonly timedMs: number;
  readonly usage: Usage | null;
  readonly estimatedCostUSD: number | null;
  /** Agent turns that reached the agent (BUD-6 counts Attempts with at least one). */
  readonly turnCount: number;
  readonly retries: readonly RetryTally[];
  readonly details: AttemptDetails;
}

/** How one planned slot was filled, indexed by plan position. */
export type SlotOutcome =
  | { readonly kind: "carried" }
  | { readonly kind: "executed"; readonly result: AttemptResult }
  | { readonly kind: "not-dispatched"; readonly reason: NotDispatchedReason }
  /** Errored without dispatch (setup failure); the Record closes it `not-dispatched`. */
  | { readonly kind: "errored-undispatched"; readonly code: string; readonly message: string };

/** Identifies a planned slot in events. */
export interface SlotRef {
  /** Plan position (ORD-2 index). */
  readonly position: number;
  readonly experimentId: string;
  readonly evalId: string;
  readonly ordinal: number;
}

/** Every event of a run, in emission order. */
export type RunEvent =
  | {
    readonly type: "attempt_start";
    readonly at: number;
    readonly slot: SlotRef;
    readonly attemptId: string;
  }
  | {
    readonly type: "attempt_end";
    readonly at: number;
    readonly slot: SlotRef;
    readonly result: AttemptResult;
  }
  | {
    readonly type: "backoff";
    readonly at: number;
    readonly slot: SlotRef;
    readonly state: "sleeping" | "resumed";
    readonly reason: string;
    readonly retry: number;
    readonly maxRetries: number;
    readonly delayMs: number;
  }
  | {
    readonly type: "not_dispatched";
    readonly at: number;
    readonly slot: SlotRef;
    readonly reason: NotDispatchedReason;
  }
  | {
    readonly type: "slot_errored";
    readonly at: number;
    readonly slot: SlotRef;
    readonly code: string;
    /** Where it failed before dispatch: `experiment.setup`, `sandbox.build`, `judge.precheck`. */
    readonly phase: string;
    readonly message: string;
  }
  | {
    readonly type: "activity";
    readonly at: number;
    readonly slot: SlotRef;
    readonly text: string;
  }
  | {
    readonly type: "experiment_setup" | "experiment_teardown";
    readonly at: number;
    readonly experimentId: string;
    readonly status: "started" | "done" | "failed";
    readonly durationMs: number | null;
    readonly message: string | null;
  }
  | {
    readonly type: "diagnostic";
    readonly at: number;
    readonly level: "info" | "warning" | "error";
    readonly code: string;
    readonly message: string;
    readonly experimentId: string | null;
    readonly evalId: string | null;
    readonly data: Readonly<Record<string, JsonValue>> | null;
    /** Persist as a Run diagnostic (warnings and errors that belong to a Run). */
    readonly persist: boolean;
  }
  | {
    readonly type: "hook_progress";
    readonly at: number;
    readonly experimentId: string;
    readonly hook: "setup" | "teardown";
    readonly text: string;
  }
  | {
    /** A run-scope wait began or ended (OUT-4 rows): at most one `started` per (scope, key). */
    readonly type: "wait";
    readonly at: number;
    readonly scope: WaitScope;
    /** The lease key, lane key, provider or experiment id the wait is about. */
    readonly key: string;
    readonly experimentId: string | null;
    readonly state: "started" | "ended";
    /** Scope-specific detail: `retained` for a lease, `<held>/<limit>` for machine slots. */
    readonly detail: string | null;
  }
  | {
    /** The ramp's cap, range or state changed at a window end (RAMP-4 step 7, OUT-J2). */
    readonly type: "ramp";
    readonly at: number;
    readonly cap: number;
    readonly previousCap: number;
    readonly from: number;
    readonly to: number;
    readonly state: RampState;
    /** What moved it; null when only the state changed without one (docs/ramp.md). */
    readonly cause: "saturated" | "pushback" | "range" | "hold" | "resume" | null;
    /** The hold's reason while a hold is in force, else null. */
    readonly reason: string | null;
  }
  | { readonly type: "interrupted"; readonly at: number; readonly signal: string };

/** The state of an adaptive ramp (RAMP-4). */
export type RampState = "climbing" | "steady" | "at ceiling" | "backing off" | "held";

/** What a run-scope wait waits for. */
export type WaitScope =
  | "state-lease"
  | "lane"
  | "machine-slot"
  | "orphan-recovery"
  | "judge-precheck";

/** A function that receives run events; implementations must not throw. */
export type RunEventSink = (event: RunEvent) => void;
