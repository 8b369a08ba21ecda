/** The compact outcome store of `exp` (issue 20): the same report rows as the plain outcomes. */
import assert from "node:assert/strict";
import type { AttemptResult, SlotOutcome } from "../../src/_shared/mod.ts";
import { OutcomeTable, summarize } from "../../src/report/mod.ts";
import type { SlotReport } from "../../src/report/summary.ts";
import { sketchPlan } from "../_fakes/plans.ts";
import { result } from "../_fakes/results.ts";

const plan = sketchPlan([
  { id: "x", evals: [["a", "pass"], ["b", "pass"], ["c", "score"]], attempts: 3 },
]);

/** A result for plan slot `position`, with the slot's own IDs. */
function resultAt(position: number, over: Partial<AttemptResult> = {}): AttemptResult {
  const slot = plan.slots[position]!;
  return result({
    attemptId: `att-${position}`,
    experimentId: slot.experimentId,
    evalId: slot.evalId,
    ordinal: slot.ordinal,
    kind: slot.kind,
    startedAt: 1_000 + position,
    endedAt: 2_000 + position * 3,
    ...over,
  });
}

/** One outcome of every kind the table keeps, by position. */
function outcomes(): SlotOutcome[] {
  const failedAssertion = resultAt(1, { verdict: "failed" });
  return [
    { kind: "executed", result: resultAt(0, { estimatedCostUSD: 0.25 }) },
    { kind: "executed", result: failedAssertion },
    { kind: "executed", result: resultAt(2, { verdict: "errored" }) },
    { kind: "executed", result: resultAt(3, { usage: null }) },
    { kind: "executed", result: resultAt(4, { verdict: "skipped", skipReason: "early-exit" }) },
    { kind: "carried" },
    {
      kind: "executed",
      result: resultAt(6, { verdict: "scored", score: 3, possible: 4, passAt: 2, usage: {} }),
    },
    { kind: "not-dispatched", reason: "halted" },
    { kind: "errored-undispatched", code: "sandbox-create-failed", message: "no" },
  ];
}

const FIELDS: readonly (keyof SlotReport)[] = [
  "state",
  "verdict",
  "attemptId",
  "locator",
  "originRunId",
  "reason",
  "message",
  "score",
  "possible",
  "passAt",
  "durationMs",
];

/** A row's fields and its result's report fields, as plain data. */
function plain(row: SlotReport): unknown {
  const fields = Object.fromEntries(FIELDS.map((f) => [f, row[f]]));
  const r = row.result;
  return {
    position: row.slot.position,
    ...fields,
    result: r && {
      attemptId: r.attemptId,
      experimentId: r.experimentId,
      evalId: r.evalId,
      ordinal: r.ordinal,
      kind: r.kind,
      verdict: r.verdict,
      score: r.score,
      possible: r.possible ?? null,
      passAt: r.passAt ?? null,
      skipReason: r.skipReason,
      error: r.error,
      startedAt: r.startedAt,
      endedAt: r.endedAt,
      tokens: [r.usage?.inputTokens, r.usage?.outputTokens],
      usage: r.usage === null,
      estimatedCostUSD: r.estimatedCostUSD,
      failed: r.details.assertions.filter((a) => a.status === "failed").length,
    },
  };
}

Deno.test("issue 20: the outcome table gives every report row the plain outcomes give", () => {
  const list = outcomes();
  const table = new OutcomeTable(plan.slots.length);
  for (const slot of plan.slots) table.record(slot, list[slot.position]!);
  const options = { runIdOf: () => "run-1", interrupted: false };
  const fromList = summarize(plan, list, options);
  const fromTable = summarize(plan, table, options);
  assert.deepEqual(fromTable.rows.map(plain), fromList.rows.map(plain));
  assert.deepEqual(fromTable.counts, fromList.counts);
  assert.equal(fromTable.headline, fromList.headline);
  assert.equal(fromTable.newTokens, fromList.newTokens);
  assert.equal(fromTable.costUSD, fromList.costUSD);
  // Passed and scored Attempts without error, skip or failed assertion are numbers only.
  assert.equal(table.objectCount, 6);
});

Deno.test("issue 20: a run of passed Attempts keeps no result object", () => {
  const table = new OutcomeTable(plan.slots.length);
  for (const slot of plan.slots) {
    table.record(slot, { kind: "executed", result: resultAt(slot.position) });
  }
  assert.equal(table.objectCount, 0);
  const summary = summarize(plan, table, { runIdOf: () => "r", interrupted: false });
  assert.equal(summary.counts.passed, plan.slots.length);
  assert.equal(summary.rows[4]!.result?.attemptId, "att-4");
});

Deno.test("issue 20: a position without an outcome is an internal error", () => {
  const table = new OutcomeTable(plan.slots.length);
  assert.throws(
    () => summarize(plan, table, { runIdOf: () => "r", interrupted: false }),
    /No outcome for plan slot 0/,
  );
});

Deno.test("issue 20: OutcomeTable keeps a UUID AttemptId as 16 bytes and any other form as given", () => {
  const ids = [
    crypto.randomUUID(),
    "00000000-0000-4000-8000-000000000000",
    "ffffffff-ffff-4fff-bfff-ffffffffffff",
    crypto.randomUUID().toUpperCase(),
    "0b9e6f5c-3d2a-4e8f-9a71-2c4d5e6f7a8",
    "0b9e6f5c+3d2a-4e8f-9a71-2c4d5e6f7a8b",
    "att-6",
  ];
  const table = new OutcomeTable(plan.slots.length);
  ids.forEach((attemptId, p) => {
    table.record(plan.slots[p]!, { kind: "executed", result: resultAt(p, { attemptId }) });
  });
  ids.forEach((attemptId, p) => assert.equal(table.attemptIdAt(p), attemptId));
  assert.equal(table.objectCount, 0);
});
