/** Section F of scenarios.md and RETRY-4/5: running above the cap during send backoff. */
import assert from "node:assert/strict";
import { evalIds, fakePlan } from "../_fakes/plan.ts";
import { createScriptedRandom } from "../_fakes/random.ts";
import { startRun } from "./_harness.ts";

Deno.test("S39 two Attempts in backoff let two more run: running 4, backoff 2, held 2", async () => {
  const plan = fakePlan({ evals: evalIds(4), experiments: [{ id: "x" }] });
  const run = startRun(plan, { cap: 2, random: createScriptedRandom([0.5]) });
  await run.flush();
  const first = run.fake.live();
  const sleeps = first.map((a) => a.backoff());
  await run.flush();
  assert.deepEqual(run.fake.names(), ["x:e0#0", "x:e1#0", "x:e2#0", "x:e3#0"]);
  const s = run.scheduler.snapshot();
  assert.deepEqual([s.running, s.backoff, s.heldSlots, s.cap], [4, 2, 2, 2]);
  assert.deepEqual([run.log.counters.running, run.log.counters.backoff], [4, 2]);
  // The sleep ends, but both slots are busy: the Attempts stay in backoff (W15).
  await run.clock.tickAsync(2500);
  assert.equal(run.scheduler.snapshot().backoff, 2);
  assert.equal(run.scheduler.snapshot().globalWaiters, 2);
  run.fake.get("x:e2#0").pass();
  run.fake.get("x:e3#0").pass();
  await Promise.all(sleeps);
  const resumed = run.scheduler.snapshot();
  assert.deepEqual([resumed.running, resumed.backoff, resumed.heldSlots], [2, 0, 2]);
  assert.equal(run.log.counters.backoff, 0);
  await run.passAll();
  assert.deepEqual(run.log.allViolations(), []);
});

Deno.test("S41 the second retry of a seeded source waits 8 s and reports retry 2 of the 3 a send has", async () => {
  const plan = fakePlan({ evals: ["e"], experiments: [{ id: "x" }] });
  const run = startRun(plan, { cap: 1, random: createScriptedRandom([0.3, 0.8]) });
  await run.flush();
  const attempt = run.fake.get("x:e#0");
  const first = attempt.backoff();
  await run.clock.tickAsync(1500);
  await first;
  const second = attempt.backoff();
  await run.flush();
  const sleeping = run.log.ofType("backoff").filter((e) => e.state === "sleeping");
  assert.deepEqual(sleeping.map((e) => [e.retry, e.maxRetries, e.reason, e.delayMs]), [
    [1, 3, "rate_limit", 1500],
    [2, 3, "rate_limit", 8000],
  ]);
  await run.clock.tickAsync(7999);
  assert.equal(run.log.ofType("backoff").length, 3);
  await run.clock.tickAsync(1);
  await second;
  assert.equal(run.log.ofType("backoff").at(-1)!.state, "resumed");
  await run.passAll();
});

Deno.test("S42 a backing-off Attempt of the first experiment gets the next free slot", async () => {
  const plan = fakePlan({
    evals: ["a", "b", "c"],
    experiments: [{ id: "E1", evals: ["a", "b"] }, { id: "E2", evals: ["c"] }],
  });
  const run = startRun(plan, { cap: 1, random: createScriptedRandom([0.2]) });
  await run.flush();
  const sleep = run.fake.get("E1:a#0").backoff();
  await run.flush();
  assert.deepEqual(run.fake.names(), ["E1:a#0", "E1:b#0"]);
  await run.clock.tickAsync(1000);
  assert.equal(run.scheduler.snapshot().globalWaiters, 2);
  run.fake.get("E1:b#0").pass();
  await sleep;
  assert.equal(run.log.ofType("backoff").at(-1)!.state, "resumed");
  assert.deepEqual(run.fake.names(), ["E1:a#0", "E1:b#0"]);
  await run.passAll();
  assert.deepEqual(run.log.starts(), ["E1:a#0", "E1:b#0", "E2:c#0"]);
});

Deno.test("S120 a backoff crossing the deadline ends at the deadline with a timeout", async () => {
  const plan = fakePlan({ evals: ["e"], experiments: [{ id: "x", timeoutMs: 3000 }] });
  const run = startRun(plan, { cap: 1 });
  await run.flush();
  const started = run.clock.now();
  const attempt = run.fake.get("x:e#0");
  const sleep = attempt.backoff("rate_limit", 10_000);
  const rejected = assert.rejects(sleep);
  await run.clock.tickAsync(3000);
  await rejected;
  const [outcome] = await run.finish();
  assert.ok(outcome?.kind === "executed");
  assert.equal(outcome.result.verdict, "errored");
  assert.equal(outcome.result.error?.code, "timeout");
  assert.equal(run.log.ofType("attempt_end")[0]!.at - started, 3000);
});

Deno.test("control.backoff() rejects when the Attempt is already backing off", async () => {
  const plan = fakePlan({ evals: ["e"], experiments: [{ id: "x" }] });
  const run = startRun(plan, { cap: 1, random: createScriptedRandom([0.1]) });
  await run.flush();
  const attempt = run.fake.get("x:e#0");
  const sleep = attempt.backoff();
  await assert.rejects(attempt.backoff(), TypeError);
  await run.clock.tickAsync(500);
  await sleep;
  await run.passAll();
});
