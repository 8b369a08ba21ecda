/**
 * What the scheduler does for its event consumers: it holds an ended Attempt's global slot while
 * they are behind (`backpressure`), and keeps only the retained part of each result (`retain`).
 */
import assert from "node:assert/strict";
import type { AttemptResult } from "../../src/_shared/mod.ts";
import { evalIds, fakePlan } from "../_fakes/plan.ts";
import { startRun } from "./_harness.ts";

Deno.test("runPlan() holds an ended Attempt's global slot until backpressure resolves", async () => {
  const plan = fakePlan({ evals: evalIds(3), experiments: [{ id: "x" }] });
  let behind: PromiseWithResolvers<void> | null = null;
  let asked = 0;
  const run = startRun(plan, {
    cap: 1,
    backpressure: () => {
      asked++;
      return behind?.promise ?? null;
    },
  });
  await run.flush();
  behind = Promise.withResolvers<void>();
  run.fake.get("x:e0#0").pass();
  await run.flush();
  // The Attempt ended (its event is out) but its slot is still held: nothing else starts.
  assert.equal(run.log.ofType("attempt_end").length, 1);
  assert.equal(run.log.ofType("attempt_start").length, 1);
  assert.equal(run.scheduler.snapshot().heldSlots, 1);
  assert.equal(run.scheduler.snapshot().running, 0);
  const caughtUp = behind;
  behind = null;
  caughtUp.resolve();
  await run.flush();
  assert.equal(run.log.ofType("attempt_start").length, 2);
  const outcomes = await run.passAll();
  assert.deepEqual(outcomes.map((o) => o.kind), ["executed", "executed", "executed"]);
  assert.equal(asked, 3);
});

Deno.test("runPlan() stops waiting for backpressure on interrupt and closes the queued slots", async () => {
  const plan = fakePlan({ evals: evalIds(3), experiments: [{ id: "x" }] });
  const never = new Promise<void>(() => {});
  const run = startRun(plan, { cap: 1, backpressure: () => never });
  await run.flush();
  run.fake.get("x:e0#0").pass();
  await run.flush();
  assert.equal(run.log.ofType("attempt_start").length, 1);
  run.interrupt.abort("SIGINT");
  const outcomes = await run.finish();
  assert.equal(outcomes[0]!.kind, "executed");
  assert.deepEqual(outcomes.slice(1).map((o) => o.kind), ["not-dispatched", "not-dispatched"]);
});

Deno.test("runPlan() keeps the retained result in its outcomes and the whole one in attempt_end", async () => {
  const plan = fakePlan({ evals: evalIds(2), experiments: [{ id: "x" }] });
  const retain = (result: AttemptResult): AttemptResult => ({
    ...result,
    details: { ...result.details, logs: [] },
  });
  const run = startRun(plan, {
    cap: 2,
    retain,
    script: () => ({ durationMs: 5 }),
  });
  const outcomes = await run.finish();
  for (const [i, outcome] of outcomes.entries()) {
    assert.ok(outcome.kind === "executed");
    const ended = run.log.ofType("attempt_end").find((e) => e.slot.position === i)!;
    assert.notEqual(outcome.result, ended.result);
    assert.deepEqual(outcome.result, retain(ended.result));
  }
});

Deno.test("issue 20: with onOutcome runPlan keeps no outcome: each slot's goes out once, carried ones first", async () => {
  const plan = fakePlan({
    evals: evalIds(3),
    experiments: [{ id: "x", attempts: 2, carried: { "e1#0": "passed" } }],
  });
  const seen: string[] = [];
  const run = startRun(plan, {
    cap: 2,
    script: () => ({ durationMs: 5 }),
    onOutcome: (slot, outcome) => seen.push(`${slot.evalId}#${slot.ordinal}:${outcome.kind}`),
  });
  const outcomes = await run.finish();
  assert.deepEqual(outcomes, []);
  assert.equal(seen[0], "e1#0:carried");
  assert.deepEqual(seen.toSorted(), [
    "e0#0:executed",
    "e0#1:executed",
    "e1#0:carried",
    "e1#1:executed",
    "e2#0:executed",
    "e2#1:executed",
  ]);
});
