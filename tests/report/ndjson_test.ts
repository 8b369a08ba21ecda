import assert from "node:assert/strict";
import { NdjsonReporter, summarize } from "../../src/report/mod.ts";
import { locatorOf } from "../../src/record/mod.ts";
import { sketchPlan } from "../_fakes/plans.ts";
import { result } from "../_fakes/results.ts";

const T0 = Date.UTC(2026, 10, 29, 10, 0, 0);

function capture() {
  const lines: Record<string, unknown>[] = [];
  const reporter = new NdjsonReporter((line) => {
    assert.ok(line.endsWith("\n") && !line.slice(0, -1).includes("\n"));
    lines.push(JSON.parse(line));
  }, { now: () => T0, runIdOf: () => "run-1" });
  return { lines, reporter };
}

Deno.test("NdjsonReporter writes start, attempt events with null for absent values, a failure line, eval lines and one receipt", () => {
  const plan = sketchPlan([{ id: "x", evals: [["a", "pass"]], maxConcurrency: 2 }]);
  const { lines, reporter } = capture();
  reporter.start(plan, {
    invocationId: "inv",
    startedAt: T0,
    recordRoot: "/r",
    concurrency: 4,
    concurrencySource: "flag",
    concurrencyProvider: null,
    runs: [{ experimentId: "x", runId: "run-1" }],
  });
  const failed = result({ attemptId: "f", experimentId: "x", evalId: "a", verdict: "failed" });
  const slot = { position: 0, experimentId: "x", evalId: "a", ordinal: 0 };
  reporter.event({ type: "attempt_start", at: T0, slot, attemptId: "f" });
  reporter.event({ type: "attempt_end", at: T0 + 1000, slot, result: failed });
  reporter.event({ type: "activity", at: T0, slot, text: "running eval" });
  const summary = summarize(plan, [{ kind: "executed", result: failed }], {
    runIdOf: () => "run-1",
    interrupted: false,
  });
  reporter.evals(summary);
  reporter.receipt({
    invocationId: "inv",
    runIds: ["run-1"],
    recordRoot: "/r",
    startedAt: T0,
    completedAt: T0 + 2000,
    completion: "completed",
    headline: "FAILED",
    exitCode: 1,
  });
  assert.deepEqual(lines.map((l) => l.type), [
    "start",
    "attempt_start",
    "attempt_end",
    "failure",
    "eval",
    "receipt",
  ]);
  assert.deepEqual(lines[0]!.experimentConcurrency, { x: 2 });
  assert.equal(lines[0]!.at, "2026-11-29T10:00:00.000Z");
  assert.equal(lines[2]!.locator, locatorOf("f"));
  assert.equal(lines[2]!.durationMs, 1000);
  assert.equal(lines[2]!.skipReason, null);
  assert.equal(lines[2]!.estimatedCostUSD, null);
  assert.deepEqual((lines[3]!.assertions as { criterion: string }[]).map((a) => a.criterion), [
    "turn succeeded",
  ]);
  assert.deepEqual([lines[4]!.verdict, lines[4]!.planned, lines[4]!.failed], ["failed", 1, 1]);
  assert.deepEqual([lines[5]!.headline, lines[5]!.exitCode], ["FAILED", 1]);
});
