import assert from "node:assert/strict";
import { brand, readBrand } from "../../src/_shared/brand.ts";
import { DefinitionError, type DefinitionErrorCode } from "../../src/_shared/errors.ts";
import { completeEvidenceCoverage, defineAgent } from "../../src/agents/mod.ts";
import { defineExperiment } from "../../src/discovery/experiment.ts";

const agent = defineAgent({
  name: "fake",
  evidenceCoverage: completeEvidenceCoverage,
  send: () => Promise.resolve({ status: "completed", events: [] }),
});

// deno-lint-ignore no-explicit-any
const experiment = (def: Record<string, unknown>) => defineExperiment({ agent, ...def } as any);

function assertRejects(
  def: Record<string, unknown>,
  code: DefinitionErrorCode,
  path: string,
  message?: RegExp,
): void {
  try {
    experiment(def);
  } catch (error) {
    assert.ok(error instanceof DefinitionError, String(error));
    assert.equal(error.code, code, JSON.stringify(Object.keys(def)));
    assert.equal(error.path, path);
    if (message) assert.match(error.message, message);
    return;
  }
  assert.fail(`expected a DefinitionError for ${path}`);
}

Deno.test("defineExperiment() applies the defaults of §6.1 and freezes the result", () => {
  const e = defineExperiment({ agent });
  assert.ok(Object.isFrozen(e));
  assert.deepEqual(readBrand(e), { kind: "experiment", version: 1 });
  assert.equal(e.agent, agent);
  assert.deepEqual(e.flags, {});
  assert.ok(Object.isFrozen(e.flags));
  assert.equal(e.attempts, 1);
  assert.equal(e.earlyExit, false);
  assert.equal(e.evals, "*");
  assert.equal(e.sandboxReuse, false);
  for (const key of ["model", "description", "timeoutMs", "maxConcurrency", "budget", "sandbox"]) {
    assert.ok(!(key in e), key);
  }
});

Deno.test("defineExperiment() keeps every valid option", () => {
  const hook = () => {};
  const classify = () => undefined;
  const sandbox = Object.freeze(brand({ kind: "fake" }, "sandbox-layer"));
  const e = experiment({
    description: "baseline",
    model: "m-1",
    flags: { temperature: 0, tools: ["a"] },
    attempts: 3,
    earlyExit: true,
    evals: ["greet", "tool/"],
    timeoutMs: 1000,
    maxConcurrency: 2,
    budget: 0,
    sandbox,
    sandboxReuse: true,
    sharedState: { key: "db/main-1.x" },
    classifyFailure: classify,
    setup: hook,
    teardown: hook,
  });
  assert.equal(e.model, "m-1");
  assert.deepEqual(e.flags, { temperature: 0, tools: ["a"] });
  assert.ok(Object.isFrozen(e.flags.tools));
  assert.deepEqual(e.evals, ["greet", "tool/"]);
  assert.ok(Object.isFrozen(e.evals));
  assert.equal(e.budget, 0);
  assert.deepEqual(e.sharedState, { key: "db/main-1.x" });
  assert.ok(Object.isFrozen(e.sharedState));
  assert.equal(e.classifyFailure, classify);
  assert.equal(e.setup, hook);
});

Deno.test("defineExperiment() accepts a predicate as evals", () => {
  const pick = () => true;
  assert.equal(experiment({ evals: pick }).evals, pick);
  assert.equal(experiment({ evals: "*" }).evals, "*");
});

Deno.test("defineExperiment() requires a branded agent", () => {
  assertRejects({ agent: undefined }, "definition.missing-option", "agent");
  assertRejects(
    { agent: { name: "x", kind: "direct" } },
    "definition.invalid-value",
    "agent",
    /^agent must come from defineAgent or a built-in agent factory, got an object$/,
  );
});

Deno.test("defineExperiment() rejects reserved, LATER and unknown options", () => {
  assertRejects({ id: "x" }, "definition.reserved-option", "id");
  assertRejects({ configHash: "x" }, "definition.reserved-option", "configHash");
  assertRejects({ evaluationKind: "pass" }, "definition.reserved-option", "evaluationKind");
  for (const key of ["reasoningEffort", "labels", "judge", "plugins"]) {
    assertRejects(
      { [key]: 1 },
      "definition.unsupported-option",
      key,
      /not supported in this release/,
    );
  }
  assertRejects(
    { maxConcurency: 2 },
    "definition.unknown-option",
    "maxConcurency",
    /did you mean "maxConcurrency"\?/,
  );
  assertRejects(
    { atempts: 2 },
    "definition.unknown-option",
    "atempts",
    /did you mean "attempts"\?/,
  );
});

Deno.test("defineExperiment() rejects invalid values naming the path (rule 2.4)", () => {
  const cases: [Record<string, unknown>, string, RegExp?][] = [
    [{ description: "a\r\nb" }, "description"],
    [{ model: "" }, "model", /non-empty string/],
    [{ model: 5 }, "model"],
    [{ flags: { t: NaN } }, "flags.t", /must be JSON/],
    [{ flags: "x" }, "flags"],
    [{ attempts: 0 }, "attempts", /^attempts must be a positive integer, got 0$/],
    [{ attempts: 2.5 }, "attempts"],
    [{ earlyExit: "yes" }, "earlyExit", /must be a boolean/],
    [{ evals: [] }, "evals", /non-empty array of eval-ID prefixes/],
    [{ evals: "all" }, "evals"],
    [{ evals: ["greet", ""] }, "evals[1]", /non-empty string/],
    [{ evals: ["greet", 3] }, "evals[1]"],
    [{ timeoutMs: -1 }, "timeoutMs"],
    [{ maxConcurrency: 0 }, "maxConcurrency", /^maxConcurrency must be a positive integer, got 0$/],
    [{ budget: -0.01 }, "budget", /finite number ≥ 0/],
    [{ budget: Infinity }, "budget"],
    [{ sandbox: { kind: "docker" } }, "sandbox"],
    [{ sandboxReuse: 1 }, "sandboxReuse"],
    [{ sharedState: { key: "Upper" } }, "sharedState.key", /must be a string matching/],
    [{ sharedState: { key: "-lead" } }, "sharedState.key"],
    [{ sharedState: { key: "a".repeat(129) } }, "sharedState.key"],
    [{ sharedState: "db" }, "sharedState"],
    [{ classifyFailure: "x" }, "classifyFailure", /must be a function/],
    [{ setup: {} }, "setup"],
    [{ teardown: 1 }, "teardown"],
  ];
  for (const [def, path, message] of cases) {
    assertRejects(def, "definition.invalid-value", path, message);
  }
});

Deno.test("defineExperiment() accepts the longest sharedState key and rejects other keys in it", () => {
  assert.equal(experiment({ sharedState: { key: "a".repeat(128) } }).sharedState?.key.length, 128);
  assertRejects({ sharedState: {} }, "definition.missing-option", "sharedState.key");
  assertRejects(
    { sharedState: { key: "a", ttl: 1 } },
    "definition.unknown-option",
    "sharedState.ttl",
  );
});
