/** Section B of scenarios.md: experiment caps (EXP-1 … EXP-4, RUN-6). */
import assert from "node:assert/strict";
import { evalIds, fakePlan } from "../_fakes/plan.ts";
import { startRun } from "./_harness.ts";

Deno.test("S14 a capped slow experiment runs one at a time while fast ones back-fill", async () => {
  const slow = evalIds(3, "s");
  const fast = evalIds(6, "f");
  const plan = fakePlan({
    evals: [...slow, ...fast],
    experiments: [
      { id: "fast", evals: fast },
      { id: "slow", evals: slow, maxConcurrency: 1 },
    ],
  });
  const run = startRun(plan, { cap: 3 });
  await run.flush();
  // slow has 3 rounds, fast 2: slow is granted first, its other slots wait for its permit.
  assert.deepEqual(run.fake.names(), ["slow:s0#0", "fast:f0#0", "fast:f1#0"]);
  assert.deepEqual(run.scheduler.snapshot().experimentPermits.slow, {
    capacity: 1,
    held: 1,
    waiting: 2,
  });
  while (run.fake.live().length > 0) {
    const live = run.fake.live();
    const slowRunning = live.filter((a) => a.slot.experimentId === "slow").length;
    assert.ok(slowRunning <= 1);
    assert.ok(live.length <= 3);
    const fastQueued = 6 - run.fake.started.filter((a) => a.slot.experimentId === "fast").length;
    if (slowRunning === 1 && fastQueued > 0) assert.equal(live.length, 3);
    (live.find((a) => a.slot.experimentId === "fast") ?? live[0]!).pass();
    await run.flush();
  }
  await run.finish();
  assert.deepEqual(run.log.allViolations(), []);
  assert.deepEqual(run.replayPeak("slow"), 1);
});

Deno.test("S15 with maxConcurrency 1 the next Attempt starts only after the sandbox is destroyed", async () => {
  const plan = fakePlan({ evals: ["a", "b"], experiments: [{ id: "x", maxConcurrency: 1 }] });
  const run = startRun(plan, { cap: 4 });
  await run.flush();
  run.fake.get("x:a#0").pass({ cleanupMs: 30_000 });
  await run.clock.tickAsync(29_999);
  assert.deepEqual(run.log.starts(), ["x:a#0"]);
  await run.clock.tickAsync(1);
  assert.deepEqual(run.log.starts(), ["x:a#0", "x:b#0"]);
  const destroyed = run.log.timeline.indexOf("destroy:x:a#0");
  assert.ok(destroyed <= run.log.timeline.indexOf("attempt_start:x:b#0"));
  run.fake.get("x:b#0").pass();
  await run.finish();
});

Deno.test("S16 an experiment cap above G never lets the experiment exceed G", async () => {
  const plan = fakePlan({ evals: evalIds(8), experiments: [{ id: "x", maxConcurrency: 5 }] });
  const run = startRun(plan, { cap: 2, script: () => ({ durationMs: 1000 }) });
  await run.finish();
  assert.deepEqual(run.log.allViolations(), []);
  assert.deepEqual(run.replayPeak("x"), 2);
  assert.deepEqual(run.log.starts().length, 8);
});

Deno.test("S17 a capped Attempt in backoff keeps its permit and its slot goes to another experiment", async () => {
  const x = evalIds(4, "x");
  const plan = fakePlan({
    evals: [...x, "y0", "y1", "y2"],
    experiments: [{ id: "x", evals: x, maxConcurrency: 2 }, { id: "y", evals: ["y0", "y1", "y2"] }],
  });
  const run = startRun(plan, { cap: 4 });
  await run.flush();
  // x (2 rounds) goes first with 2 permits; y takes the other two slots; one y waits.
  assert.deepEqual(run.fake.names(), ["x:x0#0", "x:x1#0", "y:y0#0", "y:y1#0"]);
  const sleeping = run.fake.get("x:x0#0").backoff();
  await run.flush();
  assert.deepEqual(run.fake.names().slice(4), ["y:y2#0"]);
  const s = run.scheduler.snapshot();
  assert.deepEqual([s.running, s.backoff, s.heldSlots], [5, 1, 4]);
  assert.deepEqual(s.experimentPermits.x, { capacity: 2, held: 2, waiting: 2 });
  for (const name of ["y:y0#0", "y:y1#0", "y:y2#0", "x:x1#0"]) run.fake.get(name).pass();
  await run.clock.runAllAsync();
  await sleeping;
  await run.passAll();
  assert.deepEqual(run.log.allViolations(), []);
  assert.deepEqual(run.replayPeak("x"), 2);
});
