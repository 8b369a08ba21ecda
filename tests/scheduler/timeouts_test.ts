/** Section Q of scenarios.md: deadlines and abandonment (TIME-1 … TIME-3). */
import assert from "node:assert/strict";
import { buildPlan } from "../../src/plan/mod.ts";
import { fakePlan, type FakePlanSpec, fakeSelection } from "../_fakes/plan.ts";
import { startRun } from "./_harness.ts";

Deno.test("S121 the deadline starts at attempt_start, not while queued", async () => {
  const plan = fakePlan({
    evals: ["slow", "e"],
    experiments: [
      { id: "A", evals: ["slow"], attempts: 2 },
      { id: "B", evals: ["e"], timeoutMs: 10_000 },
    ],
  });
  const run = startRun(plan, {
    cap: 1,
    script: (slot) => ({ durationMs: slot.experimentId === "A" ? 30_000 : 8_000 }),
  });
  const outcomes = await run.finish();
  const b = outcomes.find((o) => o.kind === "executed" && o.result.experimentId === "B");
  assert.ok(b?.kind === "executed");
  assert.equal(b.result.verdict, "passed");
  const start = run.log.ofType("attempt_start").find((e) => e.slot.experimentId === "B")!;
  assert.equal(start.at - run.log.ofType("attempt_start")[0]!.at, 60_000);
});

Deno.test("S122 the timeout resolves flag, then experiment, then eval, then config", () => {
  const spec: FakePlanSpec = {
    evals: [{ id: "e", timeoutMs: 3000 }],
    experiments: [{ id: "x", timeoutMs: 2000 }],
  };
  const timeout = (s: FakePlanSpec, settings: { timeoutMs?: number; configTimeoutMs?: number }) =>
    buildPlan(fakeSelection(s), { rerun: "none", ...settings }).slots[0]!.timeoutMs;
  assert.equal(timeout(spec, { timeoutMs: 1000, configTimeoutMs: 4000 }), 1000);
  assert.equal(timeout(spec, { configTimeoutMs: 4000 }), 2000);
  const noExperiment: FakePlanSpec = { ...spec, experiments: [{ id: "x" }] };
  assert.equal(timeout(noExperiment, { configTimeoutMs: 4000 }), 3000);
  const noEval: FakePlanSpec = { evals: ["e"], experiments: [{ id: "x" }] };
  assert.equal(timeout(noEval, { configTimeoutMs: 4000 }), 4000);
  assert.equal(timeout(noEval, {}), null);
});

Deno.test("S123 a body ignoring its signal is abandoned 10 s after the deadline as a timeout", async () => {
  const plan = fakePlan({
    evals: ["e", "f"],
    experiments: [{ id: "x", timeoutMs: 5000, maxConcurrency: 1 }],
  });
  const run = startRun(plan, { cap: 2, onAbort: "manual" });
  await run.flush();
  const attempt = run.fake.get("x:e#0");
  await run.clock.tickAsync(5000);
  assert.equal(attempt.aborted, "timeout");
  await run.clock.tickAsync(9999);
  assert.deepEqual(run.log.ofType("attempt_end"), []);
  await run.clock.tickAsync(1);
  const end = run.log.ofType("attempt_end")[0]!;
  assert.equal(end.at - attempt.startedAt, 15_000);
  assert.equal(end.result.verdict, "errored");
  assert.equal(end.result.error?.code, "timeout");
  // The abandoned body never settles; the permit went to the next Attempt.
  assert.deepEqual(run.log.starts(), ["x:e#0", "x:f#0"]);
  run.fake.get("x:f#0").pass();
  await run.finish();
});

Deno.test("runPlan() reports a timeout even when the aborted body returns a pass (TIME-3)", async () => {
  const plan = fakePlan({ evals: ["e"], experiments: [{ id: "x", timeoutMs: 1000 }] });
  const run = startRun(plan, { cap: 1, onAbort: "manual" });
  await run.clock.tickAsync(1000);
  run.fake.get("x:e#0").pass();
  const [outcome] = await run.finish();
  assert.ok(outcome?.kind === "executed");
  assert.equal(outcome.result.verdict, "errored");
  assert.equal(outcome.result.error?.code, "timeout");
});

Deno.test("control.activity() is silent once the Attempt was abandoned", async () => {
  const plan = fakePlan({ evals: ["e"], experiments: [{ id: "x", timeoutMs: 1000 }] });
  const run = startRun(plan, { cap: 1, onAbort: "manual" });
  await run.flush();
  const attempt = run.fake.get("x:e#0");
  attempt.control.activity("running eval");
  await run.clock.tickAsync(11_000);
  await run.done;
  attempt.control.activity("still going");
  assert.deepEqual(run.log.ofType("activity").map((e) => e.text), ["running eval"]);
});
