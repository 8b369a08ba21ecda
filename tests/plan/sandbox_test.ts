/** Sandbox pairing in the plan (sandboxes.md rules 1–4, 75; scheduling.md GRP-5). */
import assert from "node:assert/strict";
import { UsageError } from "../../src/_shared/errors.ts";
import {
  buildPlan,
  experimentProviders,
  type PlannedSandbox,
  sandboxPairs,
  select,
} from "../../src/plan/mod.ts";
import { defineEvalGroup, type DiscoveredGroup } from "../../src/discovery/mod.ts";
import { evals, experiments, IN_SANDBOX, layer } from "./_project.ts";

const NONE = { rerun: "none" } as const;

function selectionOf(exps: ReturnType<typeof experiments>, list: ReturnType<typeof evals>) {
  return select(exps, list, { evalPrefixes: [], tags: [] });
}

function physical(
  pair: { key: string; experimentIndex: number; experimentId: string; evalId: string },
  extra: Partial<PlannedSandbox> = {},
): PlannedSandbox {
  return {
    ...pair,
    groupId: null,
    layers: [],
    reuse: "fresh",
    onUnavailable: null,
    provider: "local",
    laneKey: "local",
    defaultConcurrency: 1,
    exclusive: true,
    identity: "id",
    physical: {},
    buildKeys: [],
    fixtures: [],
    lifetimeMs: null,
    poolKey: null,
    evalHooks: false,
    ...extra,
  };
}

Deno.test("sandboxPairs() puts the template first and picks fresh, pool or group per pair", () => {
  const template = layer("local");
  const evalLayer = layer();
  const groupLayer = layer();
  const list = evals([["a", { sandbox: evalLayer }], "b", "g/c"]);
  list[2]!.groupId = "g";
  list[2]!.groupSandbox = groupLayer;
  const group: DiscoveredGroup = {
    id: "g",
    file: "evals/g/eval-group.ts",
    definition: defineEvalGroup({ evals: [list[2]!.definition], onUnavailable: "replace-sandbox" }),
    memberIds: ["g/c"],
  };
  const exps = experiments([
    ["x", { agent: IN_SANDBOX, sandbox: template }],
    ["y", { agent: IN_SANDBOX, sandbox: template, sandboxReuse: true, evals: ["a", "b"] }],
  ]);
  const pairs = sandboxPairs(selectionOf(exps, list), [group]);
  assert.deepEqual(
    pairs.map((p) => [p.experimentId, p.evalId, p.reuse, p.onUnavailable, p.groupId]),
    [
      ["x", "a", "fresh", null, null],
      ["x", "b", "fresh", null, null],
      ["x", "g/c", "group", "replace-sandbox", "g"],
      ["y", "a", "pool", null, null],
      ["y", "b", "pool", null, null],
    ],
  );
  assert.deepEqual(pairs[0]!.layers.map((l) => [l.layer, l.owner, l.side]), [
    [template, "x", "experiment"],
    [evalLayer, "a", "eval"],
  ]);
  assert.deepEqual(pairs[2]!.layers.map((l) => [l.owner, l.side]), [["x", "experiment"], [
    "g",
    "group",
  ]]);
});

Deno.test("sandboxPairs() puts an eval's template before the experiment's template-less layer", () => {
  const base = layer();
  const own = layer("local");
  const pairs = sandboxPairs(
    selectionOf(
      experiments([["x", { agent: IN_SANDBOX, sandbox: base }]]),
      evals([["a", {
        sandbox: own,
      }]]),
    ),
    [],
  );
  assert.deepEqual(pairs[0]!.layers.map((l) => l.layer), [own, base]);
});

Deno.test("buildPlan() attaches each pair's sandbox to its slots and summarizes the providers", () => {
  const exps = experiments([["x", { agent: IN_SANDBOX, sandbox: layer("local"), attempts: 2 }]]);
  const selection = selectionOf(exps, evals(["a", "b"]));
  const pairs = sandboxPairs(selection, []);
  const sandboxes = new Map(pairs.map((p) => [p.key, physical(p)]));
  const plan = buildPlan(selection, NONE, undefined, { sandboxes });
  assert.deepEqual(plan.slots.map((s) => s.sandbox?.evalId), ["a", "a", "b", "b"]);
  assert.equal(plan.slots[0]!.sandbox, plan.slots[1]!.sandbox);
  assert.deepEqual([plan.experiments[0]!.provider, plan.experiments[0]!.laneKey], [
    "local",
    "local",
  ]);
});

Deno.test("experimentProviders() names the smallest default and the first exclusive lane", () => {
  const pair = { key: "k", experimentIndex: 0, experimentId: "x", evalId: "e" };
  const docker = physical(pair, {
    provider: "docker",
    laneKey: null,
    exclusive: false,
    defaultConcurrency: 10,
  });
  const vercel = physical(pair, {
    provider: "vercel",
    laneKey: null,
    exclusive: false,
    defaultConcurrency: 1,
  });
  const slow = physical(pair, { provider: "slow", laneKey: "custom:slow" });
  assert.deepEqual(experimentProviders([docker, vercel, slow]), {
    provider: "vercel",
    laneKey: "custom:slow",
  });
  assert.deepEqual(experimentProviders([]), { provider: null, laneKey: null });
});

Deno.test("buildPlan() reports resolution problems with the pairing conflicts, all at once (rule 4)", () => {
  const exps = experiments([["x", { agent: IN_SANDBOX }], ["y", { agent: IN_SANDBOX }]]);
  const list = evals([["a", { sandbox: layer("local") }], "bare"]);
  const error = (() => {
    try {
      buildPlan(selectionOf(exps, list), NONE, undefined, {
        problems: [{
          code: "sandbox-config-invalid",
          message: "experiments/x.ts: fixture missing",
          hint: "fix it",
        }],
      });
    } catch (e) {
      return e;
    }
  })();
  assert.ok(error instanceof UsageError);
  assert.equal(error.code, "sandbox-template-missing");
  assert.deepEqual(error.extraLines, [
    'experiments/y.ts: agent "boxed" runs in a sandbox, but no sandbox template is set for eval "bare" [sandbox-template-missing]',
    "experiments/x.ts: fixture missing [sandbox-config-invalid]",
  ]);
  assert.equal(error.hint, "fix the experiments and evals listed above");
});

Deno.test("buildPlan() rejects group members that resolve to different sandboxes (eval-group-incompatible)", () => {
  const list = evals(["g/a", "g/b"]);
  for (const e of list) e.groupId = "g";
  const exps = experiments([["x", { agent: IN_SANDBOX, sandbox: layer("local") }]]);
  const selection = selectionOf(exps, list);
  const pairs = sandboxPairs(selection, []);
  const same = new Map(pairs.map((p) => [p.key, physical(p, { groupId: "g", poolKey: "k1" })]));
  assert.equal(buildPlan(selection, NONE, undefined, { sandboxes: same }).total, 2);
  const differ = new Map(
    pairs.map((p, i) => [p.key, physical(p, { groupId: "g", poolKey: `k${i}` })]),
  );
  assert.throws(
    () => buildPlan(selection, NONE, undefined, { sandboxes: differ }),
    (e: unknown) =>
      e instanceof UsageError && e.code === "eval-group-incompatible" &&
      e.message ===
        'experiments/x.ts: the members of eval group "g" resolve to different sandboxes',
  );
});
