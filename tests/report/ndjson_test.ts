import assert from "node:assert/strict";
import { NdjsonReporter, summarize } from "../../src/report/mod.ts";
import { locatorOf } from "../../src/record/mod.ts";
import { sketchPlan } from "../_fakes/plans.ts";
import { result } from "../_fakes/results.ts";

const T0 = Date.UTC(2026, 10, 29, 10, 0, 0);

/** Every write is one or more whole lines; `lines` holds them parsed, `writes` counts the calls. */
function capture() {
  const lines: Record<string, unknown>[] = [];
  let writes = 0;
  const reporter = new NdjsonReporter((text) => {
    writes++;
    assert.ok(text.endsWith("\n"));
    for (const line of text.slice(0, -1).split("\n")) lines.push(JSON.parse(line));
  }, { now: () => T0, runIdOf: () => "run-1" });
  return { lines, reporter, writes: () => writes };
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

Deno.test("NdjsonReporter writes many eval lines in a few whole-line chunks, in ORD-2 order", () => {
  const evals = Array.from({ length: 2_000 }, (_, i) => [`e${i}`, "pass"] as const);
  const plan = sketchPlan([{ id: "x", evals, attempts: 2 }, { id: "y", evals: evals.slice(0, 3) }]);
  const outcomes = plan.slots.map((s) => ({
    kind: "executed" as const,
    result: result({
      attemptId: `${s.experimentId}-${s.evalId}-${s.ordinal}`,
      experimentId: s.experimentId,
      evalId: s.evalId,
      ordinal: s.ordinal,
    }),
  }));
  const { lines, reporter, writes } = capture();
  reporter.evals(summarize(plan, outcomes, { runIdOf: () => "run-1", interrupted: false }));
  assert.equal(lines.length, 2_003);
  assert.ok(writes() > 1 && writes() < 100, `${writes()} writes`);
  assert.deepEqual(
    lines.slice(0, 4).map((l) => [l.experimentId, l.evalId, l.planned]),
    [["x", "e0", 2], ["y", "e0", 1], ["x", "e1", 2], ["y", "e1", 1]],
  );
  assert.deepEqual(lines.at(-1)!.attempts, [
    {
      ordinal: 0,
      locator: locatorOf("x-e1999-0"),
      verdict: "passed",
      carried: false,
      reason: null,
    },
    {
      ordinal: 1,
      locator: locatorOf("x-e1999-1"),
      verdict: "passed",
      carried: false,
      reason: null,
    },
  ]);
});

Deno.test("NdjsonReporter gives attempt_end the locator of its attempt_start, also without one", () => {
  const { lines, reporter } = capture();
  const slot = { position: 0, experimentId: "x", evalId: "a", ordinal: 0 };
  const r = (attemptId: string) => result({ attemptId, experimentId: "x", evalId: "a" });
  reporter.event({ type: "attempt_start", at: T0, slot, attemptId: "s" });
  reporter.event({ type: "attempt_end", at: T0 + 1000, slot, result: r("s") });
  reporter.event({ type: "attempt_end", at: T0 + 2000, slot, result: r("t") });
  assert.deepEqual(lines.map((l) => [l.type, l.locator]), [
    ["attempt_start", locatorOf("s")],
    ["attempt_end", locatorOf("s")],
    ["attempt_end", locatorOf("t")],
  ]);
  assert.deepEqual(
    [lines[1]!.at, lines[1]!.startedAt, lines[1]!.endedAt],
    ["2026-11-29T10:00:01.000Z", "2026-11-29T10:00:00.000Z", "2026-11-29T10:00:01.000Z"],
  );
});

Deno.test("issue 18.11: a halt error line has ordinal, locator and phase, null when absent (OUT-J2)", () => {
  const { lines, reporter } = capture();
  reporter.event({
    type: "diagnostic",
    at: T0,
    level: "error",
    code: "dispatch-halted",
    message: "experiment halted: HTTP 401",
    experimentId: "x",
    evalId: null,
    data: { scope: "experiment" },
    persist: true,
  });
  assert.deepEqual(lines, [{
    type: "error",
    at: "2026-11-29T10:00:00.000Z",
    experimentId: "x",
    evalId: null,
    ordinal: null,
    locator: null,
    code: "dispatch-halted",
    phase: null,
    message: "experiment halted: HTTP 401",
    data: { scope: "experiment" },
  }]);
  // Given in `data`, they are filled in.
  reporter.event({
    type: "diagnostic",
    at: T0,
    level: "error",
    code: "dispatch-halted",
    message: "eval halted · a: boom",
    experimentId: "x",
    evalId: "a",
    data: { scope: "eval", ordinal: 2, locator: "@1AAAAAAAAAAAA", phase: "agent" },
    persist: true,
  });
  assert.deepEqual(
    [lines[1]!.ordinal, lines[1]!.locator, lines[1]!.phase],
    [2, "@1AAAAAAAAAAAA", "agent"],
  );
  // Warnings keep their own shape.
  reporter.event({
    type: "diagnostic",
    at: T0,
    level: "warning",
    code: "w",
    message: "m",
    experimentId: null,
    evalId: null,
    data: null,
    persist: false,
  });
  assert.deepEqual(Object.keys(lines[2]!), [
    "type",
    "at",
    "code",
    "message",
    "experimentId",
    "evalId",
    "data",
  ]);
});

Deno.test("issue 18.11: attempt_end.usage has every key, null when not reported (OUT-J1)", () => {
  const { lines, reporter } = capture();
  const slot = { position: 0, experimentId: "x", evalId: "a", ordinal: 0 };
  const partial = result({ attemptId: "u", experimentId: "x", evalId: "a", verdict: "passed" });
  reporter.event({ type: "attempt_start", at: T0, slot, attemptId: "u" });
  reporter.event({ type: "attempt_end", at: T0 + 1, slot, result: partial });
  assert.deepEqual(lines[1]!.usage, {
    inputTokens: 10,
    outputTokens: 5,
    cacheReadTokens: null,
    cacheCreationTokens: null,
    reasoningTokens: null,
    requests: null,
    costUSD: null,
  });
  const none = result({ attemptId: "n", experimentId: "x", evalId: "a", usage: null });
  reporter.event({ type: "attempt_end", at: T0 + 2, slot, result: none });
  assert.equal(lines[2]!.usage, null);
});
