/**
 * What the end-of-run reports read of each planned slot: the row model, and the part of an
 * executed Attempt's result kept for it.
 */
import type { AttemptResult, AttemptVerdict, Usage } from "../_shared/mod.ts";
import type { PlannedSlot } from "../plan/mod.ts";

/** Details of a retained result without failed assertions; shared, never changed. */
export const NO_DETAILS: AttemptResult["details"] = Object.freeze({
  assertions: Object.freeze([]),
  turns: Object.freeze([]),
  phases: Object.freeze([]),
  diagnostics: Object.freeze([]),
  logs: Object.freeze([]),
});

/**
 * The part of an executed Attempt's result the end-of-run reports read (`runPlan`'s `retain`):
 * everything but the transcript, phases, logs and diagnostics, and of the assertions only the
 * failed ones. The Record and the live reporters get the whole result from its events.
 */
export function reportedResult(result: AttemptResult): AttemptResult {
  const failed = result.details.assertions.filter((a) => a.status === "failed");
  return {
    ...result,
    details: failed.length === 0 ? NO_DETAILS : { ...NO_DETAILS, assertions: failed },
  };
}

/** How a slot ended up. */
export type SlotState = "executed" | "carried" | "not-dispatched" | "errored-undispatched";

/** One planned slot as reported. */
export interface SlotReport {
  readonly slot: PlannedSlot;
  readonly state: SlotState;
  /** Null for slots closed without an Attempt (skips, gaps). */
  readonly verdict: AttemptVerdict | null;
  readonly attemptId: string | null;
  readonly locator: string | null;
  /** The Run that executed the Attempt (this Run, or the carry origin). */
  readonly originRunId: string | null;
  /**
   * The result as reports read it: of an executed Attempt, and of a carried failed or errored one
   * once {@link withCarriedResults} read it back; else null.
   */
  readonly result: ReportedResult | null;
  /** Not-dispatched reason, or the error code of an undispatched error. */
  readonly reason: string | null;
  readonly message: string | null;
  readonly score: number | null;
  /** Score evals: the possible score (`null` when unknown) and the passAt (docs/scores.md). */
  readonly possible: number | null;
  readonly passAt: number | null;
  readonly durationMs: number | null;
}

/**
 * The fields of an executed Attempt's result that the end-of-run reports read; of its usage only
 * the token counts they add up.
 */
export type ReportedResult =
  & Pick<
    AttemptResult,
    | "attemptId"
    | "experimentId"
    | "evalId"
    | "ordinal"
    | "kind"
    | "verdict"
    | "score"
    | "possible"
    | "passAt"
    | "skipReason"
    | "error"
    | "startedAt"
    | "endedAt"
    | "estimatedCostUSD"
    | "details"
  >
  & { readonly usage: Pick<Usage, "inputTokens" | "outputTokens"> | null };
