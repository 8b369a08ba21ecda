import assert from "node:assert/strict";
import { UsageError } from "../../src/_shared/errors.ts";
import type { DiscoveredEval, ExperimentOptions } from "../../src/discovery/mod.ts";
import { buildPlan, type PlanSettings, select, type SlotKey } from "../../src/plan/mod.ts";
import { DIRECT, evals, experiments, IN_SANDBOX, layer } from "./_project.ts";

const NONE: PlanSettings = { rerun: "none" };

function plan(
  exps: ReturnType<typeof experiments>,
  list: DiscoveredEval[],
  settings: PlanSettings = NONE,
) {
  return buildPlan(select(exps, list, { evalPrefixes: [], tags: [] }), settings);
}

function usage(fn: () => unknown): UsageError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof UsageError, String(error));
    return error;
  }
  assert.fail("expected a UsageError");
}

Deno.test("buildPlan() orders slots by eval discovery, experiment selection, ordinal (ORD-2)", () => {
  const list = evals(["e0", "e1"]);
  const p = plan(experiments([["x", { attempts: 2 }], ["y", { attempts: 1 }]]), list);
  assert.deepEqual(
    p.slots.map((s) => [s.position, s.evalId, s.experimentId, s.ordinal]),
    [
      [0, "e0", "x", 0],
      [1, "e0", "x", 1],
      [2, "e0", "y", 0],
      [3, "e1", "x", 0],
      [4, "e1", "x", 1],
      [5, "e1", "y", 0],
    ],
  );
  assert.equal(p.total, 6);
  assert.equal(p.evalCount, 2);
  assert.equal(p.reused, 0);
  assert.equal(p.toRun, 6);
  assert.ok(p.slots.every((s) => Object.isFrozen(s)));
});

Deno.test("buildPlan() plans ordinals 0…n−1 with --attempts over the experiment's attempts", () => {
  const list = evals(["e"]);
  const exps = experiments([["x", { attempts: 2 }]]);
  assert.deepEqual(plan(exps, list).slots.map((s) => s.ordinal), [0, 1]);
  const forced = plan(exps, list, { rerun: "none", attempts: 4 });
  assert.deepEqual(forced.slots.map((s) => s.ordinal), [0, 1, 2, 3]);
  assert.equal(forced.experiments[0]!.attempts, 4);
});

Deno.test("buildPlan() resolves each slot's timeout flag → experiment → eval → config (TIME-1)", () => {
  const list = evals([["own", { timeoutMs: 300 }], "bare"]);
  const timeouts = (options: Partial<ExperimentOptions>, settings: PlanSettings) =>
    plan(experiments([["x", options]]), list, settings).slots.map((s) => [s.evalId, s.timeoutMs]);
  assert.deepEqual(
    timeouts({ timeoutMs: 200 }, { rerun: "none", timeoutMs: 100, configTimeoutMs: 400 }),
    [
      ["own", 100],
      ["bare", 100],
    ],
  );
  assert.deepEqual(timeouts({ timeoutMs: 200 }, { rerun: "none", configTimeoutMs: 400 }), [
    ["own", 200],
    ["bare", 200],
  ]);
  assert.deepEqual(timeouts({}, { rerun: "none", configTimeoutMs: 400 }), [
    ["own", 300],
    ["bare", 400],
  ]);
  assert.deepEqual(timeouts({}, NONE), [["own", 300], ["bare", null]]);
});

Deno.test("buildPlan() lets flags override earlyExit and budget per experiment (§6.4)", () => {
  const exps = experiments([["x", { earlyExit: true, budget: 5, maxConcurrency: 2 }], "y"]);
  const list = evals(["e"]);
  const own = plan(exps, list).experiments;
  assert.deepEqual(own.map((e) => [e.id, e.earlyExit, e.budgetUSD, e.maxConcurrency]), [
    ["x", true, 5, 2],
    ["y", false, null, null],
  ]);
  const forced = plan(exps, list, { rerun: "none", earlyExit: false, budget: 0 }).experiments;
  assert.deepEqual(forced.map((e) => [e.earlyExit, e.budgetUSD]), [[false, 0], [false, 0]]);
});

Deno.test("buildPlan() records kind, group and discovery index of each slot", () => {
  const list = evals(["a", ["b", { score: true }]]);
  list[1]!.groupId = "grp";
  const exps = experiments([["x", { agent: IN_SANDBOX, sandbox: layer("docker") }]]);
  const slots = plan(exps, list).slots;
  assert.deepEqual(slots.map((s) => [s.evalIndex, s.kind, s.groupId]), [
    [0, "pass", null],
    [1, "score", "grp"],
  ]);
});

Deno.test("buildPlan() asks the carry decider once per slot and counts carried slots", () => {
  const keys: SlotKey[] = [];
  const p = buildPlan(
    select(experiments([["x", { attempts: 2, timeoutMs: 50 }]]), evals(["e"]), {
      evalPrefixes: [],
      tags: [],
    }),
    NONE,
    (key) => {
      keys.push(key);
      return key.ordinal === 0
        ? {
          action: "carry",
          source: {
            runId: "r",
            attemptId: "a",
            originRunId: "r",
            verdict: "passed",
            durationMs: 1,
            score: null,
          },
        }
        : { action: "run", reason: "new", detail: null, source: null };
    },
  );
  assert.deepEqual(keys, [
    { experimentId: "x", evalId: "e", ordinal: 0, timeoutMs: 50 },
    { experimentId: "x", evalId: "e", ordinal: 1, timeoutMs: 50 },
  ]);
  assert.equal(p.reused, 1);
  assert.equal(p.toRun, 1);
  assert.equal(p.experiments[0]!.runnable, 1);
});

Deno.test("buildPlan() rejects a direct agent with grouped evals (GRP-5)", () => {
  const list = evals(["g/a", "g/b", "free"]);
  list[0]!.groupId = "g";
  list[1]!.groupId = "g";
  const e = usage(() => plan(experiments(["x"]), list));
  assert.equal(e.code, "eval-group-direct-agent");
  assert.equal(
    e.message,
    'experiments/x.ts: a direct agent cannot run grouped evals: evals "g/a", "g/b"',
  );
});

Deno.test("buildPlan() rejects sandboxReuse with grouped evals (GRP-5)", () => {
  const list = evals(["g/a"]);
  list[0]!.groupId = "g";
  list[0]!.groupSandbox = layer("docker");
  const e = usage(() =>
    plan(experiments([["x", { agent: IN_SANDBOX, sandboxReuse: true }]]), list)
  );
  assert.equal(e.code, "eval-group-sandbox-reuse-conflict");
});

Deno.test("buildPlan() rejects sandboxReuse and layers with a direct agent (rule 6.1.2)", () => {
  const reuse = usage(() => plan(experiments([["x", { sandboxReuse: true }]]), evals(["e"])));
  assert.equal(reuse.code, "experiment.sandbox-reuse-direct-agent");
  const own = usage(() => plan(experiments([["x", { sandbox: layer("docker") }]]), evals(["e"])));
  assert.equal(own.code, "sandbox-direct-agent");
  assert.match(own.message, /set on the experiment/);
  const onEval = usage(() => plan(experiments(["x"]), evals(["e", ["s", { sandbox: layer() }]])));
  assert.equal(onEval.code, "sandbox-direct-agent");
  assert.match(onEval.message, /set for eval "s"/);
});

Deno.test("buildPlan() checks the template of every (experiment, eval) pair (sandboxes.md §1.1)", () => {
  const withTemplate = evals([["t", { sandbox: layer("docker") }], "bare"]);
  const e = usage(() => plan(experiments([["x", { agent: IN_SANDBOX }]]), withTemplate));
  assert.equal(e.code, "sandbox-template-missing");
  assert.equal(
    e.message,
    'experiments/x.ts: agent "boxed" runs in a sandbox, but no sandbox template is set for eval "bare"',
  );
  const both = usage(() =>
    plan(experiments([["x", { agent: IN_SANDBOX, sandbox: layer("docker") }]]), withTemplate)
  );
  assert.equal(both.code, "sandbox-template-conflict");
  assert.match(both.message, /for eval "t"$/);
});

Deno.test("buildPlan() accepts one template per pair from the experiment, the eval or its group", () => {
  const list = evals(["a", ["b", { sandbox: layer(undefined) }], "c"]);
  list[2]!.groupId = "g";
  list[2]!.groupSandbox = layer(undefined);
  const fromExperiment = plan(
    experiments([["x", { agent: IN_SANDBOX, sandbox: layer("docker") }]]),
    list,
  );
  assert.equal(fromExperiment.total, 3);
  const perEval = evals([["a", { sandbox: layer("e2b") }], "g/m"]);
  perEval[1]!.groupId = "g";
  perEval[1]!.groupSandbox = layer("docker");
  assert.equal(plan(experiments([["x", { agent: IN_SANDBOX }]]), perEval).total, 2);
});

Deno.test("buildPlan() reports every pairing conflict together (sandboxes.md rule 1.1.4)", () => {
  const list = evals(["bare", ["boxed", { sandbox: layer("docker") }]]);
  const e = usage(() =>
    plan(
      experiments([["a", { agent: IN_SANDBOX }], ["b", { agent: DIRECT }]]),
      list,
    )
  );
  assert.equal(e.code, "sandbox-template-missing");
  assert.equal(e.message.startsWith("experiments/a.ts: "), true);
  assert.deepEqual(e.extraLines, [
    'experiments/b.ts: a direct agent cannot use a sandbox (set for eval "boxed") [sandbox-direct-agent]',
  ]);
  assert.equal(e.hint, "fix the experiments and evals listed above");
});
