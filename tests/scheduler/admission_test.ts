/** Section D of scenarios.md: the admission chain and its waits (CHAIN, WAIT, PRIO-5/6). */
import assert from "node:assert/strict";
import { evalIds, fakePlan } from "../_fakes/plan.ts";
import { createSeededRandom } from "../_fakes/random.ts";
import { startRun } from "./_harness.ts";

/** A promise the test resolves by hand. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => resolve = r);
  return { promise, resolve };
}

Deno.test("S23 while E1 sets up, E2 holds both slots and E1 Attempts stay queued", async () => {
  const gate = deferred();
  const plan = fakePlan({
    evals: [...evalIds(2, "a"), ...evalIds(4, "b")],
    experiments: [
      {
        id: "E1",
        evals: evalIds(2, "a"),
        attempts: 2,
        async setup(ctx) {
          ctx.progress({ message: "starting tunnel" });
          await gate.promise;
        },
      },
      { id: "E2", evals: evalIds(4, "b") },
    ],
  });
  const run = startRun(plan, { cap: 2 });
  await run.flush();
  assert.deepEqual(run.fake.names(), ["E2:b0#0", "E2:b1#0"]);
  const s = run.scheduler.snapshot();
  assert.equal(s.heldSlots, 2);
  assert.equal(s.running, 2);
  assert.equal(s.queued, 6);
  assert.equal(run.log.counters.queued, 6);
  const progress = run.log.ofType("hook_progress");
  assert.deepEqual(progress.map((p) => [p.experimentId, p.hook, p.text]), [
    ["E1", "setup", "starting tunnel"],
  ]);
  assert.deepEqual(run.log.ofType("experiment_setup").map((e) => e.status), ["started"]);
  gate.resolve();
  await run.passAll();
  assert.deepEqual(run.log.allViolations(), []);
});

Deno.test("S24 an experiment returning from a slow setup keeps its precedence", async () => {
  const gate = deferred();
  const plan = fakePlan({
    evals: [...evalIds(4, "a"), ...evalIds(2, "b")],
    experiments: [
      { id: "E1", evals: evalIds(4, "a"), setup: () => gate.promise },
      { id: "E2", evals: evalIds(2, "b"), attempts: 2 },
    ],
  });
  // G = 1: E1 has 4 rounds, E2 4 rounds too but a later selection index.
  const run = startRun(plan, { cap: 1 });
  await run.flush();
  assert.deepEqual(run.fake.names(), ["E2:b0#0"]);
  gate.resolve();
  await run.flush();
  // E1's Attempts re-entered the global queue with their original keys while E2's waited longer.
  run.fake.get("E2:b0#0").pass();
  await run.flush();
  assert.deepEqual(run.fake.names(), ["E2:b0#0", "E1:a0#0"]);
  await run.passAll();
  assert.deepEqual(run.log.starts().slice(1, 5), ["E1:a0#0", "E1:a1#0", "E1:a2#0", "E1:a3#0"]);
});

Deno.test("S25 a lane waiter whose eval passed meanwhile settles skipped without starting", async () => {
  const plan = fakePlan({
    evals: ["e"],
    experiments: [{ id: "x", provider: "local", attempts: 2, earlyExit: true }],
  });
  const run = startRun(plan, { cap: 2 });
  await run.flush();
  assert.deepEqual(run.fake.names(), ["x:e#0"]);
  assert.deepEqual(run.scheduler.snapshot().lanes.local, { capacity: 1, held: 1, waiting: 1 });
  run.fake.get("x:e#0").pass();
  const outcomes = await run.finish();
  assert.deepEqual(run.log.starts(), ["x:e#0"]);
  assert.deepEqual(outcomes[1], { kind: "not-dispatched", reason: "early-exit" });
});

Deno.test("S28 200 seeded slots never exceed G or a cap, and a waiter means all slots are held", async () => {
  const random = createSeededRandom(28);
  const pick = (n: number) => Math.floor(random.next() * n);
  const evals = evalIds(25);
  const plan = fakePlan({
    evals,
    experiments: [
      { id: "w", attempts: 2, maxConcurrency: 3 },
      { id: "x", attempts: 2, provider: "local" },
      { id: "y", attempts: 2, provider: "docker" },
      { id: "z", attempts: 2, maxConcurrency: 2, provider: "docker" },
    ],
  });
  assert.equal(plan.toRun, 200);
  const scripts = plan.slots.map(() => ({
    durationMs: 1 + pick(5000),
    verdict: pick(10) === 0 ? "failed" as const : "passed" as const,
    backoffs: pick(4) === 0 ? [{ afterMs: pick(2000) }] : [],
  }));
  const run = startRun(plan, {
    cap: 5,
    random,
    serialGroups: [["x"]],
    script: (slot) => scripts[slot.position],
  });
  await run.finish();
  assert.deepEqual(run.log.allViolations(), []);
  assert.equal(run.log.ofType("attempt_end").length, 200);
  assert.ok(run.log.ofType("backoff").length > 0);
  assert.equal(run.log.replay.peakHeld, 5);
  assert.equal(run.replayPeak("w"), 3);
});
