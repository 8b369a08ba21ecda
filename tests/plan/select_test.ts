import assert from "node:assert/strict";
import { UsageError } from "../../src/_shared/errors.ts";
import type { EvalDescriptor } from "../../src/discovery/mod.ts";
import {
  matchExperimentIds,
  select,
  selectExperiments,
  suggestEvalPrefix,
} from "../../src/plan/mod.ts";
import { evals, experiments } from "./_project.ts";

const IDS = [
  "local",
  "checks/fail",
  "checks/score",
  "models/openai/gpt-5.4",
  "models/openai/gpt-5.4-mini",
  "models/openai-x/gpt-5",
  "models/anthropic/claude",
  "a",
  "a/b",
];

function usage(fn: () => unknown): UsageError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof UsageError, String(error));
    return error;
  }
  assert.fail("expected a UsageError");
}

const EVALS = evals([
  ["greet/hello", { tags: ["smoke"] }],
  "math/0000",
  "math/0001",
  ["swe-bench-astropy/1", { tags: ["slow", "swe"] }],
  ["tool/weather", { tags: ["tools"] }],
]);

function ids(selection: ReturnType<typeof select>) {
  return selection.experiments.map((s) => [s.experiment.id, s.evals.map((e) => e.id)]);
}

Deno.test("matchExperimentIds() prefers an exact ID (rule 1.7.1, FLAG-1)", () => {
  assert.deepEqual(matchExperimentIds(IDS, "local"), ["local"]);
  assert.deepEqual(matchExperimentIds(IDS, "a"), ["a"]);
  assert.deepEqual(matchExperimentIds(IDS, "models/openai/gpt-5.4"), ["models/openai/gpt-5.4"]);
});

Deno.test("matchExperimentIds() selects a directory when no ID is exact", () => {
  assert.deepEqual(matchExperimentIds(IDS, "checks"), ["checks/fail", "checks/score"]);
  assert.deepEqual(matchExperimentIds(IDS, "models"), [
    "models/openai/gpt-5.4",
    "models/openai/gpt-5.4-mini",
    "models/openai-x/gpt-5",
    "models/anthropic/claude",
  ]);
  assert.deepEqual(matchExperimentIds(IDS, "models/openai"), [
    "models/openai/gpt-5.4",
    "models/openai/gpt-5.4-mini",
  ]);
});

Deno.test("matchExperimentIds() matches directory + prefix only inside that exact directory", () => {
  assert.deepEqual(matchExperimentIds(IDS, "models/openai/gpt"), [
    "models/openai/gpt-5.4",
    "models/openai/gpt-5.4-mini",
  ]);
  assert.deepEqual(matchExperimentIds(IDS, "checks/f"), ["checks/fail"]);
  assert.deepEqual(matchExperimentIds(IDS, "models/gpt"), []);
  assert.deepEqual(matchExperimentIds(IDS, "models/open"), []);
});

Deno.test("matchExperimentIds() never matches a bare prefix without a slash", () => {
  assert.deepEqual(matchExperimentIds(IDS, "loc"), []);
  assert.deepEqual(matchExperimentIds(IDS, "check"), []);
});

Deno.test("matchExperimentIds() removes one trailing slash first", () => {
  assert.deepEqual(matchExperimentIds(IDS, "checks/"), ["checks/fail", "checks/score"]);
  assert.deepEqual(matchExperimentIds(IDS, "local/"), ["local"]);
  // Only one slash is removed: "checks/" is then a directory + empty-prefix selector.
  assert.deepEqual(matchExperimentIds(IDS, "checks//"), ["checks/fail", "checks/score"]);
  assert.deepEqual(matchExperimentIds(IDS, "/"), []);
});

Deno.test("selectExperiments() keeps discovery order and selects all without a selector", () => {
  const found = experiments(["b", "a/x", "a/y"]);
  assert.deepEqual(selectExperiments(found, undefined).map((e) => e.id), ["b", "a/x", "a/y"]);
  assert.deepEqual(selectExperiments(found, "a").map((e) => e.id), ["a/x", "a/y"]);
});

Deno.test("selectExperiments() fails with experiment-not-found listing up to 10 IDs (FLAG-1)", () => {
  const e = usage(() =>
    selectExperiments(experiments(["checks/fail", "checks/score", "local"]), "nope")
  );
  assert.equal(e.code, "experiment-not-found");
  assert.equal(e.message, 'no experiment matches "nope"');
  assert.equal(e.hint, "available experiments: checks/fail, checks/score, local");
  const many = experiments(Array.from({ length: 12 }, (_, i) => `e${String(i).padStart(2, "0")}`));
  assert.equal(
    usage(() => selectExperiments(many, "x")).hint,
    "available experiments: e00, e01, e02, e03, e04, e05, e06, e07, e08, e09, …",
  );
});

Deno.test("selectExperiments() suggests niceeval show for the selectors show and view (FLAG-1)", () => {
  for (const selector of ["show", "view"]) {
    assert.equal(
      usage(() => selectExperiments(experiments(["local"]), selector)).hint,
      "to render results, run niceeval show",
    );
  }
});

Deno.test("select() intersects the experiment's evals with prefixes and tags (rule 1.7.5)", () => {
  const exps = experiments([["local", { evals: ["greet", "tool", "math"] }]]);
  const input = (evalPrefixes: string[], tags: string[] = []) => ({ evalPrefixes, tags });
  assert.deepEqual(ids(select(exps, EVALS, input([]))), [
    ["local", ["greet/hello", "math/0000", "math/0001", "tool/weather"]],
  ]);
  assert.deepEqual(ids(select(exps, EVALS, input(["math/0001", "greet"]))), [
    ["local", ["greet/hello", "math/0001"]],
  ]);
  assert.deepEqual(ids(select(exps, EVALS, input([], ["tools", "smoke"]))), [
    ["local", ["greet/hello", "tool/weather"]],
  ]);
  assert.deepEqual(ids(select(exps, EVALS, input(["math", "tool"], ["tools"]))), [
    ["local", ["tool/weather"]],
  ]);
});

Deno.test("select() matches prefixes with plain startsWith, ignoring segments (rule 1.7.3)", () => {
  const exps = experiments(["all"]);
  const s = select(exps, EVALS, { evalPrefixes: ["swe-bench"], tags: [] });
  assert.deepEqual(ids(s), [["all", ["swe-bench-astropy/1"]]]);
  const m = select(exps, EVALS, { evalPrefixes: ["ma"], tags: [] });
  assert.deepEqual(ids(m), [["all", ["math/0000", "math/0001"]]]);
});

Deno.test("select() never widens an experiment's own selection (FLAG-2)", () => {
  const exps = experiments([["local", { evals: ["greet"] }], ["other", { evals: ["tool"] }]]);
  const s = select(exps, EVALS, { evalPrefixes: ["greet", "tool"], tags: [] });
  assert.deepEqual(ids(s), [["local", ["greet/hello"]], ["other", ["tool/weather"]]]);
});

Deno.test("select() fails with eval-not-found for a prefix no selected experiment covers (FLAG-2)", () => {
  const exps = experiments([["local", { evals: ["greet"] }], ["all", {}]]);
  const e = usage(() =>
    select(exps, EVALS, { selector: "local", evalPrefixes: ["greet", "tool"], tags: [] })
  );
  assert.equal(e.code, "eval-not-found");
  assert.equal(e.message, 'no eval of the selected experiments starts with "tool"');
});

Deno.test("select() drops experiments left without evals and lists them (FLAG-3)", () => {
  const exps = experiments([["a", { evals: ["greet"] }], ["b", { evals: ["tool"] }]]);
  const s = select(exps, EVALS, { evalPrefixes: [], tags: ["tools"] });
  assert.deepEqual(ids(s), [["b", ["tool/weather"]]]);
  assert.deepEqual(s.emptyExperimentIds, ["a"]);
});

Deno.test("select() fails with nothing-selected when every experiment is empty (rule 1.7.6)", () => {
  const exps = experiments([["a", { evals: ["greet"] }]]);
  const e = usage(() => select(exps, EVALS, { evalPrefixes: [], tags: ["none"] }));
  assert.equal(e.code, "nothing-selected");
  assert.equal(e.message, "the selection contains no evals");
  const none = usage(() => select([], EVALS, { evalPrefixes: [], tags: [] }));
  assert.equal(none.code, "nothing-selected");
  assert.equal(none.message, "there are no experiments to run");
  const noEvals = usage(() => select(experiments(["a"]), [], { evalPrefixes: [], tags: [] }));
  assert.equal(noEvals.code, "nothing-selected");
});

Deno.test("select() calls a predicate once per eval with a frozen descriptor (rule 6.1.1)", () => {
  const seen: EvalDescriptor[] = [];
  const exps = experiments([["p", {
    evals: (e) => {
      seen.push(e);
      return e.tags.includes("swe") || e.metadata.pick === true;
    },
  }]]);
  const list = evals([
    ["x", { metadata: { pick: true }, description: "the x" }],
    ["y", { tags: ["swe"], score: true }],
    "z",
  ]);
  list[1]!.groupId = "grp";
  const s = select(exps, list, { evalPrefixes: [], tags: [] });
  assert.deepEqual(ids(s), [["p", ["x", "y"]]]);
  assert.equal(seen.length, 3);
  assert.deepEqual(seen[0], {
    id: "x",
    tags: [],
    evaluationKind: "pass",
    metadata: { pick: true },
    description: "the x",
  });
  assert.deepEqual(seen[1], {
    id: "y",
    tags: ["swe"],
    evaluationKind: "score",
    metadata: {},
    groupId: "grp",
  });
  assert.ok(seen.every((d) => Object.isFrozen(d)));
});

Deno.test("select() reports a throwing or non-boolean predicate (rule 6.1.1)", () => {
  const cases: [(e: EvalDescriptor) => unknown, RegExp][] = [
    [() => {
      throw new Error("bad pick\nsecond line");
    }, /^experiments\/p\.ts: evals predicate threw for "greet\/hello": bad pick$/],
    [() => 1, /returned number for "greet\/hello"; it must return a boolean synchronously$/],
    [() => Promise.resolve(true), /returned a promise for "greet\/hello"/],
    [() => undefined, /returned undefined/],
  ];
  for (const [predicate, message] of cases) {
    const exps = experiments([["p", { evals: predicate as (e: EvalDescriptor) => boolean }]]);
    const e = usage(() => select(exps, EVALS, { evalPrefixes: [], tags: [] }));
    assert.equal(e.code, "experiment.evals-predicate-failed");
    assert.match(e.message, message);
  }
});

const NAMED = evals([
  ["geo/capital", { description: "What is the capital of France?" }],
  ["geo/rivers", { description: "Name the longest river" }],
  ["greet/hello", { description: "greeting round-trip", tags: ["smoke"] }],
  ["math/add", { description: "What is 2+2?" }],
]);

Deno.test("issue 18.2: select() keeps evals whose ID or description matches --grep (OR)", () => {
  const exps = experiments(["openai", ["other", { evals: ["greet"] }]]);
  const grep = (patterns: string[], extra: { evalPrefixes?: string[]; tags?: string[] } = {}) =>
    ids(select(exps, NAMED, { evalPrefixes: [], tags: [], ...extra, grep: patterns }));
  assert.deepEqual(grep(["capital"]), [["openai", ["geo/capital"]]]);
  assert.deepEqual(grep(["LONGEST", "2\\+2"]), [["openai", ["geo/rivers", "math/add"]]]);
  assert.deepEqual(grep(["hello"]), [["openai", ["greet/hello"]], ["other", ["greet/hello"]]]);
  // AND with prefixes and tags.
  assert.deepEqual(grep(["what"], { evalPrefixes: ["geo"] }), [["openai", ["geo/capital"]]]);
  assert.deepEqual(grep(["round"], { tags: ["smoke"] }), [
    ["openai", ["greet/hello"]],
    ["other", ["greet/hello"]],
  ]);
  const s = select(exps, NAMED, { evalPrefixes: [], tags: [], grep: ["river"] });
  assert.deepEqual(s.emptyExperimentIds, ["other"]);
});

Deno.test("issue 18.2: select() fails with eval-not-found when --grep matches no eval", () => {
  const e = usage(() =>
    select(experiments(["openai"]), NAMED, { evalPrefixes: [], tags: [], grep: ["x1", "y2"] })
  );
  assert.equal(e.code, "eval-not-found");
  assert.equal(e.message, 'no eval of the selected experiments matches --grep "x1" or "y2"');
  assert.equal(
    e.hint,
    "-t/--grep searches eval IDs and descriptions, ignoring case; run niceeval list to see them",
  );
  const and = usage(() =>
    select(experiments(["openai"]), NAMED, {
      evalPrefixes: ["math"],
      tags: [],
      grep: ["capital"],
    })
  );
  assert.equal(and.code, "nothing-selected");
  assert.equal(and.hint, "widen the eval prefixes, -t/--grep or --tag values");
});

Deno.test("issue 18.2: an eval prefix that matches nothing says did you mean and -t", () => {
  const exps = experiments(["openai"]);
  const hint = (prefix: string) => {
    const e = usage(() => select(exps, NAMED, { evalPrefixes: [prefix], tags: [] }));
    assert.equal(e.code, "eval-not-found");
    assert.equal(e.message, `no eval of the selected experiments starts with "${prefix}"`);
    return e.hint;
  };
  assert.equal(
    hint("capital"),
    'did you mean "geo/capital"? eval IDs match by prefix; use -t capital to match by name',
  );
  assert.equal(hint("gret"), 'did you mean "greet"? eval IDs match by prefix');
  // Found in a description only: no prefix to suggest, but -t finds it.
  assert.equal(hint("France"), "eval IDs match by prefix; use -t France to match by name");
  assert.equal(
    hint("longest river"),
    "eval IDs match by prefix; use -t 'longest river' to match by name",
  );
  assert.equal(
    hint("zebra"),
    "eval IDs match by prefix; run niceeval exp list --json to see each experiment's evals",
  );
});

Deno.test("issue 18.2: suggestEvalPrefix() finds segment starts, then near IDs", () => {
  const all = NAMED.map((e) => e.id);
  assert.equal(suggestEvalPrefix("capital", all), "geo/capital");
  assert.equal(suggestEvalPrefix("Capit", all), "geo/capit");
  assert.equal(suggestEvalPrefix("GEO/CAPITAL", all), "geo/capital");
  assert.equal(suggestEvalPrefix("riv", all), "geo/riv");
  assert.equal(suggestEvalPrefix("geo/captial", all), "geo/capital");
  assert.equal(suggestEvalPrefix("gret", all), "greet");
  assert.equal(suggestEvalPrefix("mathh/add", all), "math/add");
  // Short texts get no edit-distance guess; nothing close gets none.
  assert.equal(suggestEvalPrefix("mth", all), undefined);
  assert.equal(suggestEvalPrefix("zebra", all), undefined);
  assert.equal(suggestEvalPrefix("", all), undefined);
});

Deno.test("issue 18.2: select() with lastFailed keeps only the listed evals of each experiment", () => {
  const exps = experiments(["openai", ["other", { evals: ["greet"] }]]);
  const lastFailed = new Map([["openai", new Set(["math/add", "geo/capital"])]]);
  const s = select(exps, NAMED, { evalPrefixes: [], tags: [], lastFailed });
  assert.deepEqual(ids(s), [["openai", ["geo/capital", "math/add"]]]);
  assert.deepEqual(s.emptyExperimentIds, ["other"]);
  const both = select(exps, NAMED, { evalPrefixes: [], tags: [], grep: ["2\\+2"], lastFailed });
  assert.deepEqual(ids(both), [["openai", ["math/add"]]]);
  const none = usage(() =>
    select(exps, NAMED, { evalPrefixes: [], tags: [], lastFailed: new Map() })
  );
  assert.equal(none.code, "nothing-selected");
});
