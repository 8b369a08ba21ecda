/** Section R of scenarios.md in process: interrupts and internal errors (INT-1, INT-3, INT-4). */
import assert from "node:assert/strict";
import type { AttemptResult } from "../../src/_shared/mod.ts";
import { createScheduler } from "../../src/scheduler/mod.ts";
import { EventLog, fakeAbandon, FakeAttempts } from "../_fakes/attempt.ts";
import { createFakeClock } from "../_fakes/clock.ts";
import { evalIds, fakePlan } from "../_fakes/plan.ts";
import { createSeededRandom } from "../_fakes/random.ts";
import { outcomeSummary, startRun } from "./_harness.ts";

Deno.test("runPlan() on interrupt closes waiters and settles running Attempts interrupted (INT-1)", async () => {
  let teardowns = 0;
  const plan = fakePlan({
    evals: evalIds(7),
    experiments: [{ id: "x", teardown: () => void teardowns++ }],
  });
  const run = startRun(plan, { cap: 2 });
  await run.flush();
  assert.equal(run.fake.live().length, 2);
  run.interrupt.abort(new Error("SIGINT"));
  const outcomes = await run.finish();
  const summary = outcomeSummary(plan, outcomes);
  assert.deepEqual(summary.slice(0, 2), ["x:e0#0 interrupted", "x:e1#0 interrupted"]);
  assert.ok(summary.slice(2).every((s) => s.endsWith("not-dispatched:interrupted")));
  assert.equal(run.fake.started.length, 2);
  assert.ok(run.fake.started.every((a) => a.aborted === "interrupt"));
  assert.equal(teardowns, 1);
  assert.deepEqual(run.log.allViolations(), []);
});

Deno.test("runPlan() records an interrupted Attempt as interrupted whatever its body reports (INT-1)", async () => {
  const plan = fakePlan({ evals: evalIds(3), experiments: [{ id: "x" }] });
  const run = startRun(plan, { cap: 3, onAbort: "manual" });
  await run.flush();
  run.interrupt.abort(new Error("SIGINT"));
  await run.flush();
  run.fake.get("x:e0#0").pass();
  run.fake.get("x:e1#0").fail({ costUSD: 0.5 });
  run.fake.get("x:e2#0").error("agent-error");
  const outcomes = await run.finish();
  assert.deepEqual(outcomeSummary(plan, outcomes), [
    "x:e0#0 interrupted",
    "x:e1#0 interrupted",
    "x:e2#0 interrupted",
  ]);
  const results = outcomes.map((o) => o.kind === "executed" ? o.result : null);
  assert.deepEqual(results.map((r) => [r?.outcome, r?.score, r?.error]), [
    ["interrupted", null, null],
    ["interrupted", null, null],
    ["interrupted", null, null],
  ]);
  // The rewrite keeps what the body measured, such as its cost.
  assert.equal(results[1]?.estimatedCostUSD, 0.5);
});

Deno.test("runPlan() abandons an interrupted body that ignores its signal after 10 s (INT-1)", async () => {
  const plan = fakePlan({ evals: ["e"], experiments: [{ id: "x" }] });
  const run = startRun(plan, { cap: 1, onAbort: "manual" });
  await run.flush();
  run.interrupt.abort(new Error("SIGINT"));
  await run.clock.tickAsync(10_000);
  const [outcome] = await run.done;
  assert.ok(outcome?.kind === "executed");
  assert.equal(outcome.result.verdict, "interrupted");
  assert.equal(run.log.ofType("attempt_end")[0]!.at - run.fake.get("x:e#0").startedAt, 10_000);
});

Deno.test("runPlan() grants nothing when interrupted before it starts (INT-1)", async () => {
  const plan = fakePlan({ evals: evalIds(3), experiments: [{ id: "x" }] });
  const clock = createFakeClock();
  const log = new EventLog(plan, { cap: 2 });
  const fake = new FakeAttempts({ clock });
  const interrupted = new AbortController();
  interrupted.abort(new Error("SIGINT"));
  const outcomes = await createScheduler(plan, fake.run, {
    signal: interrupted.signal,
    clock,
    random: createSeededRandom(1),
    onEvent: log.sink,
    cap: 2,
    abandon: fakeAbandon,
  }).run();
  assert.deepEqual(fake.started, []);
  assert.deepEqual(outcomes.map((o) => o.kind === "not-dispatched" && o.reason), [
    "interrupted",
    "interrupted",
    "interrupted",
  ]);
});

Deno.test("S40 counters add up after every event across carry, skips, errors, backoff and interrupt", async () => {
  const plan = fakePlan({
    evals: evalIds(6),
    experiments: [
      { id: "a", attempts: 2, earlyExit: true, carried: { "e0#0": "passed", "e1#1": "failed" } },
      { id: "b", attempts: 2, maxConcurrency: 2, budget: 0.5 },
    ],
  });
  const run = startRun(plan, {
    cap: 3,
    script: (slot) => ({
      durationMs: 20 + 5 * slot.position,
      verdict: slot.evalId === "e2" ? "errored" : "passed",
      costUSD: slot.experimentId === "b" ? 0.2 : null,
      backoffs: slot.position % 4 === 0 ? [{ afterMs: 30 }] : [],
    }),
  });
  await run.clock.tickAsync(120);
  run.interrupt.abort(new Error("SIGINT"));
  await run.finish();
  assert.deepEqual(run.log.allViolations(), []);
  const kinds = new Set(run.log.events.map((e) => e.type));
  for (const kind of ["attempt_end", "not_dispatched", "backoff"]) {
    assert.ok(kinds.has(kind as never));
  }
  assert.equal(run.log.counters.running, 0);
  assert.equal(run.log.counters.queued, 0);
  assert.equal(run.log.counters.reused, 2);
  assert.ok(run.log.counters.errored > 0 && run.log.counters.passed > 0);
  const reasons = new Set(run.log.ofType("not_dispatched").map((e) => e.reason));
  assert.deepEqual([...reasons].sort(), ["budget-exhausted", "early-exit", "interrupted"]);
  assert.ok(run.log.ofType("attempt_end").some((e) => e.result.verdict === "interrupted"));
});

Deno.test("S129 an Attempt that ends without an outcome fails the run after cleanup (INT-4)", async () => {
  let teardowns = 0;
  const plan = fakePlan({
    evals: evalIds(4),
    experiments: [{ id: "x", teardown: () => void teardowns++ }],
  });
  const clock = createFakeClock();
  const log = new EventLog(plan, { cap: 2 });
  const fake = new FakeAttempts({ clock });
  const scheduler = createScheduler(plan, (slot, control) => {
    if (slot.evalId === "e0") return Promise.resolve(undefined as unknown as AttemptResult);
    return fake.run(slot, control);
  }, {
    signal: new AbortController().signal,
    clock,
    random: createSeededRandom(1),
    onEvent: log.sink,
    cap: 2,
    abandon: fakeAbandon,
  });
  const done = scheduler.run();
  const rejected = assert.rejects(done, /x · e0#0 ended without an outcome/);
  await clock.runAllAsync();
  await rejected;
  assert.equal(teardowns, 1);
  assert.deepEqual(fake.started.map((a) => a.aborted), ["interrupt"]);
  assert.equal(log.ofType("not_dispatched").length, 2);
});
