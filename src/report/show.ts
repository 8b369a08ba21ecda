/** `niceeval show` rendering (CMD-12 … CMD-15): pure functions from gathered rows to lines. */
import { formatCost, formatDuration, formatScore } from "../_shared/mod.ts";
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

/** The Attempt of a row. */
interface ShowAttempt {
  readonly attemptId: string;
  readonly originRunId: string;
  readonly verdict: string;
  readonly score: number | null;
  readonly outcome: string;
  readonly durationMs: number;
  readonly estimatedCostUSD: number | null;
}

/** The `show --json` row shape (CMD-15). */
export function jsonRow(row: ShowRow): Record<string, unknown> {
  return {
    experimentId: row.experimentId,
    evalId: row.evalId,
    ordinal: row.ordinal,
    runId: row.runId,
    slotId: row.slotId,
    state: row.state,
    reason: row.reason,
    attempt: row.attempt ? { ...row.attempt, locator: locatorOf(row.attempt.attemptId) } : null,
  };
}

/** Project-current scope (CMD-12): one block per experiment, then the coverage section. */
export function currentLines(rows: readonly ShowRow[], experimentIds: readonly string[]): string[] {
  // One pass groups the rows (experiment, then eval in first-seen order): linear in the rows.
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
  const blocks = experimentIds.map((id) => ({ id, evals: [...byExperiment.get(id)!] }));
  const expWidth = Math.max(0, ...blocks.map((b) => b.id.length));
  const evalWidth = Math.max(0, ...blocks.flatMap((b) => b.evals.map(([e]) => e.length)));
  const texts = new Map<ShowRow[], string>();
  for (const b of blocks) for (const [, list] of b.evals) texts.set(list, evalText(list));
  const textWidth = Math.max(0, ...[...texts.values()].map((t) => t.length));
  const lines: string[] = [];
  for (const block of blocks) {
    const blockRows = block.evals.flatMap(([, list]) => list);
    lines.push(`${block.id.padEnd(expWidth)}  ${experimentText(blockRows)}`.trimEnd());
    for (const [evalId, evalRows] of block.evals) {
      const latest = evalRows.findLast((r) => r.attempt !== null)?.attempt;
      const text = texts.get(evalRows)!;
      lines.push(
        `  ${evalId.padEnd(evalWidth)}  ${
          latest ? `${text.padEnd(textWidth)}  ${locatorOf(latest.attemptId)}` : text
        }`,
      );
    }
  }
  const missing = rows.filter((r) => r.attempt === null);
  if (missing.length > 0) {
    lines.push("Result coverage");
    for (const r of missing) {
      lines.push(`  ${r.experimentId}  ${r.evalId}#${r.ordinal}  ${r.reason ?? "new"}`);
    }
  }
  return lines;
}

function experimentText(rows: readonly ShowRow[]): string {
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

function scoreText(rows: readonly ShowRow[]): string {
  const scored = rows.filter((r) => r.attempt?.verdict === "scored");
  const mean = scored.length > 0
    ? scored.reduce((s, r) => s + (r.attempt?.score ?? 0), 0) / scored.length
    : 0;
  return `score ${formatScore(mean)} · ${scored.length}/${rows.length} complete`;
}

/** RESULTS-style wording of one eval's rows (OUT-H13). */
function evalText(rows: readonly ShowRow[]): string {
  const count = (v: string) => rows.filter((r) => r.attempt?.verdict === v).length;
  const head = rows[0]?.kind === "score"
    ? scoreText(rows)
    : `${count("passed")}/${rows.length} passed`;
  const tail: string[] = [];
  if (rows[0]?.kind !== "score" && count("failed") > 0) tail.push(`${count("failed")} failed`);
  if (count("errored") > 0) tail.push(`${count("errored")} errored`);
  if (count("skipped") > 0) tail.push(`${count("skipped")} skipped`);
  if (count("interrupted") > 0) tail.push(`${count("interrupted")} interrupted`);
  const none = rows.filter((r) => r.attempt === null).length;
  if (none > 0) tail.push(`${none} no result`);
  return [head, ...tail].join(" · ");
}

/**
 * Runs scope (CMD-13): a header per Run and one table row per planned slot, then the Run's build
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
    ["Experiment", "Eval", "Attempt", "Result", "Details"],
    ...rows.map((r) => [
      r.experimentId,
      r.evalId,
      `#${r.ordinal}`,
      resultText(r),
      detailText(r),
    ]),
  ];
  const widths = table[0]!.map((_, c) => Math.max(...table.map((row) => row[c]!.length)));
  const builds = runBuildFailures(run.runId, run.diagnostics ?? []);
  return [
    `Run ${run.runId} · ${run.experimentId} · ${run.startedAt} · ${rows.length} slot${
      rows.length === 1 ? "" : "s"
    }`,
    ...table.map((row) =>
      row.map((cell, c) => c === row.length - 1 ? cell : cell.padEnd(widths[c]!)).join("  ")
        .trimEnd()
    ),
    ...(builds.length > 0 ? ["Build failures"] : []),
    ...builds.flatMap((group) => [
      `  ✗ build ${group.buildKey} · ${groupSize(group)}`,
      ...buildGroupBody(group, { indent: "    ", allAttempts: true }),
    ]),
  ];
}

function resultText(r: ShowRow): string {
  if (r.state === "carried" && r.attempt) return `using result ${locatorOf(r.attempt.attemptId)}`;
  if (r.state === "not-dispatched") return "not started";
  if (r.state === "interrupted") return "interrupted";
  if (!r.attempt) return "missing";
  return r.attempt.verdict === "scored"
    ? `scored ${formatScore(r.attempt.score ?? 0)}`
    : r.attempt.verdict;
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
  const lines = [`  error       ${e.code} (${e.phase}): ${e.message}`];
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
    } else if (e.type === "error") lines.push(`    error: ${show(e.message)}`);
  }
  return lines;
}

function show(value: unknown): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  const flat = (text ?? "").replace(/\s*\n\s*/g, " ");
  return flat.length > 200 ? flat.slice(0, 199) + "…" : flat;
}
