import assert from "node:assert/strict";
import { brand, readBrand } from "../../src/_shared/brand.ts";
import { DefinitionError, type DefinitionErrorCode } from "../../src/_shared/errors.ts";
import {
  defineEval,
  defineEvalGroup,
  defineScoreEval,
  type SandboxLayer,
} from "../../src/discovery/definitions.ts";

const test = () => {};

function definitionError(fn: () => unknown): DefinitionError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof DefinitionError, `expected a DefinitionError, got ${error}`);
    return error;
  }
  assert.fail("expected a DefinitionError");
}

function assertRejects(
  fn: () => unknown,
  code: DefinitionErrorCode,
  path: string,
  message?: string | RegExp,
): void {
  const e = definitionError(fn);
  assert.equal(e.code, code);
  assert.equal(e.path, path);
  assert.equal(e.name, "DefinitionError");
  if (typeof message === "string") assert.equal(e.message, message);
  else if (message !== undefined) assert.match(e.message, message);
}

// deno-lint-ignore no-explicit-any
const evalOf = (def: Record<string, unknown>) => defineEval(def as any);

function layer(): SandboxLayer {
  return Object.freeze(brand({ kind: "fake" }, "sandbox-layer")) as unknown as SandboxLayer;
}

Deno.test("defineEval() returns a frozen, branded definition with defaults (rule 2.4.4)", () => {
  const d = defineEval({ test });
  assert.ok(Object.isFrozen(d));
  assert.deepEqual(readBrand(d), { kind: "eval", version: 1 });
  assert.equal(d.evaluationKind, "pass");
  assert.deepEqual(d.tags, []);
  assert.ok(Object.isFrozen(d.tags));
  assert.deepEqual(d.metadata, {});
  assert.ok(Object.isFrozen(d.metadata));
  assert.equal(d.test, test);
  for (const key of ["description", "timeoutMs", "sandbox", "id"]) assert.ok(!(key in d), key);
});

Deno.test("defineScoreEval() makes a score eval with the same options", () => {
  const d = defineScoreEval({ description: "points", tags: ["x"], timeoutMs: 5, test });
  assert.equal(d.evaluationKind, "score");
  assert.equal(d.description, "points");
  assert.equal(d.timeoutMs, 5);
  assert.deepEqual(readBrand(d), { kind: "eval", version: 1 });
});

Deno.test("defineEval() keeps every valid option", () => {
  const sandbox = layer();
  const d = defineEval({
    description: "d",
    tags: ["a"],
    timeoutMs: 1,
    metadata: { k: 1 },
    sandbox,
    test,
  });
  assert.equal(d.sandbox, sandbox);
  assert.deepEqual(d.metadata, { k: 1 });
});

Deno.test("defineEval() treats undefined options as absent (rule 2.4.2)", () => {
  const d = evalOf({
    description: undefined,
    tags: undefined,
    judge: undefined,
    id: undefined,
    test,
  });
  assert.deepEqual(d.tags, []);
  assert.ok(!("description" in d));
});

Deno.test("defineEval() drops duplicate tags and keeps their order", () => {
  assert.deepEqual(defineEval({ tags: ["b", "a", "b", "c", "a"], test }).tags, ["b", "a", "c"]);
});

Deno.test("defineEval() deep-freezes a copy of its metadata (rule 2.4.3)", () => {
  const metadata = { nested: { list: [1, { deep: true }] }, n: null };
  const d = defineEval({ metadata, test });
  assert.deepEqual(d.metadata, metadata);
  assert.notEqual(d.metadata, metadata);
  assert.ok(Object.isFrozen(d.metadata.nested));
  assert.ok(Object.isFrozen((d.metadata.nested as { list: unknown[] }).list));
  assert.ok(Object.isFrozen((d.metadata.nested as { list: object[] }).list[1]));
  metadata.nested.list.push(2);
  assert.equal((d.metadata.nested as { list: unknown[] }).list.length, 2);
  assert.ok(!Object.isFrozen(metadata));
});

Deno.test("defineEval() rejects reserved options (definition.reserved-option)", () => {
  for (const key of ["id", "evaluationKind", "configHash"]) {
    assertRejects(
      () => evalOf({ [key]: "x", test }),
      "definition.reserved-option",
      key,
      `option "${key}" is reserved and cannot be set`,
    );
  }
});

Deno.test("defineEval() rejects LATER options as unsupported (definition.unsupported-option)", () => {
  for (const key of ["judge", "reporters", "plugins", "diff"]) {
    assertRejects(
      () => evalOf({ [key]: true, test }),
      "definition.unsupported-option",
      key,
      `option "${key}" is not supported in this release`,
    );
  }
});

Deno.test("defineEval() rejects unknown options and suggests the closest key (rule 2.4.1)", () => {
  assertRejects(
    () => evalOf({ tgas: [], test }),
    "definition.unknown-option",
    "tgas",
    'unknown defineEval option "tgas" (did you mean "tags"?)',
  );
  assertRejects(
    () => evalOf({ timeoutms: 5, test }),
    "definition.unknown-option",
    "timeoutms",
    /did you mean "timeoutMs"\?/,
  );
  assertRejects(
    () => evalOf({ somethingElse: 1, test }),
    "definition.unknown-option",
    "somethingElse",
    'unknown defineEval option "somethingElse"',
  );
  assertRejects(
    () => defineScoreEval({ tests: test } as never),
    "definition.unknown-option",
    "tests",
    'unknown defineScoreEval option "tests" (did you mean "test"?)',
  );
});

Deno.test("defineEval() requires test (definition.missing-option)", () => {
  assertRejects(() => evalOf({}), "definition.missing-option", "test", 'option "test" is required');
  assertRejects(() => evalOf({ test: undefined }), "definition.missing-option", "test");
});

Deno.test("defineEval() rejects invalid values naming the path (definition.invalid-value)", () => {
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [{ test: "x" }, "test", /^test must be a function, got "x"$/],
    [{ description: "two\nlines", test }, "description", /without line breaks/],
    [{ description: 5, test }, "description", /must be a string, got 5$/],
    [{ tags: "smoke", test }, "tags", /must be an array of tags/],
    [{ tags: ["a", "b", "c d"], test }, "tags[2]", /^tags\[2\] must be a non-empty tag/],
    [{ tags: [""], test }, "tags[0]", /non-empty tag/],
    [{ tags: ["a", 1], test }, "tags[1]", /got 1$/],
    [{ timeoutMs: 0, test }, "timeoutMs", /^timeoutMs must be a positive integer, got 0$/],
    [{ timeoutMs: 1.5, test }, "timeoutMs", /got 1\.5$/],
    [{ timeoutMs: "5", test }, "timeoutMs", /got "5"$/],
    [{ timeoutMs: Infinity, test }, "timeoutMs", /positive integer/],
    [{ metadata: [], test }, "metadata", /must be a JSON object/],
    [{ metadata: { x: NaN }, test }, "metadata.x", /^metadata\.x must be JSON/],
    [{ metadata: { a: [1, Infinity] }, test }, "metadata.a[1]", /must be JSON/],
    [{ metadata: { d: new Date(0) }, test }, "metadata.d", /must be JSON/],
    [{ metadata: { u: undefined }, test }, "metadata.u", /must be JSON/],
    [{ metadata: { f: () => 1 }, test }, "metadata.f", /must be JSON/],
    [{ metadata: { b: 1n }, test }, "metadata.b", /must be JSON/],
    [{ sandbox: { kind: "docker" }, test }, "sandbox", /sandbox template or layer/],
  ];
  for (const [def, path, message] of cases) {
    assertRejects(() => evalOf(def), "definition.invalid-value", path, message);
  }
});

Deno.test("defineEval() rejects cyclic metadata", () => {
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  assertRejects(
    () => evalOf({ metadata: cyclic, test }),
    "definition.invalid-value",
    "metadata.self",
  );
});

Deno.test("defineEval() rejects an options value that is not a plain object", () => {
  for (const value of [null, undefined, [], "x", new (class Options {})()]) {
    assertRejects(() => defineEval(value as never), "definition.invalid-value", "(options)");
  }
});

Deno.test("defineEvalGroup() returns a frozen, branded group", () => {
  const a = defineEval({ test });
  const sandbox = layer();
  const g = defineEvalGroup({ evals: [a], onUnavailable: "stop-group", sandbox, description: "g" });
  assert.ok(Object.isFrozen(g));
  assert.ok(Object.isFrozen(g.evals));
  assert.deepEqual(readBrand(g), { kind: "eval-group", version: 1 });
  assert.deepEqual(g.evals, [a]);
  assert.equal(g.onUnavailable, "stop-group");
  assert.equal(g.sandbox, sandbox);
  assert.equal(
    defineEvalGroup({ evals: [a], onUnavailable: "replace-sandbox" }).onUnavailable,
    "replace-sandbox",
  );
});

Deno.test("defineEvalGroup() validates its options (rule 2.3, 2.4)", () => {
  const a = defineEval({ test });
  // deno-lint-ignore no-explicit-any
  const group = (def: Record<string, unknown>) => defineEvalGroup(def as any);
  assertRejects(() => group({ evals: [a] }), "definition.missing-option", "onUnavailable");
  assertRejects(() => group({ onUnavailable: "stop-group" }), "definition.missing-option", "evals");
  assertRejects(
    () => group({ evals: [], onUnavailable: "stop-group" }),
    "definition.invalid-value",
    "evals",
  );
  assertRejects(
    () => group({ evals: [a, { test }], onUnavailable: "stop-group" }),
    "definition.invalid-value",
    "evals[1]",
  );
  assertRejects(
    () => group({ evals: [a], onUnavailable: "retry" }),
    "definition.invalid-value",
    "onUnavailable",
    /^onUnavailable must be "stop-group" or "replace-sandbox", got "retry"$/,
  );
  assertRejects(
    () => group({ evals: [a], onUnavailable: "stop-group", plugins: [] }),
    "definition.unsupported-option",
    "plugins",
  );
  for (const key of ["id", "evaluationKind", "configHash"]) {
    assertRejects(
      () => group({ evals: [a], onUnavailable: "stop-group", [key]: "x" }),
      "definition.reserved-option",
      key,
    );
  }
  assertRejects(
    () => group({ evals: [a], onUnavailable: "stop-group", evalz: [] }),
    "definition.unknown-option",
    "evalz",
    /did you mean "evals"\?/,
  );
  assertRejects(
    () => group({ evals: [a], onUnavailable: "stop-group", sandbox: {} }),
    "definition.invalid-value",
    "sandbox",
  );
});

Deno.test("definitions of one kind share one frozen brand", () => {
  const a = readBrand(defineEval({ test }));
  const raw = (d: object) => (d as Record<symbol, unknown>)[Symbol.for("niceeval.definition")];
  const first = defineEval({ test });
  const second = defineEval({ test });
  assert.equal(raw(first), raw(second));
  assert.ok(Object.isFrozen(raw(first)));
  assert.deepEqual(a, { kind: "eval", version: 1 });
  assert.deepEqual(readBrand(brand({}, "agent")), { kind: "agent", version: 1 });
});
