/**
 * Builds the {@link ViewModel} of a report from gathered rows, Attempt details and Runs: pure.
 * The per-experiment counts come from the same rows as `show --json`, so both always agree.
 */
import { locatorOf } from "../../record/mod.ts";
import type { ShowRow } from "../show.ts";
import { slotCounts } from "../show_runs.ts";
import type {
  ViewAttempt,
  ViewComparison,
  ViewEval,
  ViewExperiment,
  ViewModel,
  ViewRun,
  ViewSlot,
} from "./model.ts";

/** An experiment as the caller knows it. */
export interface ExperimentInput {
  readonly id: string;
  readonly agent: string | null;
  readonly model: string | null;
  readonly runIds: readonly string[];
}

/** What an Attempt's slot row does not carry: read from its record by the caller. */
export type AttemptDetail = Omit<
  ViewAttempt,
  | "locator"
  | "attemptId"
  | "experimentId"
  | "evalId"
  | "ordinal"
  | "runId"
  | "originRunId"
  | "verdict"
  | "score"
  | "outcome"
  | "durationMs"
  | "usage"
  | "tokens"
  | "costUSD"
>;

/** A published Run with how it ended, its diagnostics and one row per expected slot. */
export interface RunInput {
  readonly runId: string;
  readonly experimentId: string;
  readonly agent: string;
  readonly model: string | null;
  readonly startedAt: string;
  readonly completedAt: string | null;
  readonly completion: "completed" | "interrupted" | "crashed" | null;
  readonly rows: readonly ShowRow[];
  readonly diagnostics: readonly Readonly<Record<string, unknown>>[];
}

/** Everything {@link buildViewModel} needs. */
export interface ViewInput {
  readonly generatedAt: string;
  readonly title: string;
  readonly scope: ViewModel["scope"];
  readonly experiments: readonly ExperimentInput[];
  /** Known evals (tags, descriptions); evals of rows that are not listed get defaults. */
  readonly evals: readonly ViewEval[];
  readonly rows: readonly ShowRow[];
  /** By AttemptId, for every row that has an Attempt. */
  readonly details: ReadonlyMap<string, AttemptDetail>;
  /** Newest first. */
  readonly runs: readonly RunInput[];
  readonly compare: ViewComparison | null;
  readonly problems: readonly { readonly code: string; readonly message: string }[];
}

/** The report's data. */
export function buildViewModel(input: ViewInput): ViewModel {
  const attempts: ViewAttempt[] = [];
  const slots: ViewSlot[] = input.rows.map((row) => {
    const a = row.attempt;
    const detail = a ? input.details.get(a.attemptId) : undefined;
    if (!a || !detail || row.runId === null) return slotOf(row, null);
    attempts.push({
      ...detail,
      assertions: detail.assertions.map(withoutEmpty),
      locator: locatorOf(a.attemptId),
      attemptId: a.attemptId,
      experimentId: row.experimentId,
      evalId: row.evalId,
      ordinal: row.ordinal,
      runId: row.runId,
      originRunId: a.originRunId,
      verdict: a.verdict,
      score: a.score,
      possible: a.possible ?? null,
      passAt: a.passAt ?? null,
      outcome: a.outcome,
      durationMs: a.durationMs,
      usage: a.usage ?? null,
      tokens: tokensOf(a.usage ?? null),
      costUSD: a.estimatedCostUSD,
    });
    return slotOf(row, attempts.length - 1);
  });
  return {
    format: "niceeval.view",
    schemaVersion: 1,
    generatedAt: input.generatedAt,
    title: input.title,
    scope: input.scope,
    experiments: experimentsOf(input.experiments, input.rows),
    evals: evalsOf(input.evals, input.rows),
    slots,
    attempts,
    runs: input.runs.map(runOf),
    compare: input.compare,
    problems: input.problems,
  };
}

function slotOf(row: ShowRow, attempt: number | null): ViewSlot {
  return {
    experimentId: row.experimentId,
    evalId: row.evalId,
    ordinal: row.ordinal,
    state: row.state,
    reason: row.reason,
    runId: row.runId,
    verdict: attempt === null ? null : row.attempt!.verdict,
    attempt,
  };
}

/** One overview row per experiment; its rows grouped in one pass. */
function experimentsOf(
  experiments: readonly ExperimentInput[],
  rows: readonly ShowRow[],
): ViewExperiment[] {
  const byExperiment = new Map<string, ShowRow[]>(experiments.map((e) => [e.id, []]));
  for (const row of rows) byExperiment.get(row.experimentId)?.push(row);
  return experiments.map((e) => {
    const own = byExperiment.get(e.id)!;
    const pass = own.filter((r) => r.kind === "pass");
    const score = own.filter((r) => r.kind === "score");
    // A score below its passAt is failed and still scored (docs/scores.md).
    const scored = score.filter((r) =>
      r.attempt?.verdict === "scored" || r.attempt?.verdict === "failed"
    );
    const attempts = own.flatMap((r) => r.attempt ? [r.attempt] : []);
    const durations = attempts.map((a) => a.durationMs).sort((x, y) => x - y);
    return {
      id: e.id,
      agent: e.agent,
      model: e.model,
      runIds: e.runIds,
      slots: own.length,
      counts: slotCounts(own),
      passRate: passRateOf(own),
      passSlots: pass.length,
      meanScore: scored.length === 0
        ? null
        : scored.reduce((s, r) => s + (r.attempt!.score ?? 0), 0) / scored.length,
      meanPossible: scored.length === 0 || scored.some((r) =>
          (r.attempt!.possible ?? null) === null
        )
        ? null
        : scored.reduce((s, r) => s + r.attempt!.possible!, 0) / scored.length,
      scoreSlots: score.length,
      durationP50Ms: percentile(durations, 0.5),
      durationP95Ms: percentile(durations, 0.95),
      tokens: sumKnown(attempts.map((a) => tokensOf(a.usage ?? null))),
      costUSD: sumKnown(attempts.map((a) => a.estimatedCostUSD)),
    };
  });
}

/** The listed evals, then any other eval of the rows, in first-seen order. */
function evalsOf(known: readonly ViewEval[], rows: readonly ShowRow[]): ViewEval[] {
  const byId = new Map(known.map((e) => [e.id, e]));
  const out = new Map<string, ViewEval>();
  for (const row of rows) {
    if (out.has(row.evalId)) continue;
    out.set(
      row.evalId,
      byId.get(row.evalId) ?? { id: row.evalId, kind: row.kind, tags: [], description: null },
    );
  }
  return [...out.values()];
}

function runOf(run: RunInput): ViewRun {
  return {
    runId: run.runId,
    experimentId: run.experimentId,
    agent: run.agent,
    model: run.model,
    startedAt: run.startedAt,
    completedAt: run.completedAt,
    completion: run.completion,
    slots: run.rows.length,
    counts: slotCounts(run.rows),
    passRate: passRateOf(run.rows),
    diagnostics: run.diagnostics,
  };
}

/**
 * An assertion entry without its null and empty-list fields: the page shows what is
 * there, and the many unset fields of each entry would otherwise make up much of a large report.
 */
function withoutEmpty(entry: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(entry)) {
    if (value === null || value === undefined) continue;
    if (Array.isArray(value) && value.length === 0) continue;
    kept[key] = value;
  }
  return kept;
}

/** Passed ÷ slots of pass evals, as `show` prints it; null without pass evals. */
export function passRateOf(rows: readonly ShowRow[]): number | null {
  let total = 0;
  let passed = 0;
  for (const row of rows) {
    if (row.kind !== "pass") continue;
    total++;
    if (row.attempt?.verdict === "passed") passed++;
  }
  return total === 0 ? null : passed / total;
}

/** The nearest-rank percentile of ascending `sorted`; null when empty. */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil(p * sorted.length));
  return sorted[rank - 1]!;
}

function tokensOf(
  usage: { readonly inputTokens?: number | null; readonly outputTokens?: number | null } | null,
): number | null {
  const input = usage?.inputTokens ?? null;
  const output = usage?.outputTokens ?? null;
  return input === null && output === null ? null : (input ?? 0) + (output ?? 0);
}

function sumKnown(values: readonly (number | null)[]): number | null {
  const known = values.filter((v): v is number => v !== null);
  return known.length === 0 ? null : known.reduce((s, v) => s + v, 0);
}
