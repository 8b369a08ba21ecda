import assert from "node:assert/strict";
import { defineAgent } from "../../src/agents/mod.ts";
import { completeEvidenceCoverage } from "../../src/agents/mod.ts";
import { defineEval } from "../../src/discovery/definitions.ts";
import { defineExperiment } from "../../src/discovery/experiment.ts";
import { discoverExperiments, experimentIdOf } from "../../src/discovery/experiments.ts";
import type { DiscoveryIssue } from "../../src/discovery/issues.ts";
import { walkFiles } from "../../src/discovery/walk.ts";
import { loadNative } from "../../src/loader/mod.ts";
import { fakeLoader, fixture, foreignBrand, walked } from "./_fixtures.ts";

const agent = defineAgent({
  name: "fake",
  evidenceCoverage: completeEvidenceCoverage,
  send: () => Promise.resolve({ status: "completed", events: [] }),
});
const experiment = defineExperiment({ agent });

async function discover(modules: Record<string, Record<string, unknown> | Error>) {
  const issues: DiscoveryIssue[] = [];
  const files = Object.keys(modules).sort().map((relative) => walked(relative));
  const found = await discoverExperiments(files, fakeLoader(modules), issues);
  return { found, issues, ids: found.map((e) => e.id) };
}

Deno.test("experimentIdOf() strips .ts and one trailing .experiment (rule 1.5.3)", () => {
  assert.equal(experimentIdOf("experiments/local.ts"), "local");
  assert.equal(experimentIdOf("experiments/models/openai/gpt-5.4.ts"), "models/openai/gpt-5.4");
  assert.equal(experimentIdOf("experiments/a.experiment.ts"), "a");
  assert.equal(experimentIdOf("experiments/a.experiment.experiment.ts"), "a.experiment");
  assert.equal(experimentIdOf("experiments/types.d.ts"), undefined);
  assert.equal(experimentIdOf("experiments/readme.md"), undefined);
  assert.equal(experimentIdOf("experiments/x.tsx"), undefined);
});

Deno.test("discoverExperiments() finds a fixture project's experiments in path order (rule 1.5)", async () => {
  const root = fixture("discovery_project");
  const issues: DiscoveryIssue[] = [];
  const files = await walkFiles(root, "experiments", issues);
  const found = await discoverExperiments(files, loadNative, issues);
  assert.deepEqual(found.map((e) => [e.index, e.id, e.file]), [
    [0, "base", "experiments/base.ts"],
    [1, "models/openai/gpt-5.4-mini", "experiments/models/openai/gpt-5.4-mini.ts"],
    [2, "models/openai/gpt-5.4", "experiments/models/openai/gpt-5.4.experiment.ts"],
  ]);
  assert.deepEqual(issues, []);
  assert.equal(found[2]!.definition.model, "fixture-v1");
});

Deno.test("discoverExperiments() ignores files without a default export and .d.ts files", async () => {
  const { ids, issues } = await discover({
    "experiments/helper.ts": { MODEL: "x" },
    "experiments/types.d.ts": new Error("must not be imported"),
    "experiments/run.ts": { default: experiment },
  });
  assert.deepEqual(ids, ["run"]);
  assert.deepEqual(issues, []);
});

Deno.test("discoverExperiments() reports the same ID from two files on both (rule 1.5.3)", async () => {
  const { ids, issues } = await discover({
    "experiments/a.ts": { default: experiment },
    "experiments/a.experiment.ts": { default: experiment },
    "experiments/b.ts": { default: experiment },
  });
  assert.deepEqual(ids, ["b"]);
  assert.deepEqual(issues.map((i) => [i.file, i.code]), [
    ["experiments/a.experiment.ts", "discovery.duplicate-id"],
    ["experiments/a.ts", "discovery.duplicate-id"],
  ]);
  assert.match(issues[0]!.message, /^experiment ID "a" is produced by /);
});

Deno.test("discoverExperiments() reserves the ID list (CMD-2)", async () => {
  for (const file of ["experiments/list.ts", "experiments/list.experiment.ts"]) {
    const { ids, issues } = await discover({ [file]: { default: experiment } });
    assert.deepEqual(ids, []);
    assert.equal(issues.length, 1);
    assert.equal(issues[0]!.code, "experiment-id-reserved");
    assert.equal(issues[0]!.level, "error");
  }
  const nested = await discover({ "experiments/sub/list.ts": { default: experiment } });
  assert.deepEqual(nested.ids, ["sub/list"]);
});

Deno.test("discoverExperiments() rejects a default export that is not an experiment (rule 1.5.2)", async () => {
  const cases: [unknown, RegExp][] = [
    [42, /^the default export is not a defineExperiment\(\{\.\.\.\}\) result \(got 42\)$/],
    [undefined, /\(got undefined\)$/],
    [{ agent }, /\(got an object\)$/],
    [
      defineEval({ test() {} }),
      /^the default export is an eval definition, not a defineExperiment/,
    ],
    [
      foreignBrand("experiment", 3),
      /^the default export is an experiment made by an API of format version 3; this niceeval reads version 1$/,
    ],
  ];
  for (const [value, message] of cases) {
    const { ids, issues } = await discover({ "experiments/x.ts": { default: value } });
    assert.deepEqual(ids, []);
    assert.equal(issues.length, 1);
    assert.equal(issues[0]!.code, "discovery.invalid-export");
    assert.match(issues[0]!.message, message);
  }
});

Deno.test("discoverExperiments() reports import failures and keeps going (rule 1.6)", async () => {
  const { ids, issues } = await discover({
    "experiments/a.ts": new Error("cannot reach the model"),
    "experiments/b.ts": { default: experiment },
  });
  assert.deepEqual(ids, ["b"]);
  assert.deepEqual(issues.map((i) => [i.file, i.code, i.message]), [
    ["experiments/a.ts", "discovery.import-failed", "cannot load: cannot reach the model"],
  ]);
});
