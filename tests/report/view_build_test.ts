/** `buildViewModel` (issue 17, item 1): the report's data from gathered rows, pure. */
import assert from "node:assert/strict";
import { locatorOf } from "../../src/record/mod.ts";
import {
  type AttemptDetail,
  buildViewModel,
  type RunInput,
  type ShowRow,
  type ViewInput,
} from "../../src/report/mod.ts";

const RUN = "aaaaaaaa-0000-4000-8000-000000000000";
const OLD_RUN = "bbbbbbbb-0000-4000-8000-000000000000";

let nextAttempt = 0;

/** A row of experiment `exp`; `verdict` null is a slot without an Attempt. */
function row(
  experimentId: string,
  evalId: string,
  verdict: string | null,
  extra: { ordinal?: number; kind?: "pass" | "score"; durationMs?: number; score?: number } = {},
): ShowRow {
  const attemptId = `00000000-0000-4000-8000-${String(nextAttempt++).padStart(12, "0")}`;
  return {
    experimentId,
    evalId,
    ordinal: extra.ordinal ?? 0,
    kind: extra.kind ?? "pass",
    runId: verdict === null ? null : RUN,
    slotId: `0123456789abcdef-${extra.ordinal ?? 0}`,
    state: verdict === null ? "missing" : "executed",
    reason: verdict === null ? "new" : null,
    attempt: verdict === null ? null : {
      attemptId,
      originRunId: RUN,
      verdict,
      score: extra.score ?? null,
      outcome: "completed",
      durationMs: extra.durationMs ?? 100,
      estimatedCostUSD: verdict === "passed" ? 0.5 : null,
      usage: verdict === "failed" ? null : { inputTokens: 10, outputTokens: 5 },
    },
  };
}

function detail(): AttemptDetail {
  return {
    agent: "echo",
    model: null,
    startedAt: "2026-12-01T10:00:00.000Z",
    error: null,
    assertions: [{ status: "passed", criterion: "includes" }],
    turns: [],
    phases: [],
    diagnostics: [],
    logs: [],
  };
}

function input(rows: ShowRow[], runs: RunInput[] = []): ViewInput {
  return {
    generatedAt: "2026-12-02T00:00:00.000Z",
    title: "project",
    scope: "project-current",
    experiments: [
      { id: "local", agent: "echo", model: null, runIds: [RUN] },
      { id: "other", agent: "echo", model: "m1", runIds: [] },
    ],
    evals: [{ id: "b", kind: "pass", tags: ["smoke"], description: "the b eval" }],
    rows,
    details: new Map(
      rows.flatMap((r) => r.attempt ? [[r.attempt.attemptId, detail()] as const] : []),
    ),
    runs,
    compare: null,
    problems: [],
  };
}

Deno.test("buildViewModel() counts each experiment's slots like show: pass rate over pass evals (issue 17)", () => {
  const rows = [
    row("local", "a", "passed", { durationMs: 10 }),
    row("local", "b", "failed", { durationMs: 30 }),
    row("local", "c", "errored", { durationMs: 20 }),
    row("local", "d", null),
    row("local", "g", "scored", { kind: "score", score: 0.5 }),
    row("local", "h", "scored", { kind: "score", score: 1 }),
  ];
  const model = buildViewModel(input(rows));
  const local = model.experiments[0]!;
  assert.equal(local.slots, 6);
  assert.equal(local.passSlots, 4);
  assert.equal(local.scoreSlots, 2);
  assert.deepEqual(
    [local.counts.passed, local.counts.failed, local.counts.errored, local.counts.notRun],
    [1, 1, 1, 1],
  );
  assert.equal(local.passRate, 0.25);
  assert.equal(local.meanScore, 0.75);
  // Durations 10, 20, 30, 100, 100: nearest rank 3 of 5 and 5 of 5.
  assert.equal(local.durationP50Ms, 30);
  assert.equal(local.durationP95Ms, 100);
  // The failed Attempt reports no usage: tokens sum the others; costs only the passed one's.
  assert.equal(local.tokens, 60);
  assert.equal(local.costUSD, 0.5);
  const other = model.experiments[1]!;
  assert.equal(other.slots, 0);
  assert.equal(other.passRate, null);
  assert.equal(other.meanScore, null);
  assert.equal(other.durationP50Ms, null);
  assert.equal(other.tokens, null);
  assert.equal(other.costUSD, null);
});

Deno.test("buildViewModel() takes nearest-rank duration percentiles (issue 17)", () => {
  const rows = Array.from(
    { length: 20 },
    (_, i) => row("local", `e${i}`, "passed", { durationMs: (20 - i) * 10 }),
  );
  const local = buildViewModel(input(rows)).experiments[0]!;
  assert.equal(local.durationP50Ms, 100);
  assert.equal(local.durationP95Ms, 190);
});

Deno.test("buildViewModel() indexes each slot's Attempt and keeps slots without one (issue 17)", () => {
  const rows = [row("local", "a", null), row("local", "b", "passed"), row("other", "b", "failed")];
  const model = buildViewModel(input(rows));
  assert.deepEqual(model.slots.map((s) => s.attempt), [null, 0, 1]);
  assert.deepEqual(model.slots.map((s) => s.verdict), [null, "passed", "failed"]);
  assert.equal(model.attempts.length, 2);
  const first = model.attempts[0]!;
  assert.equal(first.evalId, "b");
  assert.equal(first.locator, locatorOf(rows[1]!.attempt!.attemptId));
  assert.equal(first.tokens, 15);
  assert.equal(first.costUSD, 0.5);
  assert.deepEqual(first.assertions, [{ status: "passed", criterion: "includes" }]);
  assert.equal(model.attempts[1]!.usage, null);
  assert.equal(model.attempts[1]!.tokens, null);
});

Deno.test("buildViewModel() lists the rows' evals first-seen, known ones with their tags (issue 17)", () => {
  const rows = [row("local", "c", "passed"), row("local", "b", "passed"), row("other", "c", null)];
  const model = buildViewModel(input(rows));
  assert.deepEqual(model.evals, [
    { id: "c", kind: "pass", tags: [], description: null },
    { id: "b", kind: "pass", tags: ["smoke"], description: "the b eval" },
  ]);
});

Deno.test("buildViewModel() summarizes each Run for the history (issue 17)", () => {
  const runRows = [
    row("local", "a", "passed"),
    row("local", "b", "failed"),
    row("local", "c", null),
  ];
  const model = buildViewModel(input([], [{
    runId: OLD_RUN,
    experimentId: "local",
    agent: "echo",
    model: null,
    startedAt: "2026-12-01T09:00:00.000Z",
    completedAt: "2026-12-01T09:01:00.000Z",
    completion: "completed",
    rows: runRows,
    diagnostics: [{ code: "x", level: "warning", message: "m", evalId: null }],
  }]));
  const run = model.runs[0]!;
  assert.equal(run.slots, 3);
  assert.equal(run.passRate, 1 / 3);
  assert.equal(run.counts.notRun, 1);
  assert.equal(run.diagnostics.length, 1);
});
