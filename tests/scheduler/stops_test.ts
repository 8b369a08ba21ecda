/** Section O of scenarios.md: halts, fail-fast, judge precheck (STOP-1 … STOP-7, CHAIN-3). */
import assert from "node:assert/strict";
import type { JudgePrecheck } from "../../src/scheduler/mod.ts";
import { evalIds, fakePlan } from "../_fakes/plan.ts";
import { outcomeSummary, startRun } from "./_harness.ts";

Deno.test("S109 an experiment halt lets running Attempts finish and skips queued ones", async () => {
  const plan = fakePlan({ evals: evalIds(4), experiments: [{ id: "x" }] });
  const run = startRun(plan, { cap: 2 });
  await run.flush();
  assert.deepEqual(run.fake.names(), ["x:e0#0", "x:e1#0"]);
  run.fake.get("x:e0#0").error("config-missing", { scope: "experiment" });
  await run.flush();
  assert.equal(run.fake.get("x:e1#0").aborted, undefined);
  run.fake.get("x:e1#0").pass();
  const outcomes = await run.finish();
  assert.deepEqual(outcomeSummary(plan, outcomes), [
    "x:e0#0 errored",
    "x:e1#0 passed",
    "x:e2#0 not-dispatched:halted",
    "x:e3#0 not-dispatched:halted",
  ]);
  const halted = run.log.diagnostics("dispatch-halted");
  assert.equal(halted.length, 1);
  assert.equal(halted[0]!.level, "error");
  assert.deepEqual(halted[0]!.data, { scope: "experiment", unstarted: 2 });
  // Gates are not persisted: the next Invocation of the same plan dispatches everything.
  const next = startRun(plan, { cap: 2, script: () => ({ durationMs: 1 }) });
  await next.finish();
  assert.equal(next.log.starts().length, 4);
});

Deno.test("S110 an eval halt skips that eval's ordinals and the other evals run", async () => {
  const plan = fakePlan({
    evals: ["e", "f"],
    experiments: [{ id: "x", attempts: 3, maxConcurrency: 1 }],
  });
  const run = startRun(plan, { cap: 4 });
  await run.flush();
  run.fake.get("x:e#0").error("bad-input", { scope: "eval" });
  await run.flush();
  const outcomes = await run.passAll();
  assert.deepEqual(outcomeSummary(plan, outcomes), [
    "x:e#0 errored",
    "x:e#1 not-dispatched:halted",
    "x:e#2 not-dispatched:halted",
    "x:f#0 passed",
    "x:f#1 passed",
    "x:f#2 passed",
  ]);
  const halted = run.log.diagnostics("dispatch-halted");
  assert.deepEqual(halted.map((d) => [d.evalId, d.data?.unstarted]), [["e", 2]]);
});

Deno.test("S111 a halt settles waiters in W4 and W5 without granting them anything", async () => {
  const plan = fakePlan({
    evals: [...evalIds(6, "y"), "a", "b"],
    experiments: [
      { id: "x", evals: ["a", "b"], attempts: 2, maxConcurrency: 2 },
      { id: "y", evals: evalIds(6, "y"), maxConcurrency: 2 },
    ],
  });
  // y (3 rounds) holds two slots; x#a0 holds the third, x#b0 holds a permit and waits for a
  // global slot (W5), x's second wave waits for its permit (W4).
  const run = startRun(plan, { cap: 3 });
  await run.flush();
  assert.deepEqual(run.fake.names(), ["y:y0#0", "y:y1#0", "x:a#0"]);
  const before = run.scheduler.snapshot();
  assert.deepEqual(before.experimentPermits.x, { capacity: 2, held: 2, waiting: 2 });
  assert.equal(before.globalWaiters, 1);
  run.fake.get("x:a#0").error("quota", { scope: "experiment" });
  await run.flush();
  const after = run.scheduler.snapshot();
  assert.deepEqual(after.experimentPermits.x, { capacity: 2, held: 0, waiting: 0 });
  assert.equal(after.globalWaiters, 0);
  assert.ok(run.fake.names().every((n) => n === "x:a#0" || n.startsWith("y:")));
  const outcomes = await run.passAll();
  assert.deepEqual(outcomeSummary(plan, outcomes).filter((s) => s.includes("halted")), [
    "x:a#1 not-dispatched:halted",
    "x:b#0 not-dispatched:halted",
    "x:b#1 not-dispatched:halted",
  ]);
  assert.equal(run.log.diagnostics("dispatch-halted")[0]!.data?.unstarted, 3);
});

Deno.test("S111 a halt settles a lane waiter (W9) without granting the lane", async () => {
  const plan = fakePlan({
    evals: ["c"],
    experiments: [{ id: "l", provider: "local", attempts: 3 }],
  });
  const run = startRun(plan, { cap: 3 });
  await run.flush();
  assert.deepEqual(run.scheduler.snapshot().lanes.local, { capacity: 1, held: 1, waiting: 2 });
  run.fake.get("l:c#0").error("quota", { scope: "experiment" });
  const outcomes = await run.finish();
  assert.deepEqual(run.fake.names(), ["l:c#0"]);
  assert.deepEqual(outcomeSummary(plan, outcomes).slice(1), [
    "l:c#1 not-dispatched:halted",
    "l:c#2 not-dispatched:halted",
  ]);
});

Deno.test("S112 two consecutive errors with one code trigger fail-fast once", async () => {
  const plan = fakePlan({
    evals: ["e"],
    experiments: [{ id: "x", attempts: 5, maxConcurrency: 1 }],
  });
  const run = startRun(plan, { cap: 2 });
  await run.flush();
  run.fake.get("x:e#0").error("sandbox-crash");
  await run.flush();
  run.fake.get("x:e#1").error("sandbox-crash");
  const outcomes = await run.finish();
  assert.deepEqual(outcomes.slice(2).map((o) => o.kind === "not-dispatched" && o.reason), [
    "fail-fast",
    "fail-fast",
    "fail-fast",
  ]);
  const warnings = run.log.diagnostics("fail-fast");
  assert.equal(warnings.length, 1);
  assert.equal(warnings[0]!.data?.unstarted, 3);
});

Deno.test("S112 errored, passed, errored never triggers fail-fast", async () => {
  const plan = fakePlan({
    evals: ["e"],
    experiments: [{ id: "x", attempts: 4, maxConcurrency: 1 }],
  });
  const run = startRun(plan, { cap: 2 });
  for (const step of ["error", "pass", "error", "pass"] as const) {
    await run.flush();
    const live = run.fake.live()[0]!;
    if (step === "error") live.error("sandbox-crash");
    else live.pass();
  }
  await run.finish();
  assert.equal(run.log.starts().length, 4);
  assert.deepEqual(run.log.diagnostics("fail-fast"), []);
});

Deno.test("S113 a failing judge endpoint errors only the Attempts that use it", async () => {
  const plan = fakePlan({ evals: ["j1", "j2", "plain"], experiments: [{ id: "x", attempts: 2 }] });
  const probes: string[] = [];
  let release!: () => void;
  const slow = new Promise<void>((r) => release = r);
  const judge: JudgePrecheck = {
    endpointOf: (slot) => slot.evalId === "plain" ? null : `judge:${slot.evalId}`,
    probe: async (endpoint) => {
      probes.push(endpoint);
      await slow;
      if (endpoint === "judge:j1") throw new Error("401 unauthorized");
    },
  };
  const run = startRun(plan, { cap: 4, judge, script: () => ({ durationMs: 1 }) });
  await run.flush();
  const during = run.scheduler.snapshot();
  assert.equal(during.judgePrecheck, "running");
  assert.deepEqual([during.queued, during.heldSlots, during.running], [6, 0, 0]);
  const waitStates = () =>
    run.log.ofType("wait").filter((w) => w.scope === "judge-precheck").map((w) => w.state);
  assert.deepEqual(waitStates(), ["started"]); // OUT-4 row `prechecking judge config`
  release();
  const outcomes = await run.finish();
  assert.deepEqual(probes, ["judge:j1", "judge:j2", "judge:j1"]);
  assert.deepEqual(outcomeSummary(plan, outcomes), [
    "x:j1#0 errored-undispatched:judge-precheck-failed",
    "x:j1#1 errored-undispatched:judge-precheck-failed",
    "x:j2#0 passed",
    "x:j2#1 passed",
    "x:plain#0 passed",
    "x:plain#1 passed",
  ]);
  const errors = run.log.diagnostics("judge-precheck-failed");
  assert.equal(errors.length, 1);
  assert.deepEqual(errors[0]!.data, { experimentId: "x", evalId: "j1", planned: 2, errored: 2 });
  assert.match(errors[0]!.message, /401 unauthorized/);
  assert.equal(run.scheduler.snapshot().judgePrecheck, "done");
  assert.deepEqual(waitStates(), ["started", "ended"]);
});

Deno.test("runPlan() fails a judge probe try that does not answer within 20 s (STOP-7)", async () => {
  const plan = fakePlan({ evals: ["e"], experiments: [{ id: "x" }] });
  const judge: JudgePrecheck = { endpointOf: () => "judge", probe: () => new Promise(() => {}) };
  const run = startRun(plan, { cap: 1, judge });
  await run.clock.tickAsync(39_999);
  assert.equal(run.scheduler.snapshot().judgePrecheck, "running");
  await run.clock.tickAsync(1);
  const outcomes = await run.done;
  assert.deepEqual(outcomes[0], {
    kind: "errored-undispatched",
    code: "judge-precheck-failed",
    message: 'Judge precheck of "judge" failed: no answer within 20s',
  });
});

Deno.test("S114 an eval-scoped classification closes the eval gate, attempt scope does not", async () => {
  const plan = fakePlan({
    evals: ["e", "f"],
    experiments: [{ id: "x", attempts: 2, maxConcurrency: 1 }],
  });
  const run = startRun(plan, { cap: 2 });
  await run.flush();
  run.fake.get("x:e#0").error("bad-input", { scope: "eval" });
  await run.flush();
  run.fake.get("x:f#0").error("flaky", { scope: "attempt" });
  const outcomes = await run.passAll();
  assert.deepEqual(outcomeSummary(plan, outcomes), [
    "x:e#0 errored",
    "x:e#1 not-dispatched:halted",
    "x:f#0 errored",
    "x:f#1 passed",
  ]);
});

Deno.test("runPlan() reports budget-exhausted once with the unstarted count (BUD-5)", async () => {
  const plan = fakePlan({
    evals: evalIds(5),
    experiments: [{ id: "x", budget: 1, maxConcurrency: 1 }],
  });
  const run = startRun(plan, { cap: 2 });
  await run.flush();
  run.fake.get("x:e0#0").pass({ costUSD: 1.2 });
  const outcomes = await run.finish();
  assert.equal(outcomes.filter((o) => o.kind === "not-dispatched").length, 4);
  const warnings = run.log.diagnostics("budget-exhausted");
  assert.equal(warnings.length, 1);
  assert.deepEqual(warnings[0]!.data, { budgetUSD: 1, spentUSD: 1.2, unstarted: 4 });
});
