/** Section T of scenarios.md in process: the ramp moving a live global cap (RAMP-3 … RAMP-7). */
import assert from "node:assert/strict";
import type { RampControlRead } from "../../src/scheduler/ramp.ts";
import type { RunPlanOptions } from "../../src/scheduler/mod.ts";
import { evalIds, fakePlan } from "../_fakes/plan.ts";
import { createScriptedRandom } from "../_fakes/random.ts";
import { type Run, startRun } from "./_harness.ts";

const W = 60_000;

/**
 * Passes every live Attempt, and every one that starts after, until the run ends. Time moves a
 * second at a time: the ramp's windows repeat for as long as the run lives, so running every
 * timer would never end.
 */
async function passAll(run: Run): Promise<void> {
  let done = false;
  run.done.then(() => void (done = true), () => void (done = true));
  while (!done) {
    for (const attempt of run.fake.live()) attempt.pass();
    await run.clock.tickAsync(1000);
  }
  await run.done;
}

function ramp(
  from: number,
  to: number,
  step: number,
  readControl?: () => RampControlRead,
): NonNullable<RunPlanOptions["ramp"]> {
  return {
    settings: { from, to, step, windowMs: W },
    ...(readControl ? { readControl } : {}),
  };
}

Deno.test("S138 RAMP-4 RAMP-6: one clean saturated window raises 2 → 4 and two waiters start at once, by priority", async () => {
  const plan = fakePlan({ evals: evalIds(20), experiments: [{ id: "x" }] });
  const run = startRun(plan, { cap: 2, ramp: ramp(2, 6, 2) });
  await run.flush();
  assert.deepEqual(run.fake.names(), ["x:e00#0", "x:e01#0"]);
  assert.deepEqual(run.scheduler.snapshot().ramp?.cap, 2);
  await run.clock.tickAsync(W);
  const [event] = run.log.ofType("ramp");
  assert.deepEqual([event!.cap, event!.previousCap, event!.state], [4, 2, "climbing"]);
  // The two grants follow the event in the same instant, smallest keys first.
  const after = run.log.timeline.slice(run.log.timeline.indexOf("ramp"));
  assert.deepEqual(after.filter((t) => t.startsWith("attempt_start:")), [
    "attempt_start:x:e02#0",
    "attempt_start:x:e03#0",
  ]);
  const starts = run.log.ofType("attempt_start").slice(2);
  assert.ok(starts.every((s) => s.at === event!.at));
  const s = run.scheduler.snapshot();
  assert.deepEqual([s.cap, s.heldSlots, s.ramp?.state], [4, 4, "climbing"]);
  await passAll(run);
  assert.deepEqual(run.log.allViolations(), []);
});

Deno.test("S139 RAMP-5: one runnable Attempt at cap 2 is not saturated; the cap stays", async () => {
  const plan = fakePlan({ evals: ["e"], experiments: [{ id: "x" }] });
  const run = startRun(plan, { cap: 2, ramp: ramp(2, 6, 2) });
  await run.flush();
  await run.clock.tickAsync(3 * W);
  assert.equal(run.scheduler.snapshot().cap, 2);
  assert.equal(run.scheduler.snapshot().ramp?.state, "steady");
  assert.deepEqual(run.log.ofType("ramp"), []);
  await passAll(run);
});

Deno.test("S140 RAMP-4: an errored settlement in a saturated window blocks the increase", async () => {
  const plan = fakePlan({ evals: evalIds(20), experiments: [{ id: "x" }] });
  const run = startRun(plan, { cap: 2, ramp: ramp(2, 6, 2) });
  await run.flush();
  run.fake.get("x:e00#0").error("boom");
  await run.clock.tickAsync(W);
  assert.equal(run.scheduler.snapshot().cap, 2);
  await run.clock.tickAsync(W); // the next clean window climbs
  assert.equal(run.scheduler.snapshot().cap, 4);
  await passAll(run);
  assert.deepEqual(run.log.allViolations(), []);
});

Deno.test("S141 RAMP-5 RETRY-7: 3 network retries in a saturated window at cap 4 block the increase", async () => {
  const plan = fakePlan({ evals: evalIds(20), experiments: [{ id: "x" }] });
  const run = startRun(plan, {
    cap: 4,
    ramp: ramp(4, 8, 2),
    random: createScriptedRandom([0.001]),
  });
  await run.flush();
  const live = run.fake.live();
  // Three short backoffs (5 ms) of one Attempt each: its slot is re-taken by priority.
  for (const attempt of live.slice(0, 3)) {
    const sleep = attempt.backoff("network");
    await run.clock.tickAsync(10);
    void sleep;
  }
  await run.clock.tickAsync(W - 30);
  assert.equal(run.scheduler.snapshot().cap, 4);
  assert.deepEqual(run.log.ofType("ramp"), []);
  await run.clock.tickAsync(W);
  assert.equal(run.scheduler.snapshot().cap, 6);
  await passAll(run);
  assert.deepEqual(run.log.allViolations(), []);
});

Deno.test("S142 RAMP-4 RAMP-7 WAIT-3: pushback in two windows lowers 6 → 4 (fast pushback); nothing is aborted and nothing starts until held < 4", async () => {
  const plan = fakePlan({ evals: evalIds(30), experiments: [{ id: "x" }] });
  const run = startRun(plan, {
    cap: 2,
    ramp: ramp(2, 6, 2),
    random: createScriptedRandom([0.001]),
  });
  await run.flush();
  await run.clock.tickAsync(2 * W); // 2 → 4 → 6
  assert.equal(run.scheduler.snapshot().cap, 6);
  assert.equal(run.scheduler.snapshot().running, 6);
  // A rate_limit rejection in each of two windows.
  const [a, b] = run.fake.live();
  void a!.backoff("rate_limit");
  await run.clock.tickAsync(W);
  void b!.backoff("rate_limit");
  await run.clock.tickAsync(W);
  const lowered = run.log.ofType("ramp").at(-1)!;
  assert.deepEqual([lowered.cap, lowered.previousCap, lowered.state], [4, 6, "backing off"]);
  assert.ok(run.fake.live().every((x) => x.aborted === undefined));
  // Fast pushback (docs/ramp.md): the first rejection lowered the cap at once, so neither
  // backoff got its slot back.
  const s = run.scheduler.snapshot();
  assert.deepEqual([s.cap, s.heldSlots], [4, 4]);
  // Settle executing Attempts one by one: the first grant comes only once held < 4.
  const grantsAt: number[] = [];
  const executing = run.fake.live().filter((x) => x !== a && x !== b);
  for (const x of executing) {
    const before = run.log.events.length;
    const heldBefore = run.scheduler.snapshot().heldSlots;
    x.pass();
    await run.flush();
    const granted = run.log.events.slice(before).some((e) =>
      e.type === "attempt_start" || (e.type === "backoff" && e.state === "resumed")
    );
    if (granted) grantsAt.push(heldBefore - 1);
    if (grantsAt.length > 0) break;
  }
  assert.deepEqual(grantsAt, [3]);
  await passAll(run);
  assert.deepEqual(run.log.allViolations(), []);
});

Deno.test("S149 RAMP-12: the control range becoming 4:8 raises cap 2 → 4 at the next window and two waiters start", async () => {
  let control: RampControlRead = { hold: null, range: null };
  const plan = fakePlan({ evals: evalIds(20), experiments: [{ id: "x" }] });
  const run = startRun(plan, { cap: 2, ramp: ramp(2, 8, 1, () => control) });
  await run.flush();
  control = { hold: null, range: { from: 4, to: 8 } };
  await run.clock.tickAsync(W);
  const [event] = run.log.ofType("ramp");
  assert.deepEqual([event!.cap, event!.from, event!.to, event!.cause], [4, 4, 8, "range"]);
  assert.equal(run.scheduler.snapshot().running, 4);
  await passAll(run);
  assert.deepEqual(run.log.allViolations(), []);
});

Deno.test("S154 RAMP-9: a hold in the control file at start: the cap never rises", async () => {
  const plan = fakePlan({ evals: evalIds(20), experiments: [{ id: "x" }] });
  const run = startRun(plan, {
    cap: 2,
    ramp: ramp(2, 8, 2, () => ({ hold: { reason: "quota" }, range: null })),
  });
  await run.flush();
  assert.deepEqual(run.scheduler.snapshot().ramp?.heldReason, "quota");
  await run.clock.tickAsync(4 * W);
  assert.equal(run.scheduler.snapshot().cap, 2);
  await passAll(run);
});

Deno.test("S155 RAMP-3: climbing 2 → 8 keeps an experiment cap of 1 and an exclusive lane serial; rounds use 2", async () => {
  // b (selection 0) has 6 evals, a (selection 1) 8: with G₀ = 2 a has more rounds (4 > 3) and
  // goes first; with G₀ = 8 both would have 1 round and b would go first. x, capped below G₀,
  // ranks ahead of the uncapped experiments (docs/priority.md).
  const plan = fakePlan({
    evals: evalIds(8),
    experiments: [
      { id: "b", evals: evalIds(6) },
      { id: "a" },
      { id: "x", maxConcurrency: 1, evals: evalIds(4) },
      { id: "l1", laneKey: "custom:serial", evals: evalIds(3) },
      { id: "l2", laneKey: "custom:serial", evals: evalIds(3) },
    ],
  });
  const run = startRun(plan, {
    cap: 2,
    ramp: ramp(2, 8, 3),
    serialGroups: [["l1", "l2"]],
  });
  await run.flush();
  assert.deepEqual(run.fake.names(), ["x:e0#0", "a:e0#0"]);
  for (let i = 0; i < 3; i++) await run.clock.tickAsync(W);
  assert.equal(run.scheduler.snapshot().cap, 8);
  await passAll(run);
  assert.equal(run.replayPeak("x"), 1);
  assert.deepEqual(run.log.allViolations(), []);
});

Deno.test("RAMP-4: the windows stop with the run: no timer is left", async () => {
  const plan = fakePlan({ evals: evalIds(3), experiments: [{ id: "x" }] });
  const run = startRun(plan, { cap: 2, ramp: ramp(2, 4, 1) });
  await passAll(run);
  assert.equal(run.clock.countTimers(), 0);
});

Deno.test("LANE-4: with a ramp the exclusive-lane warning names the ramp's ceiling", async () => {
  const plan = fakePlan({ evals: evalIds(2), experiments: [{ id: "l", provider: "local" }] });
  const run = startRun(plan, { cap: 2, ramp: ramp(2, 8, 2) });
  await passAll(run);
  const [warning, ...more] = run.log.diagnostics("provider-exclusive-serial");
  assert.deepEqual(more, []);
  assert.equal(
    warning!.message,
    `the "local" provider runs attempts one at a time; the ramp's ceiling 8 does not apply to it`,
  );
});

Deno.test("RETRY-2 deviation (docs/ramp.md): a ramped run sleeps a rate_limit retry for the server's hint; a run without a ramp keeps max(hint, 5 s × u)", async () => {
  const delays: number[] = [];
  for (const ramped of [true, false]) {
    const plan = fakePlan({ evals: evalIds(1), experiments: [{ id: "x" }] });
    const run = startRun(plan, {
      cap: 2,
      ...(ramped ? { ramp: ramp(2, 4, 2) } : {}),
      random: createScriptedRandom([0.9]),
    });
    await run.flush();
    const [a] = run.fake.live();
    void a!.backoff("rate_limit", 1000);
    await run.flush();
    const sleeping = run.log.ofType("backoff").find((e) => e.state === "sleeping")!;
    delays.push(sleeping.delayMs);
    await passAll(run);
    assert.deepEqual(run.log.allViolations(), []);
  }
  assert.deepEqual(delays, [1000, 4500]);
});
