/**
 * TIME-3, INT-1: an Attempt whose body ignores its aborted signal is abandoned after
 * ATTEMPT_ABORT_GRACE_MS, and its sandbox is still destroyed (fresh) or retired from its pool,
 * before `attempt_end`, while the body itself never returns. Real scheduler, real attempt runner,
 * fake provider, fake clock.
 */
import assert from "node:assert/strict";
import { AbortReason, ATTEMPT_ABORT_GRACE_MS } from "../../src/_shared/mod.ts";
import { fakePlan } from "../_fakes/plan.ts";
import { outcomeSummary, startRun } from "./_harness.ts";
import { type SandboxRun, startSandboxRun } from "./_sandbox_harness.ts";

/** Lets the run go on at the current instant until `done()`; a bounded number of turns. */
async function until(run: SandboxRun, done: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !done(); i++) await run.clock.flush();
  assert.ok(done(), "the run never reached the awaited state");
}

Deno.test("S123 a body ignoring its signal is abandoned at the grace and its sandbox is destroyed (TIME-3)", async () => {
  const run = await startSandboxRun({
    cap: 1,
    evals: [{ id: "a" }], // holds, ignoring t.signal, until released
    experiments: [{ id: "x", timeoutMs: 5_000 }],
  });
  await until(run, () => run.holding().length === 1);
  const sandbox = run.provider.handles[0]!;
  await run.clock.tickAsync(5_000); // the deadline aborts the signal
  await run.clock.tickAsync(ATTEMPT_ABORT_GRACE_MS - 1);
  assert.equal(sandbox.stopped, false, "the body still has its grace");
  assert.deepEqual(run.log.ofType("attempt_end"), []);
  await run.clock.tickAsync(1);
  await until(run, () => run.log.ofType("attempt_end").length === 1);
  // Destroyed although the body never returned, and before the Attempt ended.
  assert.deepEqual(run.holding(), ["x:a"]);
  assert.deepEqual([sandbox.stopped, sandbox.stopCalls], [true, 1]);
  assert.equal(run.provider.backend.size, 0);
  const { result } = run.log.ofType("attempt_end")[0]!;
  assert.equal(result.verdict, "errored");
  assert.equal(result.error?.code, "timeout");
  assert.match(result.error!.message, /abandoned/);
  assert.ok(result.details.phases.some((p) => p.phase === "cleanup"), "cleanup ran in the result");
  assert.ok(result.details.logs.some((l) => l.text.startsWith("abandoned:")));
  const outcomes = await run.finish();
  assert.deepEqual(outcomeSummary(run.plan, outcomes), ["x:a#0 errored"]);
  assert.equal(sandbox.stopCalls, 1, "the late return of the body stops nothing twice");
});

Deno.test("INT-1 an interrupted body that ignores its signal still has its pooled sandbox retired", async () => {
  const run = await startSandboxRun({
    cap: 1,
    evals: [{ id: "a" }],
    experiments: [{ id: "x", sandboxReuse: true }],
  });
  await until(run, () => run.holding().length === 1);
  const sandbox = run.provider.handles[0]!;
  run.interrupt.abort(new AbortReason("interrupt"));
  await run.clock.tickAsync(ATTEMPT_ABORT_GRACE_MS - 1);
  assert.equal(sandbox.stopped, false);
  await run.clock.tickAsync(1);
  await until(run, () => run.log.ofType("attempt_end").length === 1);
  assert.deepEqual(run.holding(), ["x:a"]);
  assert.equal(run.log.ofType("attempt_end")[0]!.result.verdict, "interrupted");
  // Retired, never reset for another Attempt: the abandoned body may still use it.
  await until(run, () => sandbox.stopped);
  assert.equal(sandbox.stopCalls, 1);
  const outcomes = await run.finish();
  assert.deepEqual(outcomeSummary(run.plan, outcomes), ["x:a#0 interrupted"]);
  assert.equal(run.provider.backend.size, 0);
});

Deno.test("TIME-3 a timed-out pooled body that never returns frees its lease: the next Attempt gets a new sandbox", async () => {
  const run = await startSandboxRun({
    cap: 1,
    evals: [{ id: "a" }, { id: "b", durationMs: 5 }],
    experiments: [{ id: "x", sandboxReuse: true, maxConcurrency: 1, timeoutMs: 1_000 }],
  });
  await until(run, () => run.holding().length === 1);
  await run.clock.tickAsync(1_000 + ATTEMPT_ABORT_GRACE_MS);
  await until(run, () => run.uses.some((u) => u.name === "x:b"));
  await run.clock.tickAsync(5);
  await until(run, () => run.uses.some((u) => u.name === "x:b" && u.event === "end"));
  assert.deepEqual(run.holding(), ["x:a"]);
  assert.deepEqual(run.uses.filter((u) => u.event === "begin").map((u) => u.sandbox), [
    "fake-1",
    "fake-2",
  ]);
  assert.equal(run.provider.handles[0]!.stopped, true);
  const outcomes = await run.finish();
  assert.deepEqual(outcomeSummary(run.plan, outcomes), ["x:a#0 errored", "x:b#0 passed"]);
});

Deno.test("TIME-3 work that ended its timed part is waited for: its cleanup is never abandoned", async () => {
  const plan = fakePlan({ evals: ["e"], experiments: [{ id: "x" }] });
  const run = startRun(plan, { cap: 1, onAbort: "manual" });
  await run.flush();
  const attempt = run.fake.get("x:e#0");
  attempt.control.endTimed?.(); // the body returned; a slow cleanup follows
  run.interrupt.abort(new AbortReason("interrupt"));
  await run.clock.tickAsync(ATTEMPT_ABORT_GRACE_MS + 25_000);
  assert.deepEqual(run.log.ofType("attempt_end"), [], "not abandoned during its cleanup");
  attempt.pass();
  await run.flush();
  const [end] = run.log.ofType("attempt_end");
  assert.equal(end?.result.verdict, "interrupted");
  assert.equal(end?.result.details.logs.some((l) => l.text === "abandoned"), false);
  await run.finish();
});
