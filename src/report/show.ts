/** `niceeval show` rendering (CMD-12 … CMD-15): pure functions from gathered rows to lines. */
import { formatCost, formatDuration, formatScore, formatTokens } from "../_shared/mod.ts";
import { locatorOf } from "../record/mod.ts";
import {
  type BuildDiagnostic,
  buildGroupBody,
  groupSize,
  runBuildFailures,
} from "./build_failures.ts";

/** One slot as `show` reports it. */
export interface ShowRow {
  readonly experimentId: string;
  readonly evalId: string;
  readonly ordinal: number;
  readonly kind: "pass" | "score";
  readonly runId: string | null;
  readonly slotId: string;
  readonly state: "executed" | "carried" | "not-dispatched" | "interrupted" | "missing";
  readonly reason: string | null;
  readonly attempt: ShowAttempt | null;
}

/** Token usage as an Attempt document stores it. */
type ShowUsage = {
  readonly inputTokens?: number | null;
  readonly outputTokens?: number | null;
} | null;

/** The Attempt of a row. */
interface ShowAttempt {
  readonly attemptId: string;
  readonly originRunId: string;
  readonly verdict: string;
  readonly score: number | null;
  readonly outcome: string;
  readonly durationMs: number;
  readonly estimatedCostUSD: number | null;
  /** The stored `usage`; absent where the caller has none to give. */
  readonly usage?: ShowUsage | undefined;
  /** Score evals: the possible score and the passAt it ran with (docs/scores.md). */
  readonly possible?: number | null | undefined;
  readonly passAt?: number | null | undefined;
}

/** The measure columns of an eval line: duration, tokens, cost. */
const EVAL_MEASURES: ReadonlySet<number> = new Set([1, 2, 3]);
/** The measure columns of a `--run` table row: Duration, Tokens, Cost. */
const RUN_MEASURES: ReadonlySet<number> = new Set([4, 5, 6]);

/** Placeholder of a measure the Record does not know (no usage, no price). */
const UNKNOWN = "—";

/**
 * The `show --json` row shape (CMD-15). Keys added after the first release (`attempt.usage`,
 * `attempt.tokens`) come after the original ones; none is ever renamed or removed.
 */
export function jsonRow(row: ShowRow): Record<string, unknown> {
  return {
    experimentId: row.experimentId,
    evalId: row.evalId,
    ordinal: row.ordinal,
    runId: row.runId,
    slotId: row.slotId,
    state: row.state,
    reason: row.reason,
    attempt: row.attempt ? jsonAttempt(row.attempt) : null,
  };
}

/** The `attempt` of a JSON row; `possible` and `passAt` (docs/scores.md) come last. */
function jsonAttempt(a: ShowAttempt): Record<string, unknown> {
  const { possible, passAt, ...attempt } = a;
  return {
    ...attempt,
    usage: a.usage ?? null,
    locator: locatorOf(a.attemptId),
    tokens: tokensOf(a.usage ?? null),
    possible: possible ?? null,
    passAt: passAt ?? null,
  };
}

/** Input plus output tokens, or null when the usage reports neither. */
function tokensOf(usage: ShowUsage): number | null {
  const input = usage?.inputTokens ?? null;
  const output = usage?.outputTokens ?? null;
  return input === null && output === null ? null : (input ?? 0) + (output ?? 0);
}

/**
 * The Runs that the current results of each experiment come from (a row's `runId`, for rows with
 * a result), newest first by `startedAtMs`, ties by RunId.
 */
export function sourceRuns(
  rows: readonly ShowRow[],
  startedAtMs: ReadonlyMap<string, number>,
): Map<string, string[]> {
  const sets = new Map<string, Set<string>>();
  for (const row of rows) {
    if (row.attempt === null || row.runId === null) continue;
    let set = sets.get(row.experimentId);
    if (!set) sets.set(row.experimentId, set = new Set());
    set.add(row.runId);
  }
  const newest = (a: string, b: string) =>
    (startedAtMs.get(b) ?? 0) - (startedAtMs.get(a) ?? 0) || (a < b ? -1 : a > b ? 1 : 0);
  return new Map([...sets].map(([id, set]) => [id, [...set].sort(newest)]));
}

/** Options of {@link currentLines}. */
export interface CurrentLinesOptions {
  /** The Runs each experiment draws from, newest first ({@link sourceRuns}); none listed if absent. */
  readonly runIds?: ReadonlyMap<string, readonly string[]>;
}

/** One experiment of the project-current scope, its rows grouped by eval in first-seen order. */
interface Block {
  readonly id: string;
  readonly evals: [string, ShowRow[]][];
  /** No row of the experiment has a result. */
  readonly empty: boolean;
}

/**
 * Project-current scope (CMD-12): one block per experiment, each eval line with its median
 * duration, total tokens and total estimated cost over its Attempts; then the Runs the results
 * come from, then the coverage section. An experiment without any result says how to get one.
 */
export function currentLines(
  rows: readonly ShowRow[],
  experimentIds: readonly string[],
  options: CurrentLinesOptions = {},
): string[] {
  const blocks = groupBlocks(rows, experimentIds);
  // Never-run experiments list no evals: their header says what to do.
  const shown = blocks.flatMap((b) => neverRun(b) ? [] : b.evals);
  const expWidth = Math.max(0, ...blocks.map((b) => b.id.length));
  const evalWidth = Math.max(0, ...shown.map(([e]) => e.length));
  const cells = new Map(shown.map(([, list]) => [list, evalCells(list)]));
  const widths = columnWidths([...cells.values()].filter((c) => c.length > 1));
  const lines: string[] = [];
  for (const block of blocks) {
    lines.push(`${block.id.padEnd(expWidth)}  ${experimentText(block)}`.trimEnd());
    if (neverRun(block)) continue;
    for (const [evalId, evalRows] of block.evals) {
      const row = cells.get(evalRows)!;
      const text = row.length > 1 ? alignCells(row, widths, EVAL_MEASURES) : row[0]!;
      lines.push(`  ${evalId.padEnd(evalWidth)}  ${text}`);
    }
  }
  const sources = experimentIds.flatMap((id) =>
    (options.runIds?.get(id) ?? []).map((runId, i) => ({ id: i === 0 ? id : "", runId }))
  );
  if (sources.length > 0) {
    lines.push("Runs");
    for (const s of sources) lines.push(`  ${s.id.padEnd(expWidth)}  ${s.runId}`);
  }
  const neverRunIds = new Set(blocks.filter(neverRun).map((b) => b.id));
  const missing = rows.filter((r) => r.attempt === null && !neverRunIds.has(r.experimentId));
  if (missing.length > 0) {
    lines.push("Result coverage");
    for (const r of missing) {
      lines.push(`  ${r.experimentId}  ${r.evalId}#${r.ordinal}  ${r.reason ?? "new"}`);
    }
  }
  return lines;
}

/** One pass groups the rows (experiment, then eval in first-seen order): linear in the rows. */
function groupBlocks(rows: readonly ShowRow[], experimentIds: readonly string[]): Block[] {
  const byExperiment = new Map<string, Map<string, ShowRow[]>>(
    experimentIds.map((id) => [id, new Map()]),
  );
  for (const row of rows) {
    const evals = byExperiment.get(row.experimentId);
    if (!evals) continue;
    let list = evals.get(row.evalId);
    if (!list) evals.set(row.evalId, list = []);
    list.push(row);
  }
  return experimentIds.map((id) => {
    const evals = [...byExperiment.get(id)!];
    const empty = evals.every(([, list]) => list.every((r) => r.attempt === null));
    return { id, evals, empty };
  });
}

/** An experiment with slots, none of which was ever run (every one is new to the Record). */
function neverRun(block: Block): boolean {
  return block.empty && block.evals.length > 0 &&
    block.evals.every(([, list]) => list.every((r) => (r.reason ?? "new") === "new"));
}

function experimentText(block: Block): string {
  if (block.evals.length > 0 && block.empty) {
    const what = neverRun(block) ? "no results yet" : "no current results";
    return `${what} — run niceeval exp ${block.id}`;
  }
  const rows = block.evals.flatMap(([, list]) => list);
  const pass = rows.filter((r) => r.kind === "pass");
  const score = rows.filter((r) => r.kind === "score");
  const parts: string[] = [];
  if (pass.length > 0) {
    const k = pass.filter((r) => r.attempt?.verdict === "passed").length;
    parts.push(`${k}/${pass.length} passed (${Math.round((k / pass.length) * 100)}%)`);
  }
  if (score.length > 0) parts.push(scoreText(score));
  return parts.join(" · ");
}

/**
 * `score <mean>/<possible> (<p>%) · <c>/<N> complete` (docs/scores.md); a score below its passAt
 * is failed but still scored; `score —` when nothing was scored (OUT-H13).
 */
function scoreText(rows: readonly ShowRow[]): string {
  const scored = rows.flatMap((r) =>
    r.attempt && (r.attempt.verdict === "scored" || r.attempt.verdict === "failed")
      ? [r.attempt]
      : []
  );
  const head = scored.length === 0 ? "score —" : `score ${scoreOf(scored)}`;
  return `${head} · ${scored.length}/${rows.length} complete`;
}

/** `below passAt <p>` when the failed Attempts share one passAt, else `below passAt`. */
function belowPassAt(rows: readonly ShowRow[]): string {
  const thresholds = new Set(
    rows.flatMap((r) => r.attempt?.verdict === "failed" ? [r.attempt.passAt ?? null] : []),
  );
  const only = thresholds.size === 1 ? [...thresholds][0] : null;
  return only === null || only === undefined ? "below passAt" : `below passAt ${formatScore(only)}`;
}

/** `<mean>` or `<mean>/<mean possible> (<p>%)` of scored Attempts (at least one). */
function scoreOf(scored: readonly ShowAttempt[]): string {
  const earned = scored.reduce((s, a) => s + (a.score ?? 0), 0);
  const mean = formatScore(earned / scored.length);
  if (scored.some((a) => a.possible === null || a.possible === undefined)) return mean;
  const possible = scored.reduce((s, a) => s + (a.possible ?? 0), 0);
  const pct = possible > 0 ? ` (${Math.floor((earned / possible) * 100)}%)` : "";
  return `${mean}/${formatScore(possible / scored.length)}${pct}`;
}

/**
 * The cells of one eval line: its RESULTS-style text alone when no Attempt has a result, else the
 * text, median duration, total tokens, total estimated cost and the latest Attempt's locator.
 */
function evalCells(rows: readonly ShowRow[]): string[] {
  const attempts = rows.flatMap((r) => r.attempt ? [r.attempt] : []);
  const text = evalText(rows);
  if (attempts.length === 0) return [text];
  const tokens = sumKnown(attempts.map((a) => tokensOf(a.usage ?? null)));
  const cost = sumKnown(attempts.map((a) => a.estimatedCostUSD));
  return [
    text,
    formatDuration(median(attempts.map((a) => a.durationMs))),
    tokens === null ? UNKNOWN : `${formatTokens(tokens)} tok`,
    cost === null ? UNKNOWN : formatCost(cost),
    locatorOf(attempts.at(-1)!.attemptId),
  ];
}

/** The sum of the known values, or null when none is known. */
function sumKnown(values: readonly (number | null)[]): number | null {
  const known = values.filter((v): v is number => v !== null);
  return known.length === 0 ? null : known.reduce((s, v) => s + v, 0);
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The widest cell of each column. */
export function columnWidths(rows: readonly (readonly string[])[]): number[] {
  const columns = Math.max(0, ...rows.map((r) => r.length));
  return Array.from({ length: columns }, (_, c) => Math.max(0, ...rows.map((r) => len(r[c]))));
}

const len = (cell: string | undefined) => cell?.length ?? 0;

/**
 * Joins cells with two spaces: the `measures` columns (numbers) padded left, the others right; the
 * last column is never padded.
 */
export function alignCells(
  cells: readonly string[],
  widths: readonly number[],
  measures: ReadonlySet<number>,
): string {
  return cells.map((cell, c) =>
    c === cells.length - 1
      ? cell
      : measures.has(c)
      ? cell.padStart(widths[c]!)
      : cell.padEnd(widths[c]!)
  ).join("  ").trimEnd();
}

/** RESULTS-style wording of one eval's rows (OUT-H13). */
function evalText(rows: readonly ShowRow[]): string {
  const count = (v: string) => rows.filter((r) => r.attempt?.verdict === v).length;
  const head = rows[0]?.kind === "score"
    ? scoreText(rows)
    : `${count("passed")}/${rows.length} passed`;
  const tail: string[] = [];
  if (count("failed") > 0) {
    tail.push(
      `${count("failed")} failed${rows[0]?.kind === "score" ? ` (${belowPassAt(rows)})` : ""}`,
    );
  }
  if (count("errored") > 0) tail.push(`${count("errored")} errored`);
  if (count("skipped") > 0) tail.push(`${count("skipped")} skipped`);
  if (count("interrupted") > 0) tail.push(`${count("interrupted")} interrupted`);
  // OUT-H13's gap wording: `<u> not run (<reasons>)`, the reasons of the coverage section.
  const none = rows.filter((r) => r.attempt === null);
  if (none.length > 0) {
    const reasons = new Set(none.map((r) => r.reason ?? "new"));
    tail.push(`${none.length} not run (${[...reasons].join(", ")})`);
  }
  return [head, ...tail].join(" · ");
}

/**
 * Runs scope (CMD-13): a header per Run and one table row per planned slot (with its Attempt's
 * duration, tokens and estimated cost, carried ones included), then the Run's build
 * failures, one entry per build key with every affected Attempt (sandboxes.md rules 70–71).
 */
export function runLines(
  run: {
    runId: string;
    experimentId: string;
    startedAt: string;
    /** The Run document's diagnostics. */
    diagnostics?: readonly BuildDiagnostic[];
  },
  rows: readonly ShowRow[],
): string[] {
  const table = [
    ["Experiment", "Eval", "Attempt", "Result", "Duration", "Tokens", "Cost", "Details"],
    ...rows.map((r) => [
      r.experimentId,
      r.evalId,
      `#${r.ordinal}`,
      resultText(r),
      ...measureCells(r.attempt),
      detailText(r),
    ]),
  ];
  const widths = columnWidths(table);
  const builds = runBuildFailures(run.runId, run.diagnostics ?? []);
  return [
    `Run ${run.runId} · ${run.experimentId} · ${run.startedAt} · ${rows.length} slot${
      rows.length === 1 ? "" : "s"
    }`,
    ...table.map((row) => alignCells(row, widths, RUN_MEASURES)),
    ...(builds.length > 0 ? ["Build failures"] : []),
    ...builds.flatMap((group) => [
      `  ✗ build ${group.buildKey} · ${groupSize(group)}`,
      ...buildGroupBody(group, { indent: "    ", allAttempts: true }),
    ]),
  ];
}

/** Duration, tokens and estimated cost of a row's Attempt; empty cells without an Attempt. */
function measureCells(a: ShowAttempt | null): [string, string, string] {
  if (!a) return ["", "", ""];
  const tokens = tokensOf(a.usage ?? null);
  return [
    formatDuration(a.durationMs),
    tokens === null ? UNKNOWN : formatTokens(tokens),
    a.estimatedCostUSD === null ? UNKNOWN : formatCost(a.estimatedCostUSD),
  ];
}

function resultText(r: ShowRow): string {
  if (r.state === "carried" && r.attempt) return `using result ${locatorOf(r.attempt.attemptId)}`;
  if (r.state === "not-dispatched") return "not started";
  if (r.state === "interrupted") return "interrupted";
  if (!r.attempt) return "missing";
  if (r.kind === "score" && (r.attempt.verdict === "scored" || r.attempt.verdict === "failed")) {
    return `${r.attempt.verdict} ${scoreOf([r.attempt])}`;
  }
  return r.attempt.verdict;
}

function detailText(r: ShowRow): string {
  if (r.state === "carried" && r.attempt) return `from run ${r.attempt.originRunId}`;
  if (r.state === "not-dispatched") return r.reason ?? "";
  if (r.attempt) return locatorOf(r.attempt.attemptId);
  return r.reason ?? "";
}

/** What attempt scope (CMD-14) renders. */
export interface AttemptView {
  readonly locator: string;
  readonly verdict: string;
  readonly experimentId: string;
  readonly agent: string;
  readonly model: string | null;
  readonly evalId: string;
  readonly ordinal: number;
  readonly runId: string;
  readonly startedAt: string;
  readonly durationMs: number;
  readonly usage: { inputTokens?: number | null; outputTokens?: number | null } | null;
  readonly estimatedCostUSD: number | null;
  /** `location` and `stack` are absent in Records written before they existed. */
  readonly error: {
    code: string;
    phase: string;
    message: string;
    location?: string | null | undefined;
    stack?: string | null | undefined;
  } | null;
  readonly assertions: readonly Record<string, unknown>[];
  readonly turns: readonly Record<string, unknown>[];
  /** `events.json` `logs`: `t.log` lines and attributed `console.*` output, in order. */
  readonly logs?: readonly unknown[] | undefined;
  /** Score evals: earned, possible and passAt (docs/scores.md); absent for pass evals. */
  readonly score?: {
    readonly earned: number | null;
    readonly possible: number | null;
    readonly passAt: number | null;
  } | undefined;
}

/** `1/2 (50%) · passAt 1.5` of the attempt scope. */
function scoreLine(score: NonNullable<AttemptView["score"]>): string {
  const attempt = { score: score.earned, possible: score.possible } as ShowAttempt;
  const passAt = score.passAt === null ? "" : ` · passAt ${formatScore(score.passAt)}`;
  return `${scoreOf([attempt])}${passAt}`;
}

/** Attempt scope (CMD-14). */
export function attemptViewLines(v: AttemptView): string[] {
  const lines = [
    `Attempt ${v.locator} · ${v.verdict}`,
    `  experiment  ${v.experimentId} (agent ${v.agent}${v.model ? `, model ${v.model}` : ""})`,
    `  eval        ${v.evalId} #${v.ordinal}`,
    `  run         ${v.runId}`,
    `  started     ${v.startedAt} · ${formatDuration(v.durationMs)}`,
  ];
  if (v.usage) {
    const tokens = `${v.usage.inputTokens ?? "?"} in / ${v.usage.outputTokens ?? "?"} out`;
    lines.push(
      `  usage       ${tokens}${
        v.estimatedCostUSD !== null ? ` · ${formatCost(v.estimatedCostUSD)}` : ""
      }`,
    );
  }
  if (v.score && v.score.earned !== null) lines.push(`  score       ${scoreLine(v.score)}`);
  if (v.error) lines.push(...errorLines(v.error));
  lines.push("Assertions");
  if (v.assertions.length === 0) lines.push("  (none)");
  for (const a of v.assertions) {
    const mark = a.status === "passed" ? "✓" : a.status === "failed" ? "✗" : "–";
    const parts = [String(a.label ?? a.criterion)];
    if (a.expected !== null && a.expected !== undefined) parts.push(`expected ${show(a.expected)}`);
    if (a.received !== null && a.received !== undefined) parts.push(`received ${show(a.received)}`);
    if (a.reason) parts.push(String(a.reason));
    lines.push(`  ${mark} ${parts.join(" · ")}${a.source ? `  (${a.source})` : ""}`);
  }
  lines.push("Turns");
  if (v.turns.length === 0) lines.push("  (none)");
  for (const t of v.turns) lines.push(...turnLines(t));
  if (v.logs && v.logs.length > 0) {
    lines.push("Logs");
    for (const log of v.logs) lines.push(...logLines(log));
  }
  return lines;
}

/** One log entry, each of its lines indented; never cut, like logs elsewhere. */
function logLines(log: unknown): string[] {
  const entry = typeof log === "object" && log !== null ? log as Record<string, unknown> : {};
  const text = typeof entry.text === "string" ? entry.text : JSON.stringify(log) ?? "";
  return text.split("\n").map((line) => `  ${line}`.trimEnd());
}

/** The error line, then where user code threw it and its user frames, when known. */
function errorLines(e: NonNullable<AttemptView["error"]>): string[] {
  // A multi-line message keeps its lines, each further one indented under the first (issue 18.11).
  const [first, ...more] = e.message.split(/\r?\n/);
  const lines = [`  error       ${e.code} (${e.phase}): ${first}`.trimEnd()];
  for (const line of more) lines.push(`${" ".repeat(14)}${line}`.trimEnd());
  if (e.location) lines.push(`  location    ${e.location}`);
  const frames = e.stack ? e.stack.split("\n") : [];
  frames.forEach((frame, i) => lines.push(`  ${i === 0 ? "stack" : ""}`.padEnd(14) + frame));
  return lines;
}

function turnLines(t: Record<string, unknown>): string[] {
  const lines = [`  > ${show(t.input)}  (${t.status})`];
  const events = Array.isArray(t.events) ? t.events as Record<string, unknown>[] : [];
  const finished = new Map<unknown, Record<string, unknown>>();
  for (const e of events) if (e.type === "operation.finished") finished.set(e.operationId, e);
  for (const e of events) {
    if (e.type === "message" && e.role === "assistant") lines.push(`    ${show(e.text)}`);
    else if (e.type === "operation.started") {
      const op = e.operation as Record<string, unknown>;
      lines.push(
        `    tool ${op.name} ${show(op.input)} → ${
          finished.get(e.operationId)?.status ?? "pending"
        }`,
      );
    } else if (e.type === "error") {
      // An error's message is never cut (issue 18.1), only put on one line.
      lines.push(`    error: ${String(e.message ?? "").replace(/\s*\n\s*/g, " ")}`);
    }
  }
  return lines;
}

function show(value: unknown): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  const flat = (text ?? "").replace(/\s*\n\s*/g, " ");
  return flat.length > 200 ? flat.slice(0, 199) + "…" : flat;
}
