/** Section I of scenarios.md: the experiment lifecycle (LIFE-1 … LIFE-8, TIME-4). */
import assert from "node:assert/strict";
import type { ExperimentHookContext } from "../../src/discovery/mod.ts";
import { evalIds, fakePlan } from "../_fakes/plan.ts";
import { outcomeSummary, startRun } from "./_harness.ts";

/** Setup and teardown hooks that count their calls. */
function hooks(options: { setup?: () => unknown; teardown?: () => unknown } = {}) {
  const calls = { setup: 0, teardown: 0 };
  return {
    calls,
    setup: (_ctx: ExperimentHookContext) => {
      calls.setup++;
      return options.setup?.() as void | Promise<void>;
    },
    teardown: (_ctx: ExperimentHookContext) => {
      calls.teardown++;
      return options.teardown?.() as void | Promise<void>;
    },
  };
}

Deno.test("S56 an experiment whose ordinals are all carried runs neither hook", async () => {
  const h = hooks();
  const plan = fakePlan({
    evals: ["a", "b"],
    experiments: [{ id: "E", ...h, carried: { "a#0": "passed", "b#0": "failed" } }],
  });
  const run = startRun(plan, { cap: 2 });
  const outcomes = await run.finish();
  assert.deepEqual(h.calls, { setup: 0, teardown: 0 });
  assert.deepEqual(outcomes, [{ kind: "carried" }, { kind: "carried" }]);
  assert.deepEqual(run.log.events, []);
});

for (
  const [label, setup] of [
    ["throws", () => Promise.reject(new Error("tunnel refused"))],
    ["returns a function", () => () => undefined],
  ] as const
) {
  Deno.test(`S57 setup that ${label} errors every runnable Attempt of E only`, async () => {
    const h = hooks({ setup });
    const plan = fakePlan({
      evals: [...evalIds(3, "a"), "b"],
      experiments: [
        { id: "E", evals: evalIds(3, "a"), attempts: 2, ...h },
        { id: "E2", evals: ["b"] },
      ],
    });
    const run = startRun(plan, { cap: 2, script: () => ({ durationMs: 10 }) });
    const outcomes = await run.finish();
    assert.deepEqual(run.fake.names(), ["E2:b#0"]);
    assert.deepEqual(h.calls, { setup: 1, teardown: 1 });
    const summary = outcomeSummary(plan, outcomes);
    assert.equal(
      summary.filter((s) => s.endsWith("errored-undispatched:experiment-setup-failed")).length,
      6,
    );
    assert.ok(summary.includes("E2:b#0 passed"));
    const errored = run.log.ofType("slot_errored");
    assert.equal(errored.length, 6);
    assert.ok(errored.every((e) => e.code === "experiment-setup-failed"));
    const expected = label === "throws" ? /tunnel refused/ : /returned a function/;
    assert.match(errored[0]!.message, expected);
    assert.deepEqual(run.log.ofType("experiment_setup").map((e) => e.status), [
      "started",
      "failed",
    ]);
    assert.deepEqual(run.log.allViolations(), []);
  });
}

Deno.test("S58 --budget 0 dispatches nothing and runs neither hook", async () => {
  const h = hooks();
  const plan = fakePlan({ evals: ["a", "b"], experiments: [{ id: "E", budget: 0, ...h }] });
  const run = startRun(plan, { cap: 2 });
  const outcomes = await run.finish();
  assert.deepEqual(h.calls, { setup: 0, teardown: 0 });
  assert.deepEqual(run.fake.names(), []);
  assert.deepEqual(outcomes, [
    { kind: "not-dispatched", reason: "budget-exhausted" },
    { kind: "not-dispatched", reason: "budget-exhausted" },
  ]);
});

Deno.test("S59 a failing teardown warns once and changes no verdict", async () => {
  const h = hooks({ teardown: () => Promise.reject(new Error("drop failed")) });
  const plan = fakePlan({ evals: ["a", "b"], experiments: [{ id: "E", ...h }] });
  const run = startRun(plan, {
    cap: 2,
    script: (s) => ({ verdict: s.evalId === "a" ? "passed" : "failed" }),
  });
  const outcomes = await run.finish();
  assert.deepEqual(outcomeSummary(plan, outcomes), ["E:a#0 passed", "E:b#0 failed"]);
  const warnings = run.log.diagnostics("experiment-teardown-failed");
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!.message, /drop failed/);
  assert.equal(warnings[0]!.persist, true);
});

Deno.test("S60 setup ends before the first sandbox and teardown starts after the last", async () => {
  const plan = fakePlan({
    evals: evalIds(3),
    experiments: [{ id: "E", ...hooks(), attempts: 2 }],
  });
  const run = startRun(plan, {
    cap: 3,
    script: (s) => ({ durationMs: 10 * s.position, cleanupMs: 5 }),
  });
  await run.finish();
  const t = run.log.timeline;
  const setupDone = t.indexOf("experiment_setup:done:E");
  const firstCreate = t.findIndex((m) => m.startsWith("create:"));
  const lastDestroy = t.findLastIndex((m) => m.startsWith("destroy:"));
  const teardownStart = t.indexOf("experiment_teardown:started:E");
  assert.ok(setupDone >= 0 && setupDone < firstCreate, t.join("\n"));
  assert.ok(lastDestroy >= 0 && lastDestroy < teardownStart, t.join("\n"));
});

Deno.test("S61 a teardown that never resolves fails after 30 s and the run completes", async () => {
  const h = hooks({ teardown: () => new Promise(() => {}) });
  const plan = fakePlan({ evals: ["a"], experiments: [{ id: "E", ...h }] });
  const run = startRun(plan, { cap: 1, script: () => ({ durationMs: 1 }) });
  await run.clock.tickAsync(1);
  const started = run.clock.now();
  await run.clock.tickAsync(29_999);
  assert.deepEqual(run.log.diagnostics("experiment-teardown-failed"), []);
  await run.clock.tickAsync(1);
  await run.done;
  const failed = run.log.ofType("experiment_teardown").find((e) => e.status === "failed")!;
  assert.equal(failed.at - started, 30_000);
  assert.equal(run.log.diagnostics("experiment-teardown-failed").length, 1);
});

Deno.test("S62 an interrupt during the countdown teardown never runs teardown twice", async () => {
  let release!: () => void;
  const h = hooks({ teardown: () => new Promise<void>((r) => release = r) });
  const plan = fakePlan({ evals: ["a", "b"], experiments: [{ id: "E", ...h }] });
  const run = startRun(plan, { cap: 2, script: () => ({ durationMs: 5 }) });
  await run.clock.tickAsync(5);
  assert.equal(h.calls.teardown, 1);
  run.interrupt.abort(new Error("SIGINT"));
  await run.flush();
  release();
  await run.finish();
  assert.equal(h.calls.teardown, 1);
  assert.equal(h.calls.setup, 1);
});

Deno.test("runPlan() runs teardown after an interrupted setup has returned (LIFE-8)", async () => {
  let finishSetup!: () => void;
  const h = hooks({ setup: () => new Promise<void>((r) => finishSetup = r) });
  const plan = fakePlan({ evals: ["a", "b"], experiments: [{ id: "E", ...h }] });
  const run = startRun(plan, { cap: 2 });
  await run.flush();
  run.interrupt.abort(new Error("SIGINT"));
  await run.flush();
  assert.equal(h.calls.teardown, 0);
  finishSetup();
  const outcomes = await run.finish();
  assert.equal(h.calls.teardown, 1);
  assert.deepEqual(outcomes.map((o) => o.kind), ["not-dispatched", "not-dispatched"]);
  assert.deepEqual(run.log.ofType("not_dispatched").map((e) => e.reason), [
    "interrupted",
    "interrupted",
  ]);
});
