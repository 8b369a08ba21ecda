/**
 * Section S of scenarios.md, the scheduler's part: results in plan order (ORD-2), reporter
 * callbacks one at a time (ORD-3).
 */
import assert from "node:assert/strict";
import { type RunEvent, sleep } from "../../src/_shared/mod.ts";
import { createScheduler } from "../../src/scheduler/mod.ts";
import { fakeAbandon, FakeAttempts } from "../_fakes/attempt.ts";
import { createFakeClock } from "../_fakes/clock.ts";
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

Deno.test("S131 reporter callbacks that each await 1 s never overlap and each Attempt's runs once", async () => {
  const clock = createFakeClock();
  const plan = fakePlan({ evals: evalIds(6), experiments: [{ id: "x", attempts: 2 }] });
  const fake = new FakeAttempts({
    clock,
    script: (slot) => ({ durationMs: 100 + ((slot.position * 137) % 400) }),
  });
  let active = 0;
  let peakActive = 0;
  const delivered: RunEvent[] = [];
  const reporter = async (event: RunEvent) => {
    peakActive = Math.max(peakActive, ++active);
    await sleep(clock, 1000);
    delivered.push(event);
    active--;
  };
  const scheduler = createScheduler(plan, fake.run, {
    signal: new AbortController().signal,
    clock,
    random: createSeededRandom(131),
    onEvent: reporter,
    cap: 4,
    abandon: fakeAbandon,
  });
  let endsWhenDone = -1;
  const done = scheduler.run().then((outcomes) => {
    endsWhenDone = delivered.filter((e) => e.type === "attempt_end").length;
    return outcomes;
  });
  await clock.runAllAsync();
  const outcomes = await done;
  assert.equal(outcomes.length, 12);
  assert.equal(peakActive, 1, "two callbacks overlapped");
  // The run ends only after the last callback settled.
  assert.equal(endsWhenDone, 12);
  const positions = (type: "attempt_start" | "attempt_end") =>
    delivered.flatMap((e) => e.type === type ? [e.slot.position] : []).sort((a, b) => a - b);
  const every = plan.slots.map((s) => s.position);
  assert.deepEqual(positions("attempt_start"), every);
  assert.deepEqual(positions("attempt_end"), every);
  // Delivered in emission order, while 4 Attempts ran at once.
  const times = delivered.map((e) => e.at);
  assert.deepEqual(times, [...times].sort((a, b) => a - b));
  let running = 0;
  let peakRunning = 0;
  for (const e of delivered) {
    if (e.type === "attempt_start") peakRunning = Math.max(peakRunning, ++running);
    if (e.type === "attempt_end") running--;
  }
  assert.equal(peakRunning, 4);
});
