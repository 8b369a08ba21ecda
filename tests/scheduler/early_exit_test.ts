/** Section M of scenarios.md: earlyExit (EARLY-1 … EARLY-6, EXP-3). */
import assert from "node:assert/strict";
import { buildPlan } from "../../src/plan/mod.ts";
import { fakePlan, fakeSelection } from "../_fakes/plan.ts";
import { outcomeSummary, startRun } from "./_harness.ts";

Deno.test("S97 a pass closes the remaining ordinals at once without locators", async () => {
  const plan = fakePlan({
    evals: ["e"],
    experiments: [{ id: "x", attempts: 5, earlyExit: true, maxConcurrency: 1 }],
  });
  const run = startRun(plan, { cap: 4 });
  await run.flush();
  assert.deepEqual(run.scheduler.snapshot().experimentPermits.x, {
    capacity: 1,
    held: 1,
    waiting: 4,
  });
  run.fake.get("x:e#0").pass();
  const at = run.clock.now();
  await run.flush();
  const skipped = run.log.ofType("not_dispatched");
  assert.deepEqual(skipped.map((e) => [e.slot.ordinal, e.reason, e.at]), [
    [1, "early-exit", at],
    [2, "early-exit", at],
    [3, "early-exit", at],
    [4, "early-exit", at],
  ]);
  // The permits were released without any of them being granted (EXP-3).
  assert.deepEqual(run.scheduler.snapshot().experimentPermits.x, {
    capacity: 1,
    held: 0,
    waiting: 0,
  });
  const outcomes = await run.finish();
  assert.deepEqual(run.log.starts(), ["x:e#0"]);
  assert.equal(run.log.counters.skipped, 4);
  assert.equal(outcomes.filter((o) => o.kind === "not-dispatched").length, 4);
  assert.deepEqual(run.log.allViolations(), []);
});

Deno.test("S98 in-flight siblings are aborted with early-exit; a fail becomes skipped, a pass stays", async () => {
  const plan = fakePlan({ evals: ["e"], experiments: [{ id: "x", attempts: 5, earlyExit: true }] });
  const run = startRun(plan, { cap: 5, onAbort: "manual" });
  await run.flush();
  assert.equal(run.fake.live().length, 5);
  run.fake.get("x:e#2").pass();
  await run.flush();
  for (const o of [0, 1, 3, 4]) assert.equal(run.fake.get(`x:e#${o}`).aborted, "early-exit");
  run.fake.get("x:e#0").fail({ costUSD: 0.25 });
  run.fake.get("x:e#1").pass();
  run.fake.get("x:e#3").error("agent-error");
  run.fake.get("x:e#4").fail();
  const outcomes = await run.finish();
  assert.deepEqual(outcomeSummary(plan, outcomes), [
    "x:e#0 skipped",
    "x:e#1 passed",
    "x:e#2 passed",
    "x:e#3 skipped",
    "x:e#4 skipped",
  ]);
  const first = outcomes[0]!;
  assert.ok(first.kind === "executed");
  assert.equal(first.result.skipReason, "early-exit");
  assert.equal(first.result.outcome, "cancelled");
  assert.equal(first.result.estimatedCostUSD, 0.25);
  assert.equal(first.result.error, null);
});

Deno.test("runPlan() aborts on a pass only the in-flight siblings of the same eval (EARLY-4)", async () => {
  const plan = fakePlan({
    evals: ["e", "f"],
    experiments: [{ id: "x", attempts: 2, earlyExit: true }],
  });
  const run = startRun(plan, { cap: 4, onAbort: "manual" });
  await run.flush();
  assert.equal(run.fake.live().length, 4);
  run.fake.get("x:e#0").pass();
  await run.flush();
  const names = ["x:e#0", "x:e#1", "x:f#0", "x:f#1"];
  assert.deepEqual(names.map((n) => [n, run.fake.get(n).aborted ?? null]), [
    ["x:e#0", null],
    ["x:e#1", "early-exit"],
    ["x:f#0", null],
    ["x:f#1", null],
  ]);
  run.fake.get("x:e#1").fail();
  run.fake.get("x:f#0").fail();
  run.fake.get("x:f#1").pass();
  assert.deepEqual(outcomeSummary(plan, await run.finish()), [
    "x:e#0 passed",
    "x:e#1 skipped",
    "x:f#0 failed",
    "x:f#1 passed",
  ]);
});

Deno.test("S99 an errored ordinal never triggers earlyExit", async () => {
  const plan = fakePlan({
    evals: ["e"],
    experiments: [{ id: "x", attempts: 2, earlyExit: true, maxConcurrency: 1 }],
  });
  const run = startRun(plan, { cap: 2 });
  await run.flush();
  run.fake.get("x:e#0").error("agent-error");
  await run.flush();
  assert.deepEqual(run.log.starts(), ["x:e#0", "x:e#1"]);
  await run.passAll();
});

Deno.test("S100 a pass in one experiment never skips another experiment's ordinals", async () => {
  const plan = fakePlan({
    evals: ["e"],
    experiments: [
      { id: "a", attempts: 2, earlyExit: true, maxConcurrency: 1 },
      { id: "b", attempts: 2, earlyExit: true, maxConcurrency: 1 },
    ],
  });
  const run = startRun(plan, { cap: 4 });
  await run.flush();
  run.fake.get("a:e#0").pass();
  await run.flush();
  assert.ok(run.fake.has("b:e#0"));
  assert.deepEqual(run.log.ofType("not_dispatched").map((e) => e.slot.experimentId), ["a"]);
  run.fake.get("b:e#0").fail();
  await run.flush();
  assert.ok(run.fake.has("b:e#1"));
  await run.passAll();
});

Deno.test("S101 a carried pass counts for earlyExit, a carried fail does not", async () => {
  const carriedPass = fakePlan({
    evals: ["e"],
    experiments: [{ id: "x", attempts: 3, earlyExit: true, carried: { "e#0": "passed" } }],
  });
  const run = startRun(carriedPass, { cap: 2 });
  assert.deepEqual(outcomeSummary(carriedPass, await run.finish()), [
    "x:e#0 carried",
    "x:e#1 not-dispatched:early-exit",
    "x:e#2 not-dispatched:early-exit",
  ]);
  const carriedFail = fakePlan({
    evals: ["e"],
    experiments: [{ id: "x", attempts: 3, earlyExit: true, carried: { "e#0": "failed" } }],
  });
  const again = startRun(carriedFail, { cap: 2, script: () => ({ verdict: "failed" }) });
  await again.finish();
  assert.deepEqual(again.log.starts(), ["x:e#1", "x:e#2"]);
});

Deno.test("S102 the earlyExit flags override the definition, and score evals never stop", async () => {
  const on = fakeSelection({
    evals: ["e"],
    experiments: [{ id: "x", attempts: 3, earlyExit: true }],
  });
  assert.equal(buildPlan(on, { rerun: "none", earlyExit: false }).experiments[0]!.earlyExit, false);
  const off = fakeSelection({ evals: ["e"], experiments: [{ id: "x", attempts: 3 }] });
  const forced = buildPlan(off, { rerun: "none", earlyExit: true });
  assert.equal(forced.experiments[0]!.earlyExit, true);
  const run = startRun(forced, { cap: 1, script: () => ({ verdict: "passed" }) });
  await run.finish();
  assert.deepEqual(run.log.starts(), ["x:e#0"]);
  const noFlag = startRun(buildPlan(on, { rerun: "none", earlyExit: false }), {
    cap: 1,
    script: () => ({ verdict: "passed" }),
  });
  await noFlag.finish();
  assert.equal(noFlag.log.starts().length, 3);
  const score = fakePlan({
    evals: [{ id: "s", kind: "score" }],
    experiments: [{ id: "x", attempts: 3, earlyExit: true }],
  });
  const scored = startRun(score, { cap: 1, script: () => ({ verdict: "passed" }) });
  await scored.finish();
  assert.equal(scored.log.starts().length, 3);
});
