/** Section S of scenarios.md, the scheduler's part: results in plan order (ORD-2). */
import assert from "node:assert/strict";
import { evalIds, fakePlan } from "../_fakes/plan.ts";
import { createSeededRandom } from "../_fakes/random.ts";
import { startRun } from "./_harness.ts";

Deno.test("S130 results are ordered by eval discovery, experiment selection, ordinal", async () => {
  const random = createSeededRandom(130);
  const plan = fakePlan({
    evals: evalIds(5),
    experiments: [{ id: "b", attempts: 3 }, { id: "a", attempts: 2, maxConcurrency: 3 }],
  });
  const durations = plan.slots.map(() => 1 + Math.floor(random.next() * 1000));
  const run = startRun(plan, {
    cap: 8,
    script: (slot) => ({ durationMs: durations[slot.position]! }),
  });
  const outcomes = await run.finish();
  const completion = run.log.ofType("attempt_end").map((e) => e.slot.position);
  assert.notDeepEqual(completion, [...completion].sort((x, y) => x - y));
  const order = outcomes.map((o) => {
    assert.ok(o.kind === "executed");
    return `${o.result.evalId} ${o.result.experimentId}#${o.result.ordinal}`;
  });
  const expected = evalIds(5).flatMap((e) => [
    `${e} b#0`,
    `${e} b#1`,
    `${e} b#2`,
    `${e} a#0`,
    `${e} a#1`,
  ]);
  assert.deepEqual(order, expected);
});
