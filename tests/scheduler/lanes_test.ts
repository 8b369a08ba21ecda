/** Section C of scenarios.md: exclusive provider lanes (LANE-1 … LANE-4). */
import assert from "node:assert/strict";
import { evalIds, fakePlan } from "../_fakes/plan.ts";
import { startRun } from "./_harness.ts";

Deno.test("S19 local Attempts never overlap, docker ones run beside them, one warning", async () => {
  const plan = fakePlan({
    evals: evalIds(4),
    experiments: [
      { id: "l1", provider: "local", attempts: 2 },
      { id: "l2", provider: "local" },
      { id: "d", provider: "docker", attempts: 2 },
    ],
  });
  const run = startRun(plan, {
    cap: 4,
    serialGroups: [["l1", "l2"]],
    script: (slot) => ({ durationMs: 100 + 37 * slot.position }),
  });
  await run.flush();
  const live = run.fake.live().map((a) => a.slot.experimentId);
  assert.equal(live.filter((id) => id !== "d").length, 1);
  assert.equal(live.filter((id) => id === "d").length, 3);
  await run.finish();
  assert.deepEqual(run.log.allViolations(), []);
  assert.equal(run.log.starts().length, 20);
  const warnings = run.log.diagnostics("provider-exclusive-serial");
  assert.equal(warnings.length, 1);
  assert.equal(warnings[0]!.level, "warning");
  assert.deepEqual(warnings[0]!.data, { provider: "local", laneKey: "local", concurrency: 4 });
  // The wording of sandboxes.md rule 53.
  assert.equal(
    warnings[0]!.message,
    'the "local" provider runs attempts one at a time; --max-concurrency 4 does not apply to it',
  );
});

Deno.test("S20 G = 1 with an exclusive provider emits no provider-exclusive-serial", async () => {
  const plan = fakePlan({ evals: evalIds(2), experiments: [{ id: "l", provider: "local" }] });
  const run = startRun(plan, { cap: 1, script: () => ({ durationMs: 10 }) });
  await run.finish();
  assert.deepEqual(run.log.diagnostics("provider-exclusive-serial"), []);
});

Deno.test("S21 a lane waiter holds no global slot and docker work runs beside the lane holder", async () => {
  const plan = fakePlan({
    evals: ["a", "b", "c"],
    experiments: [
      { id: "l", provider: "local", evals: ["a", "b"] },
      { id: "d", provider: "docker", evals: ["c"] },
    ],
  });
  const run = startRun(plan, { cap: 2 });
  await run.flush();
  assert.deepEqual(run.fake.names(), ["l:a#0", "d:c#0"]);
  const s = run.scheduler.snapshot();
  assert.deepEqual(s.lanes.local, { capacity: 1, held: 1, waiting: 1 });
  assert.equal(s.heldSlots, 2);
  assert.equal(s.globalWaiters, 0);
  assert.equal(s.running, 2);
  run.fake.get("l:a#0").pass();
  await run.flush();
  assert.deepEqual(run.fake.names(), ["l:a#0", "d:c#0", "l:b#0"]);
  await run.passAll();
  assert.deepEqual(run.log.allViolations(), []);
});

Deno.test("S22 two experiments on one exclusive lane never overlap despite their caps", async () => {
  const plan = fakePlan({
    evals: evalIds(4),
    experiments: [
      { id: "p", provider: "local", maxConcurrency: 4 },
      { id: "q", provider: "local", maxConcurrency: 4 },
    ],
  });
  const run = startRun(plan, {
    cap: 8,
    serialGroups: [["p", "q"]],
    script: (slot) => ({ durationMs: 50 + 13 * slot.position }),
  });
  await run.flush();
  assert.equal(run.fake.live().length, 1);
  await run.finish();
  assert.deepEqual(run.log.allViolations(), []);
  assert.equal(run.log.replay.peakRunning, 1);
  assert.equal(run.log.starts().length, 8);
});
