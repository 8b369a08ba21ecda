/**
 * The result model every reporter shares: one row per planned slot in ORD-2 order, with counts,
 * the headline (OUT-H11) and the exit code (EXIT-1).
 */
import type { AttemptVerdict, SlotOutcome } from "../_shared/mod.ts";
import type { CarrySource, Plan, PlannedSlot } from "../plan/mod.ts";
import { carriedResults, locatorOf } from "../record/mod.ts";
import type { SlotReport, SlotState } from "./_reported.ts";
import type { OutcomeTable } from "./outcome_table.ts";

export { reportedResult } from "./_reported.ts";
export type { ReportedResult, SlotReport } from "./_reported.ts";

/** Headline of a finished Invocation. */
export type Headline =
  | "INTERRUPTED"
  | "ERRORED"
  | "INCOMPLETE"
  | "FAILED"
  | "PASSED"
  | "SCORED"
  | "COMPLETED";

/** Counts with every field 0. */
export function zeroCounts(): Counts {
  return {
    passed: 0,
    failed: 0,
    errored: 0,
    skipped: 0,
    scored: 0,
    reused: 0,
    unstarted: 0,
    interrupted: 0,
    notNeeded: 0,
  };
}

/** Counts over every reported result, carried ones included. */
export interface Counts {
  passed: number;
  failed: number;
  errored: number;
  skipped: number;
  scored: number;
  reused: number;
  /** Result-gap slots (STOP-6) other than interrupts. */
  unstarted: number;
  interrupted: number;
  /** Early-exit skips. */
  notNeeded: number;
}

/** The reportable outcome of one Invocation. */
export interface RunSummary {
  readonly rows: readonly SlotReport[];
  readonly counts: Counts;
  readonly headline: Headline;
  readonly hasPass: boolean;
  readonly hasScore: boolean;
  /** Tokens of Attempts executed in this Invocation. */
  readonly newTokens: number;
  /** Estimated cost of Attempts executed in this Invocation, when any estimate exists. */
  readonly costUSD: number | null;
}

const GAP_REASONS = new Set(["budget-exhausted", "halted", "fail-fast", "group-unavailable"]);

/** Builds the summary; `runIdOf(experimentIndex)` names each experiment's Run. */
export function summarize(
  plan: Plan,
  outcomes: readonly SlotOutcome[] | OutcomeTable,
  options: { runIdOf: (experimentIndex: number) => string; interrupted: boolean },
): RunSummary {
  const rowAt = Array.isArray(outcomes)
    ? (slot: PlannedSlot, runId: string) => rowOf(slot, outcomes[slot.position]!, runId)
    : tableRows(outcomes as OutcomeTable);
  const rows = plan.slots.map((slot) => rowAt(slot, options.runIdOf(slot.experimentIndex)));
  const counts = zeroCounts();
  let newTokens = 0;
  let cost: number | null = null;
  for (const row of rows) {
    if (row.state === "carried") counts.reused++;
    if (row.verdict === "interrupted" || row.reason === "interrupted") counts.interrupted++;
    else if (row.verdict !== null) counts[row.verdict]++;
    else if (row.reason === "early-exit") counts.notNeeded++;
    else if (row.reason !== null && GAP_REASONS.has(row.reason)) counts.unstarted++;
    if (row.result && row.state === "executed") {
      newTokens += (row.result.usage?.inputTokens ?? 0) + (row.result.usage?.outputTokens ?? 0);
      if (row.result.estimatedCostUSD !== null) cost = (cost ?? 0) + row.result.estimatedCostUSD;
    }
  }
  const hasPass = plan.slots.some((s) => s.kind === "pass");
  const hasScore = plan.slots.some((s) => s.kind === "score");
  return {
    rows,
    counts,
    headline: headlineOf(counts, options.interrupted, hasPass, hasScore),
    hasPass,
    hasScore,
    newTokens,
    costUSD: cost,
  };
}

/** Rows of a compact outcome table: its compact rows, else rows of the outcomes it kept. */
function tableRows(table: OutcomeTable): (slot: PlannedSlot, runId: string) => SlotReport {
  return (slot, runId) => {
    const outcome = table.outcome(slot.position);
    const row = outcome ? rowOf(slot, outcome, runId) : table.compactRow(slot, runId);
    if (!row) throw new Error(`No outcome for plan slot ${slot.position}`);
    return row;
  };
}

/**
 * The summary with the result of every carried failed or errored slot read back from its origin
 * Run, so that FAILURES and JUnit explain it exactly as they explain a fresh one (cli.md OUT-H14,
 * JUNIT-3). It reads those slots only, never a passed or scored one; call it only for outputs that
 * show failures. A result that can no longer be read stays null.
 */
export async function withCarriedResults(summary: RunSummary): Promise<RunSummary> {
  const sourceOf = (row: SlotReport): CarrySource | undefined =>
    row.state === "carried" && (row.verdict === "failed" || row.verdict === "errored") &&
      row.slot.carry.action === "carry"
      ? row.slot.carry.source
      : undefined;
  const sources = summary.rows.flatMap((row) => sourceOf(row) ?? []);
  if (sources.length === 0) return summary;
  const loaded = await carriedResults(sources);
  const rows = summary.rows.map((row) => {
    const source = sourceOf(row);
    const result = source ? loaded.get(source) : undefined;
    return result ? { ...row, result, message: result.error?.message ?? row.message } : row;
  });
  return { ...summary, rows };
}

function rowOf(slot: PlannedSlot, outcome: SlotOutcome, runId: string): SlotReport {
  switch (outcome.kind) {
    case "executed": {
      const r = outcome.result;
      return {
        slot,
        state: "executed",
        verdict: r.verdict,
        attemptId: r.attemptId,
        locator: locatorOf(r.attemptId),
        originRunId: runId,
        result: r,
        reason: r.error?.code ?? r.skipReason,
        message: r.error?.message ?? null,
        score: r.score,
        possible: r.possible ?? null,
        passAt: r.passAt ?? null,
        durationMs: r.endedAt - r.startedAt,
      };
    }
    case "carried": {
      const source = slot.carry.action === "carry" ? slot.carry.source : undefined;
      return {
        ...unexecuted(slot, "carried", (source?.verdict ?? null) as AttemptVerdict | null),
        attemptId: source?.attemptId ?? null,
        locator: source ? locatorOf(source.attemptId) : null,
        originRunId: source?.originRunId ?? null,
        score: source?.score ?? null,
        possible: source?.possible ?? null,
        passAt: source?.passAt ?? null,
        durationMs: source?.durationMs ?? null,
      };
    }
    case "not-dispatched":
      return { ...unexecuted(slot, "not-dispatched", null), reason: outcome.reason };
    case "errored-undispatched":
      return {
        ...unexecuted(slot, "errored-undispatched", "errored"),
        reason: outcome.code,
        message: outcome.message,
      };
  }
}

/** A row without an Attempt of this Invocation: every field but the state and verdict null. */
function unexecuted(
  slot: PlannedSlot,
  state: SlotState,
  verdict: AttemptVerdict | null,
): SlotReport {
  return {
    slot,
    state,
    verdict,
    attemptId: null,
    locator: null,
    originRunId: null,
    result: null,
    reason: null,
    message: null,
    score: null,
    possible: null,
    passAt: null,
    durationMs: null,
  };
}

function headlineOf(
  c: Counts,
  interrupted: boolean,
  hasPass: boolean,
  hasScore: boolean,
): Headline {
  if (interrupted) return "INTERRUPTED";
  if (c.errored > 0) return "ERRORED";
  if (c.unstarted > 0 || c.interrupted > 0) return "INCOMPLETE";
  if (c.failed > 0) return "FAILED";
  if (hasPass && hasScore) return "COMPLETED";
  return hasScore ? "SCORED" : "PASSED";
}

/** Exit code of a finished `exp` (EXIT-1); `reporterFailed` covers `--junit` and Record writes. */
export function exitCodeOf(summary: RunSummary, reporterFailed: boolean): number {
  switch (summary.headline) {
    case "INTERRUPTED":
      return 130;
    case "ERRORED":
    case "INCOMPLETE":
    case "FAILED":
      return 1;
    default:
      return reporterFailed ? 1 : 0;
  }
}

/** True when a row is a result gap (STOP-6). */
export function isGap(row: SlotReport): boolean {
  return row.reason !== null && row.verdict === null &&
    (GAP_REASONS.has(row.reason) || row.reason === "interrupted");
}
