/**
 * `niceeval show` rendering (CMD-12, CMD-13, CMD-15): the source Runs and the duration, token and
 * cost columns of the project scope, the never-run experiment, the `--run` table's measures, the
 * `--json` row keys, and the `--runs` list.
 */
import assert from "node:assert/strict";
import { locatorOf } from "../../src/record/mod.ts";
import {
  currentLines,
  jsonRow,
  runLines,
  type RunListEntry,
  runListLines,
  type ShowRow,
  slotCounts,
  sourceRuns,
} from "../../src/report/mod.ts";

const RUN_A = "aaaaaaaa-0000-4000-8000-000000000000";
const RUN_B = "bbbbbbbb-0000-4000-8000-000000000000";

interface RowSpec {
  experimentId?: string;
  evalId?: string;
  ordinal?: number;
  kind?: "pass" | "score";
  runId?: string | null;
  state?: ShowRow["state"];
  reason?: string | null;
  /** Null: no Attempt. */
  verdict?: string | null;
  score?: number | null;
  durationMs?: number;
  usage?: { inputTokens: number | null; outputTokens: number | null } | null;
  costUSD?: number | null;
  /** The Attempt's id (its locator is derived from it). */
  attemptId?: string;
  originRunId?: string;
}

function row(spec: RowSpec = {}): ShowRow {
  const evalId = spec.evalId ?? "greet";
  const ordinal = spec.ordinal ?? 0;
  const runId = spec.runId === undefined ? RUN_A : spec.runId;
  const verdict = spec.verdict === undefined ? "passed" : spec.verdict;
  return {
    experimentId: spec.experimentId ?? "exp",
    evalId,
    ordinal,
    kind: spec.kind ?? "pass",
    runId,
    slotId: `${evalId}#${ordinal}`,
    state: spec.state ?? (verdict === null ? "missing" : "executed"),
    reason: spec.reason === undefined ? (verdict === null ? "new" : null) : spec.reason,
    attempt: verdict === null ? null : {
      attemptId: spec.attemptId ?? `${evalId}-${ordinal}`,
      originRunId: spec.originRunId ?? runId ?? RUN_A,
      verdict,
      score: spec.score ?? null,
      outcome: verdict === "errored" ? "errored" : "completed",
      durationMs: spec.durationMs ?? 1000,
      estimatedCostUSD: spec.costUSD === undefined ? null : spec.costUSD,
      usage: spec.usage === undefined ? null : spec.usage,
    },
  };
}

Deno.test("currentLines() gives each eval its median duration, total tokens, total cost and latest locator", () => {
  const rows = [
    row({ ordinal: 0, durationMs: 1000, usage: { inputTokens: 900, outputTokens: 100 } }),
    row({ ordinal: 1, durationMs: 9000, usage: { inputTokens: 1000, outputTokens: null } }),
    row({ ordinal: 2, durationMs: 2000, usage: null, costUSD: 0.25, verdict: "failed" }),
    row({ evalId: "weather", kind: "score", verdict: "scored", score: 2, durationMs: 61_000 }),
    row({ evalId: "weather", kind: "score", ordinal: 1, verdict: "scored", score: 1 }),
  ];
  assert.deepEqual(currentLines(rows, ["exp"]), [
    "exp  2/3 passed (67%) · score 1.5 · 2/2 complete",
    `  greet    2/3 passed · 1 failed     2.0s  2k tok  ~$0.25  ${locatorOf("greet-2")}`,
    `  weather  score 1.5 · 2/2 complete   31s       —       —  ${locatorOf("weather-1")}`,
  ]);
});

Deno.test("currentLines() leaves an eval without any result its text alone and lists its slots under coverage", () => {
  const rows = [
    row({ evalId: "greet" }),
    row({ evalId: "farewell", verdict: null }),
  ];
  assert.deepEqual(currentLines(rows, ["exp"]), [
    "exp  1/2 passed (50%)",
    `  greet     1/1 passed  1.0s  —  —  ${locatorOf("greet-0")}`,
    "  farewell  0/1 passed · 1 not run (new)",
    "Result coverage",
    "  exp  farewell#0  new",
  ]);
});

Deno.test("currentLines() says an experiment that never ran has no results yet, instead of 0% passed", () => {
  const rows = [
    row({ experimentId: "ran" }),
    row({ experimentId: "fresh", verdict: null, runId: null }),
    row({ experimentId: "fresh", evalId: "farewell", verdict: null, runId: null }),
  ];
  assert.deepEqual(currentLines(rows, ["fresh", "ran"]), [
    "fresh  no results yet — run niceeval exp fresh",
    "ran    1/1 passed (100%)",
    `  greet  1/1 passed  1.0s  —  —  ${locatorOf("greet-0")}`,
  ]);
});

Deno.test("currentLines() says an experiment whose results all went stale has no current results, with its coverage", () => {
  const rows = [
    row({ verdict: null, reason: "identity-changed" }),
    row({ ordinal: 1, verdict: null, reason: "new" }),
  ];
  assert.deepEqual(currentLines(rows, ["exp"]), [
    "exp  no current results — run niceeval exp exp",
    "  greet  0/2 passed · 2 not run (identity-changed, new)",
    "Result coverage",
    "  exp  greet#0  identity-changed",
    "  exp  greet#1  new",
  ]);
});

Deno.test("currentLines() lists the Runs each experiment draws from, newest first, after the blocks", () => {
  const rows = [
    row({ experimentId: "exp", evalId: "greet", runId: RUN_A }),
    row({ experimentId: "exp", evalId: "farewell", runId: RUN_B }),
    row({ experimentId: "other", runId: RUN_A }),
    // A stale candidate's Run is no source: the row has no result.
    row({ experimentId: "other", evalId: "farewell", runId: RUN_B, verdict: null }),
  ];
  const runIds = sourceRuns(rows, new Map([[RUN_A, 1], [RUN_B, 2]]));
  assert.deepEqual([...runIds], [["exp", [RUN_B, RUN_A]], ["other", [RUN_A]]]);
  const lines = currentLines(rows, ["exp", "other"], { runIds });
  assert.deepEqual(lines.slice(lines.indexOf("Runs"), lines.indexOf("Result coverage")), [
    "Runs",
    `  exp    ${RUN_B}`,
    `         ${RUN_A}`,
    `  other  ${RUN_A}`,
  ]);
});

Deno.test("sourceRuns() orders Runs that started at the same time by RunId", () => {
  const rows = [row({ runId: RUN_B }), row({ evalId: "farewell", runId: RUN_A })];
  assert.deepEqual(sourceRuns(rows, new Map([[RUN_A, 5], [RUN_B, 5]])).get("exp"), [RUN_A, RUN_B]);
});

Deno.test("runLines() adds right-aligned Duration, Tokens and Cost columns, empty without an Attempt", () => {
  const rows = [
    row({ durationMs: 1500, usage: { inputTokens: 18_000, outputTokens: 400 }, costUSD: 1.5 }),
    row({
      ordinal: 1,
      state: "carried",
      attemptId: "old",
      originRunId: RUN_B,
      durationMs: 75_000,
    }),
    row({ ordinal: 2, verdict: null, state: "not-dispatched", reason: "budget" }),
  ];
  const run = { runId: RUN_A, experimentId: "exp", startedAt: "2026-12-02T10:00:00.000Z" };
  assert.deepEqual(runLines(run, rows), [
    `Run ${RUN_A} · exp · 2026-12-02T10:00:00.000Z · 3 slots`,
    "Experiment  Eval   Attempt  Result                       Duration  Tokens    Cost  Details",
    `exp         greet  #0       passed                           1.5s   18.4k  ~$1.50  ${
      locatorOf("greet-0")
    }`,
    `exp         greet  #1       using result ${
      locatorOf("old")
    }    1m 15s       —       —  from run ${RUN_B}`,
    "exp         greet  #2       not started                                            budget",
  ]);
});

Deno.test("jsonRow() keeps every key of the first release in order and adds usage, tokens, possible and passAt", () => {
  const usage = { inputTokens: 10, outputTokens: 5 };
  const json = jsonRow(row({ usage, costUSD: 0.5, durationMs: 42 }));
  assert.deepEqual(Object.keys(json), [
    "experimentId",
    "evalId",
    "ordinal",
    "runId",
    "slotId",
    "state",
    "reason",
    "attempt",
  ]);
  assert.deepEqual(json.attempt, {
    attemptId: "greet-0",
    originRunId: RUN_A,
    verdict: "passed",
    score: null,
    outcome: "completed",
    durationMs: 42,
    estimatedCostUSD: 0.5,
    usage,
    locator: locatorOf("greet-0"),
    tokens: 15,
    possible: null,
    passAt: null,
  });
  const unknown = jsonRow(row({ usage: null })).attempt as Record<string, unknown>;
  assert.deepEqual([unknown.usage, unknown.tokens], [null, null]);
  assert.equal(jsonRow(row({ verdict: null })).attempt, null);
});

Deno.test("slotCounts() counts verdicts, and interrupted or not-run slots without an Attempt", () => {
  const rows = [
    row({ verdict: "passed" }),
    row({ verdict: "passed", state: "carried" }),
    row({ verdict: "failed" }),
    row({ verdict: "errored" }),
    row({ verdict: "skipped" }),
    row({ verdict: "scored", kind: "score" }),
    row({ verdict: "interrupted", state: "interrupted" }),
    row({ verdict: null, state: "interrupted", reason: null }),
    row({ verdict: null, state: "not-dispatched", reason: "budget" }),
  ];
  assert.deepEqual(slotCounts(rows), {
    passed: 2,
    failed: 1,
    errored: 1,
    skipped: 1,
    scored: 1,
    interrupted: 2,
    notRun: 1,
  });
});

function entry(runId: string, patch: Partial<RunListEntry>): RunListEntry {
  return {
    runId,
    experimentId: "exp",
    agent: "scripted",
    model: null,
    startedAt: "2026-12-02T10:00:59.999Z",
    completedAt: null,
    completion: "completed",
    slots: 0,
    counts: slotCounts([]),
    ...patch,
  };
}

Deno.test("runListLines() lists each Run with its start, experiment, completion and non-zero counts", () => {
  const lines = runListLines([
    entry(RUN_B, {
      experimentId: "checks/fail",
      completion: "interrupted",
      slots: 3,
      counts: { ...slotCounts([]), passed: 1, interrupted: 1, notRun: 1 },
    }),
    entry(RUN_A, { startedAt: "2026-12-01T23:05:00.000Z", completion: "crashed" }),
    entry(RUN_A, { completion: null, slots: 2, counts: { ...slotCounts([]), failed: 2 } }),
  ]);
  assert.deepEqual(lines, [
    "Run                                   Started (UTC)     Experiment   Completion   Slots",
    `${RUN_B}  2026-12-02 10:00  checks/fail  interrupted  1 passed · 1 interrupted · 1 not run`,
    `${RUN_A}  2026-12-01 23:05  exp          crashed      no slots`,
    `${RUN_A}  2026-12-02 10:00  exp          unknown      2 failed`,
  ]);
  assert.deepEqual(runListLines([]), ["no published runs yet — run niceeval exp"]);
});
