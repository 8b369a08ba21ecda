import assert from "node:assert/strict";
import type { SlotOutcome } from "../../src/_shared/mod.ts";
import { exitCodeOf, reportedResult, summarize } from "../../src/report/mod.ts";
import { sketchPlan } from "../_fakes/plans.ts";
import { entry, result } from "../_fakes/results.ts";

const plan = sketchPlan([{ id: "x", evals: [["a", "pass"], ["b", "pass"]], attempts: 2 }]);
const exec = (
  attemptId: string,
  verdict: "passed" | "failed" | "errored" | "skipped",
): SlotOutcome => ({
  kind: "executed",
  result: result({
    attemptId,
    verdict,
    ...(verdict === "skipped" ? { skipReason: "early-exit" } : {}),
  }),
});
const sum = (outcomes: SlotOutcome[], interrupted = false) =>
  summarize(plan, outcomes, { runIdOf: () => "run", interrupted });

Deno.test("summarize() picks the first matching headline row (OUT-H11)", () => {
  const passed = sum([
    exec("1", "passed"),
    exec("2", "passed"),
    exec("3", "passed"),
    exec("4", "passed"),
  ]);
  assert.deepEqual([passed.headline, exitCodeOf(passed, false), exitCodeOf(passed, true)], [
    "PASSED",
    0,
    1,
  ]);
  const failed = sum([
    exec("1", "failed"),
    exec("2", "passed"),
    exec("3", "passed"),
    exec("4", "passed"),
  ]);
  assert.deepEqual([failed.headline, exitCodeOf(failed, false)], ["FAILED", 1]);
  const gap = sum([
    exec("1", "failed"),
    { kind: "not-dispatched", reason: "halted" },
    exec("3", "passed"),
    exec("4", "passed"),
  ]);
  assert.equal(gap.headline, "INCOMPLETE");
  const errored = sum([
    exec("1", "errored"),
    { kind: "not-dispatched", reason: "halted" },
    exec("3", "failed"),
    exec("4", "passed"),
  ]);
  assert.equal(errored.headline, "ERRORED");
  const interrupted = sum([
    exec("1", "errored"),
    { kind: "not-dispatched", reason: "interrupted" },
    exec("3", "passed"),
    exec("4", "passed"),
  ], true);
  assert.deepEqual([interrupted.headline, exitCodeOf(interrupted, false)], ["INTERRUPTED", 130]);
});

Deno.test("summarize() does not treat early-exit skips as a gap and counts them as not needed", () => {
  const s = sum([
    exec("1", "passed"),
    { kind: "not-dispatched", reason: "early-exit" },
    exec("3", "skipped"),
    exec("4", "passed"),
  ]);
  assert.equal(s.headline, "PASSED");
  assert.deepEqual([s.counts.notNeeded, s.counts.skipped, s.counts.unstarted], [1, 1, 0]);
});

Deno.test("summarize() counts an undispatched setup failure as errored", () => {
  const s = sum([
    { kind: "errored-undispatched", code: "experiment-setup-failed", message: "boom" },
    exec("2", "passed"),
    exec("3", "passed"),
    exec("4", "passed"),
  ]);
  assert.deepEqual([s.headline, s.counts.errored], ["ERRORED", 1]);
  assert.equal(s.rows[0]!.reason, "experiment-setup-failed");
});

Deno.test("summarize() heads SCORED when only score evals report and COMPLETED for pass and score evals (OUT-H11)", () => {
  const scored = (attemptId: string): SlotOutcome => ({
    kind: "executed",
    result: result({ attemptId, kind: "score", verdict: "scored", score: 0.5 }),
  });
  const scoreOnly = sketchPlan([{ id: "x", evals: [["s", "score"]], attempts: 2 }]);
  const s = summarize(scoreOnly, [scored("1"), scored("2")], {
    runIdOf: () => "run",
    interrupted: false,
  });
  assert.deepEqual([s.headline, exitCodeOf(s, false), exitCodeOf(s, true)], ["SCORED", 0, 1]);
  const mixed = sketchPlan([{ id: "x", evals: [["p", "pass"], ["s", "score"]] }]);
  const m = summarize(mixed, [exec("1", "passed"), scored("2")], {
    runIdOf: () => "run",
    interrupted: false,
  });
  assert.deepEqual([m.headline, exitCodeOf(m, false)], ["COMPLETED", 0]);
  const mixedFailed = summarize(mixed, [exec("1", "failed"), scored("2")], {
    runIdOf: () => "run",
    interrupted: false,
  });
  assert.equal(mixedFailed.headline, "FAILED", "a failure outranks COMPLETED");
});

Deno.test("reportedResult() keeps the failed assertions and drops the transcript, phases, logs and diagnostics", () => {
  const full = result({ attemptId: "a", verdict: "failed" });
  const passed = entry({ index: 1, criterion: "kept out" });
  const failedEntries = full.details.assertions.filter((a) => a.status === "failed");
  assert.ok(failedEntries.length > 0);
  const withAll = {
    ...full,
    details: {
      assertions: [...full.details.assertions, passed],
      turns: full.details.turns,
      phases: [{ phase: "test", startedAt: 1, endedAt: 2 }],
      diagnostics: [{ code: "d", level: "warning" as const, message: "m", data: null }],
      logs: [{ at: 1, text: "log" }],
    },
  };
  const kept = reportedResult(withAll);
  assert.deepEqual(kept.details, {
    assertions: failedEntries,
    turns: [],
    phases: [],
    diagnostics: [],
    logs: [],
  });
  const { details: _a, ...rest } = kept;
  const { details: _b, ...restFull } = withAll;
  assert.deepEqual(rest, restFull);
  // Every end-of-run report reads the same from either.
  const outcome = (r: typeof full): SlotOutcome[] => [{ kind: "executed", result: r }];
  const one = sketchPlan([{ id: "exp", evals: [["e1", "pass"]] }]);
  const opts = { runIdOf: () => "run", interrupted: false };
  assert.deepEqual(
    summarize(one, outcome(kept), opts).counts,
    summarize(one, outcome(withAll), opts).counts,
  );
});
