/** Section N of scenarios.md in process: budgets stop dispatching per experiment (BUD rules). */
import assert from "node:assert/strict";
import { scriptedAgent } from "../../src/agents/mod.ts";
import { createAttemptRunner } from "../../src/attempt/mod.ts";
import { defineEval, defineExperiment } from "../../src/discovery/mod.ts";
import { isTrue } from "../../src/expect/mod.ts";
import { createFakeClock } from "../_fakes/clock.ts";
import { createFakeControl, planFor } from "../_fakes/control.ts";
import { evalIds, fakePlan } from "../_fakes/plan.ts";
import { createSeededRandom } from "../_fakes/random.ts";
import { outcomeSummary, startRun } from "./_harness.ts";

Deno.test("S103 BUD-2 BUD-4 BUD-5 WAIT-3: spend crossing 1.00 stops new starts; running C completes", async () => {
  const plan = fakePlan({ evals: ["a", "b", "c", "d"], experiments: [{ id: "x", budget: 1 }] });
  const run = startRun(plan, { cap: 2 });
  await run.flush();
  assert.deepEqual(run.fake.names(), ["x:a#0", "x:b#0"]); // both start at spend 0
  run.fake.get("x:a#0").pass({ costUSD: 0.6 });
  await run.flush();
  assert.ok(run.fake.has("x:c#0"), "C starts at spend 0.60");
  run.fake.get("x:b#0").pass({ costUSD: 0.5 }); // spend 1.10
  await run.flush();
  assert.ok(!run.fake.has("x:d#0"), "D is not dispatched");
  const c = run.fake.get("x:c#0");
  assert.equal(c.aborted, undefined, "C is never interrupted");
  c.pass({ costUSD: 0.1 });
  const outcomes = await run.finish();
  assert.deepEqual(outcomeSummary(plan, outcomes), [
    "x:a#0 passed",
    "x:b#0 passed",
    "x:c#0 passed",
    "x:d#0 not-dispatched:budget-exhausted",
  ]);
  const [warning, ...more] = run.log.diagnostics("budget-exhausted");
  assert.deepEqual(more, []);
  assert.ok((warning!.data!.unstarted as number) >= 1);
  assert.deepEqual(run.log.allViolations(), []);
});

Deno.test("S104 BUD-4 CHAIN-4: budget 0 starts no Attempt", async () => {
  const plan = fakePlan({ evals: evalIds(3), experiments: [{ id: "x", budget: 0 }] });
  const run = startRun(plan, { cap: 2 });
  const outcomes = await run.finish();
  assert.deepEqual(run.fake.names(), []);
  assert.ok(outcomes.every((o) => o.kind === "not-dispatched"));
});

Deno.test("S105 BUD-6: three settled Attempts with turns and no estimate warn budget-unenforceable once; no-turn failures do not count", async () => {
  const plan = fakePlan({ evals: evalIds(6), experiments: [{ id: "x", budget: 5 }] });
  const run = startRun(plan, { cap: 1 });
  await run.flush();
  // Failures before the first agent turn never count.
  for (const name of ["x:e0#0", "x:e1#0", "x:e2#0"]) {
    run.fake.get(name).error("agent-error", { turnCount: 0 });
    await run.flush();
  }
  assert.deepEqual(run.log.diagnostics("budget-unenforceable"), []);
  for (const name of ["x:e3#0", "x:e4#0", "x:e5#0"]) {
    run.fake.get(name).pass({ turnCount: 2, costUSD: null });
    await run.flush();
  }
  await run.finish();
  assert.equal(run.log.diagnostics("budget-unenforceable").length, 1);
});

Deno.test("S108 BUD-1: one experiment exhausting its budget leaves the other dispatching", async () => {
  const plan = fakePlan({
    evals: evalIds(3),
    experiments: [{ id: "e1", budget: 1 }, { id: "e2", budget: 1 }],
  });
  const run = startRun(plan, { cap: 1 });
  await run.flush();
  run.fake.get("e1:e0#0").pass({ costUSD: 2 });
  const outcomes = await run.passAll();
  const summary = outcomeSummary(plan, outcomes);
  assert.deepEqual(summary.filter((s) => s.startsWith("e1:")), [
    "e1:e0#0 passed",
    "e1:e1#0 not-dispatched:budget-exhausted",
    "e1:e2#0 not-dispatched:budget-exhausted",
  ]);
  assert.deepEqual(summary.filter((s) => s.startsWith("e2:")), [
    "e2:e0#0 passed",
    "e2:e1#0 passed",
    "e2:e2#0 passed",
  ]);
});

Deno.test("S106 BUD-2: usage.costUSD reported for a model without a price entry leaves spend at 0", async () => {
  // The real attempt runner: the agent reports costUSD 5, the price table has no entry for acme/m1.
  const agent = scriptedAgent({
    script: [{
      when: "go",
      reply: { text: "ok", usage: { inputTokens: 10, outputTokens: 5, costUSD: 5 } },
    }],
  });
  const { plan: one, slot } = planFor(
    defineExperiment({ agent, model: "acme/m1" }),
    defineEval({
      async test(t) {
        await t.send("go");
        t.check(true, isTrue());
      },
    }),
  );
  const clock = createFakeClock();
  const runner = createAttemptRunner({
    plan: one,
    root: "/project",
    clock,
    random: createSeededRandom(3),
    pricing: { "other/*": { inputPerMTok: 1, outputPerMTok: 1 } },
  });
  const real = await runner(slot, createFakeControl({ startedAt: clock.now() }));
  assert.equal(real.verdict, "passed");
  assert.equal(real.usage?.costUSD, 5, "the agent's own figure is kept as usage");
  // The scheduler's budget domain, fed that result three times: budget 1 < the reported 5 each.
  const plan = fakePlan({ evals: evalIds(4), experiments: [{ id: "x", budget: 1 }] });
  const run = startRun(plan, { cap: 1 });
  await run.flush();
  for (const name of ["x:e0#0", "x:e1#0", "x:e2#0"]) {
    run.fake.get(name).pass({ costUSD: real.estimatedCostUSD, turnCount: real.turnCount });
    await run.flush();
  }
  const outcomes = await run.passAll();
  assert.ok(outcomes.every((o) => o.kind !== "not-dispatched"), "spend never reached the budget");
  assert.deepEqual(run.log.diagnostics("budget-exhausted"), []);
  // BUD-6 warns only while spend is exactly 0: it proves nothing was added.
  assert.equal(run.log.diagnostics("budget-unenforceable").length, 1);
});
