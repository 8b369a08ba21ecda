/**
 * Release and re-grant of a global slot are one step (PRIO-1, PRIO-7, PRIO-8): the slot an ending
 * Attempt frees goes to the smallest key among every waiter that could use it, also the one its
 * own experiment permit, lane or pool lease lets through in the same step.
 */
import assert from "node:assert/strict";
import { evalIds, fakePlan } from "../_fakes/plan.ts";
import { startRun } from "./_harness.ts";
import { priorityViolations } from "./_priority_audit.ts";

Deno.test("PRIO-7 PRIO-8 at G = 1 a capped experiment with the most rounds keeps its freed slot: eb×5, ec×3, ea×2", async () => {
  const plan = fakePlan({
    evals: [...evalIds(2, "a"), ...evalIds(5, "b"), ...evalIds(3, "c")],
    experiments: [
      { id: "ea", evals: evalIds(2, "a") },
      { id: "eb", evals: evalIds(5, "b"), maxConcurrency: 1 },
      { id: "ec", evals: evalIds(3, "c") },
    ],
  });
  const run = startRun(plan, { cap: 1, script: () => ({ durationMs: 100 }) });
  await run.finish();
  assert.deepEqual(run.log.starts().map((s) => s.split(":")[0]), [
    ...Array(5).fill("eb"),
    ...Array(3).fill("ec"),
    ...Array(2).fill("ea"),
  ]);
  assert.deepEqual(run.log.allViolations(), []);
});

Deno.test("PRIO-7 at G = 1 the next member of an eval group keeps the slot its predecessor frees", async () => {
  const plan = fakePlan({
    evals: [
      { id: "g1", groupId: "g" },
      { id: "g2", groupId: "g" },
      { id: "g3", groupId: "g" },
      "a",
      "b",
    ],
    experiments: [{ id: "x", evals: ["g1", "g2", "g3"] }, { id: "y", evals: ["a", "b"] }],
  });
  const run = startRun(plan, { cap: 1, script: () => ({ durationMs: 100 }) });
  await run.finish();
  assert.deepEqual(run.log.starts(), ["x:g1#0", "x:g2#0", "x:g3#0", "y:a#0", "y:b#0"]);
});

Deno.test("PRIO-1 a lane waiter let through by an ending Attempt is ranked for the slot that Attempt frees", async () => {
  // G = 2: x0 holds the lane; x1…x3 wait for it holding nothing; z1 and z2 wait for a slot.
  const plan = fakePlan({
    evals: [...evalIds(4, "x"), ...evalIds(3, "z")],
    experiments: [
      { id: "x", evals: evalIds(4, "x"), provider: "local" },
      { id: "z", evals: evalIds(3, "z") },
    ],
  });
  const run = startRun(plan, {
    cap: 2,
    script: (slot) => ({ durationMs: slot.experimentId === "x" ? 100 : 150 }),
  });
  await run.finish();
  // At 100 ms x0 frees the lane and a slot together: x1 gets both, z1 waits for z0's slot.
  assert.deepEqual(run.log.starts(), [
    "x:x0#0",
    "z:z0#0",
    "x:x1#0",
    "z:z1#0",
    "x:x2#0",
    "z:z2#0",
    "x:x3#0",
  ]);
  assert.deepEqual(priorityViolations(plan, 2, run.log.events), []);
  assert.deepEqual(run.log.allViolations(), []);
});
