import assert from "node:assert/strict";
import { DefinitionError } from "../../src/_shared/errors.ts";
import { defineConfig } from "../../src/config/mod.ts";
import {
  defineEval,
  defineEvalGroup,
  defineScoreEval,
  madeHere,
} from "../../src/discovery/definitions.ts";
import { classifyEvalFiles, discoverEvals } from "../../src/discovery/evals.ts";
import type { DiscoveryIssue } from "../../src/discovery/issues.ts";
import { walkFiles } from "../../src/discovery/walk.ts";
import { loadNative } from "../../src/loader/mod.ts";
import { fakeLoader, fixture, foreignBrand, walked } from "./_fixtures.ts";

const a = defineEval({ test() {} });
const b = defineEval({ test() {} });

async function discover(modules: Record<string, Record<string, unknown> | Error>) {
  const issues: DiscoveryIssue[] = [];
  const entries = Object.keys(modules).sort().map((relative) => walked(relative));
  const evals = await discoverEvals(entries, fakeLoader(modules), issues);
  return { evals, issues, ids: evals.map((e) => e.id) };
}

async function discoverFixture(name: string) {
  const issues: DiscoveryIssue[] = [];
  const files = await walkFiles(fixture(name), "evals", issues);
  const { entries } = classifyEvalFiles(files, issues);
  const evals = await discoverEvals(entries, loadNative, issues);
  return { evals, issues };
}

function only(issues: readonly DiscoveryIssue[]): DiscoveryIssue {
  assert.equal(issues.length, 1, JSON.stringify(issues));
  return issues[0]!;
}

Deno.test("S132 evals/10-a.eval.ts is discovered before evals/2-b.eval.ts", async () => {
  const { evals } = await discoverFixture("discovery_project");
  const ids = evals.map((e) => e.id);
  assert.ok(ids.indexOf("10-a") < ids.indexOf("2-b"));
  assert.deepEqual(ids.slice(0, 2), ["10-a", "2-b"]);
});

Deno.test("discoverEvals() lists a fixture project in discovery order (ORD-1)", async () => {
  const { evals, issues } = await discoverFixture("discovery_project");
  assert.deepEqual(evals.map((e) => [e.index, e.id, e.file]), [
    [0, "10-a", "evals/10-a.eval.ts"],
    [1, "2-b", "evals/2-b.eval.ts"],
    [2, "data/keyed/Alpha", "evals/data/keyed.eval.ts"],
    [3, "data/keyed/beta", "evals/data/keyed.eval.ts"],
    [4, "data/keyed/zeta", "evals/data/keyed.eval.ts"],
    [5, "data/rows/0000", "evals/data/rows.eval.ts"],
    [6, "data/rows/0001", "evals/data/rows.eval.ts"],
    [7, "data/rows/0002", "evals/data/rows.eval.ts"],
    [8, "group/a", "evals/group/a.eval.ts"],
    [9, "group/b", "evals/group/b.eval.ts"],
  ]);
  assert.deepEqual(evals[5]!.definition.metadata, { prompt: "one" });
  assert.equal(evals[3]!.definition.evaluationKind, "score");
  assert.deepEqual(issues.map((i) => [i.file, i.code, i.level]), [
    ["evals/data/empty.eval.ts", "discovery.empty-dataset", "warning"],
    ["evals/data/empty_record.eval.ts", "discovery.empty-dataset", "warning"],
  ]);
});

Deno.test("discoverEvals() names array rows <base>/0000 and unpadded from 10000 (rule 1.3.4)", async () => {
  const rows = Array.from({ length: 10_002 }, () => a);
  const { ids, issues } = await discover({ "evals/big.eval.ts": { default: rows } });
  assert.deepEqual(issues, []);
  assert.equal(ids[0], "big/0000");
  assert.equal(ids[9_999], "big/9999");
  assert.equal(ids[10_000], "big/10000");
  assert.equal(ids[10_001], "big/10001");
});

Deno.test("discoverEvals() orders keyed records by code unit (rule 1.3.4)", async () => {
  const { ids } = await discover({
    "evals/k.eval.ts": { default: { b, a, B: a, "10": b, "2": a, "é": b } },
  });
  assert.deepEqual(ids, ["k/10", "k/2", "k/B", "k/a", "k/b", "k/é"]);
});

Deno.test("discoverEvals() rejects dataset keys that are not one path segment (rule 1.3.5)", async () => {
  for (const key of [".", "..", "", "x/y", "x\\y", "tab\there", "bell\u0007", "del\u007f"]) {
    const { ids, issues } = await discover({ "evals/k.eval.ts": { default: { ok: a, [key]: b } } });
    assert.deepEqual(ids, [], JSON.stringify(key));
    const issue = only(issues);
    assert.equal(issue.code, "discovery.invalid-dataset-key");
    assert.equal(issue.level, "error");
    assert.equal(issue.file, "evals/k.eval.ts");
    assert.ok(issue.message.includes(JSON.stringify(key)), issue.message);
  }
});

Deno.test("discoverEvals() warns about an empty array or record and yields no eval (rule 1.3.7)", async () => {
  const { ids, issues } = await discover({
    "evals/e1.eval.ts": { default: [] },
    "evals/e2.eval.ts": { default: {} },
    "evals/ok.eval.ts": { default: a },
  });
  assert.deepEqual(ids, ["ok"]);
  assert.deepEqual(issues.map((i) => [i.file, i.code, i.level]), [
    ["evals/e1.eval.ts", "discovery.empty-dataset", "warning"],
    ["evals/e2.eval.ts", "discovery.empty-dataset", "warning"],
  ]);
});

Deno.test("discoverEvals() reports a duplicate ID on both files and keeps neither (rule 1.3.8)", async () => {
  const { ids, issues } = await discover({
    "evals/a.eval.ts": { default: { b: a, c: b } },
    "evals/a/b.eval.ts": { default: b },
  });
  assert.deepEqual(ids, ["a/c"]);
  assert.deepEqual(issues.map((i) => [i.file, i.code]), [
    ["evals/a.eval.ts", "discovery.duplicate-id"],
    ["evals/a/b.eval.ts", "discovery.duplicate-id"],
  ]);
  for (const issue of issues) {
    assert.equal(
      issue.message,
      'eval ID "a/b" is produced by evals/a.eval.ts and evals/a/b.eval.ts',
    );
  }
});

Deno.test("discoverEvals() accepts the same definition exported by two files under two IDs", async () => {
  const { ids, issues } = await discover({
    "evals/x.eval.ts": { default: a },
    "evals/y.eval.ts": { default: a },
  });
  assert.deepEqual(ids, ["x", "y"]);
  assert.deepEqual(issues, []);
});

Deno.test("discoverEvals() reports every kind of invalid export (rule 1.6)", async () => {
  const cases: [unknown, RegExp][] = [
    [undefined, /^the default export is not an eval definition \(got undefined\)$/],
    [42, /^the default export is not an eval definition \(got 42\)$/],
    [() => a, /^the default export is not an eval definition \(got a function\)$/],
    [defineConfig({}), /^the default export is a config definition, not an eval$/],
    [
      defineEvalGroup({ evals: [a], onUnavailable: "stop-group" }),
      /^the default export is an eval group definition, not an eval$/,
    ],
    [
      { evaluationKind: "pass", tags: [], metadata: {}, test() {} },
      /^the default export is an unbranded object that looks like an eval$/,
    ],
    [[a, 42], /^item \[1\] of the exported array is not an eval definition \(got 42\)$/],
    [{ ok: a, bad: "x" }, /^key "bad" of the exported record is not an eval definition/],
    [new Map([["a", a]]), /^the default export is not an eval definition \(got an object\)$/],
  ];
  for (const [value, message] of cases) {
    const { ids, issues } = await discover({ "evals/x.eval.ts": { default: value } });
    assert.deepEqual(ids, []);
    const issue = only(issues);
    assert.equal(issue.code, "discovery.invalid-export");
    assert.equal(issue.level, "error");
    assert.match(issue.message, message);
    assert.ok(issue.hint !== undefined && issue.hint.length > 0);
  }
});

Deno.test("discoverEvals() reports an entry file without a default export", async () => {
  const { issues } = await discover({ "evals/x.eval.ts": { named: a } });
  assert.equal(only(issues).message, "the entry file has no default export");
  assert.equal(only(issues).code, "discovery.invalid-export");
});

Deno.test("discoverEvals() reports a hole in an exported array instead of crashing", async () => {
  // deno-lint-ignore no-sparse-arrays
  const { ids, issues } = await discover({ "evals/x.eval.ts": { default: [a, , b] } });
  assert.deepEqual(ids, []);
  assert.match(only(issues).message, /^item \[1\] of the exported array is not an eval definition/);
});

Deno.test("discoverEvals() names both format versions for a definition of another API copy", async () => {
  const foreign = foreignBrand("eval", 2, { evaluationKind: "pass", tags: [], test() {} });
  for (const value of [foreign, [a, foreign], { k: foreign }]) {
    const { issues } = await discover({ "evals/x.eval.ts": { default: value } });
    const issue = only(issues);
    assert.equal(issue.code, "discovery.invalid-export");
    assert.match(issue.message, /format version 2; this niceeval reads version 1$/);
  }
});

Deno.test("discoverEvals() accepts a definition of another API copy with the same version (rule 1.2.1)", async () => {
  const twin = foreignBrand("eval", 1, {
    evaluationKind: "pass",
    tags: [],
    metadata: {},
    test() {},
  });
  const { ids, issues } = await discover({ "evals/x.eval.ts": { default: twin } });
  assert.deepEqual(ids, ["x"]);
  assert.deepEqual(issues, []);
});

Deno.test("discoverEvals() still validates a definition that carries this API's own brand object but was not made here", async () => {
  const key = Symbol.for("niceeval.definition");
  const stamp = Object.getOwnPropertyDescriptor(a, key)!.value;
  const forged = Object.freeze(Object.defineProperty(
    { evaluationKind: "pass", tags: "x", metadata: {}, test() {} },
    key,
    { value: stamp },
  ));
  assert.equal(madeHere(a), true);
  assert.equal(madeHere(forged), false);
  assert.equal(madeHere({ ...a }), false);
  for (const value of [forged, [a, forged]]) {
    const { ids, issues } = await discover({ "evals/x.eval.ts": { default: value } });
    assert.deepEqual(ids, []);
    assert.match(only(issues).message, /an invalid eval definition: tags must be an array/);
  }
});

Deno.test("discoverEvals() turns a DefinitionError at import into discovery.invalid-definition", async () => {
  const error = new DefinitionError("definition.unknown-option", "tgas", "unknown option");
  const { issues } = await discover({
    "evals/x.eval.ts": error,
    "evals/y.eval.ts": { default: a },
  });
  const issue = only(issues);
  assert.equal(issue.code, "discovery.invalid-definition");
  assert.equal(issue.message, "unknown option");
});

Deno.test("discoverEvals() keeps going after import failures and reports each (rule 1.6)", async () => {
  const { evals, issues } = await discoverFixture("broken_discovery_project");
  assert.deepEqual(evals.map((e) => e.id), ["a/c", "fine"]);
  const byFile = Object.fromEntries(issues.map((i) => [i.file, i]));
  assert.equal(byFile["evals/throws.eval.ts"]!.code, "discovery.import-failed");
  assert.equal(
    byFile["evals/throws.eval.ts"]!.message,
    "cannot load: boom while loading (at evals/throws.eval.ts:2:19)",
  );
  assert.equal(byFile["evals/syntax.eval.ts"]!.code, "discovery.import-failed");
  assert.match(
    byFile["evals/syntax.eval.ts"]!.message,
    /^cannot load: SyntaxError: .* \(at evals\/syntax\.eval\.ts:2:\d+\)$/,
  );
  assert.equal(byFile["evals/unresolved.eval.ts"]!.code, "discovery.import-failed");
  assert.match(
    byFile["evals/unresolved.eval.ts"]!.message,
    /^cannot load: Module not found "evals\/missing_helper\.ts" \(at evals\/unresolved\.eval\.ts:1:\d+\)$/,
  );
  assert.equal(byFile["evals/bad_def.eval.ts"]!.code, "discovery.invalid-definition");
  assert.equal(
    byFile["evals/bad_def.eval.ts"]!.message,
    'unknown defineEval option "tgas" (did you mean "tags"?)',
  );
  for (const issue of issues) assert.ok(!issue.message.includes("\n"), issue.message);
  for (const issue of issues) assert.ok(!issue.message.includes("file://"), issue.message);
});

Deno.test("classifyEvalFiles() reports eval.ts, eval.tsx and *.eval.tsx as unsupported (rule 1.3.10)", () => {
  const issues: DiscoveryIssue[] = [];
  const files = [
    "evals/a.eval.ts",
    "evals/eval.ts",
    "evals/dir/eval.tsx",
    "evals/x.eval.tsx",
    "evals/dir/eval-group.ts",
    "evals/_lib/helper.ts",
    "evals/notes.md",
    "evals/retrieval.ts",
  ].map((relative) => walked(relative));
  const { entries, groups } = classifyEvalFiles(files, issues);
  assert.deepEqual(entries.map((f) => f.relative), ["evals/a.eval.ts"]);
  assert.deepEqual(groups.map((f) => f.relative), ["evals/dir/eval-group.ts"]);
  assert.deepEqual(issues.map((i) => [i.file, i.code, i.level]), [
    ["evals/eval.ts", "discovery.unsupported-entry", "error"],
    ["evals/dir/eval.tsx", "discovery.unsupported-entry", "error"],
    ["evals/x.eval.tsx", "discovery.unsupported-entry", "error"],
  ]);
});

Deno.test("discoverEvals() accepts score evals next to pass evals", async () => {
  const { evals } = await discover({
    "evals/s.eval.ts": { default: [defineScoreEval({ test() {} }), a] },
  });
  assert.deepEqual(evals.map((e) => e.definition.evaluationKind), ["score", "pass"]);
});
