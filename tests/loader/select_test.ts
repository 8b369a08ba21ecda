import assert from "node:assert/strict";
import { UsageError } from "../../src/_shared/mod.ts";
import {
  type ImportMap,
  type LoaderFacts,
  selectLoader,
  unmatchedAlias,
} from "../../src/loader/mod.ts";

const RESOLVES: Readonly<Record<string, string>> = {
  "niceeval": "file:///clone/mod.ts",
  "greeting": "file:///project/helpers/greeting.ts",
  "zod": "file:///clone/node_modules/.deno/zod/index.js",
};

function facts(overrides: Partial<LoaderFacts> = {}): LoaderFacts {
  return {
    requested: undefined,
    standalone: false,
    resolve: (specifier) => RESOLVES[specifier],
    projectMap: () => undefined,
    ...overrides,
  };
}

function map(imports: Record<string, string>): ImportMap {
  return { imports, scopes: {} };
}

Deno.test("selectLoader() uses NICEEVAL_LOADER when it names a loader", () => {
  assert.deepEqual(selectLoader(facts({ requested: "embedded" })), { kind: "embedded" });
  assert.deepEqual(
    selectLoader(facts({ requested: "native", resolve: () => undefined })),
    { kind: "native" },
  );
});

Deno.test("selectLoader() throws a usage error listing both loaders for another value", () => {
  assert.throws(
    () => selectLoader(facts({ requested: "esbuild" })),
    (error: UsageError) =>
      error instanceof UsageError && error.code === "usage" &&
      error.message.includes('"esbuild"') && error.hint.includes("native") &&
      error.hint.includes("embedded"),
  );
});

Deno.test("selectLoader() refuses native in a compiled binary", () => {
  assert.throws(
    () => selectLoader(facts({ requested: "native", standalone: true })),
    (error: UsageError) => error instanceof UsageError && error.code === "usage",
  );
});

Deno.test("selectLoader() uses embedded in a compiled binary, without a note", () => {
  assert.deepEqual(selectLoader(facts({ standalone: true })), { kind: "embedded" });
});

Deno.test("selectLoader() uses native when niceeval and the project's aliases resolve", () => {
  const projectMap = () =>
    map({ greeting: "file:///project/helpers/greeting.ts", zod: "npm:zod@4" });
  assert.deepEqual(selectLoader(facts({ projectMap })), { kind: "native" });
});

Deno.test("selectLoader() falls back to embedded with a note when niceeval does not resolve", () => {
  const selection = selectLoader(facts({ resolve: () => undefined }));
  assert.equal(selection.kind, "embedded");
  assert.match(selection.note ?? "", /^note: .*"niceeval" does not resolve/);
});

Deno.test("selectLoader() falls back to embedded when a project alias resolves elsewhere", () => {
  const projectMap = () => map({ greeting: "file:///elsewhere/greeting.ts" });
  const selection = selectLoader(facts({ projectMap }));
  assert.equal(selection.kind, "embedded");
  assert.match(selection.note ?? "", /"greeting" does not resolve as the project maps it/);
});

Deno.test("unmatchedAlias() checks prefix entries with a probe path and skips niceeval keys", () => {
  const resolve = (specifier: string) =>
    specifier.startsWith("@lib/") ? `file:///project/lib/${specifier.slice(5)}` : undefined;
  assert.equal(
    unmatchedAlias(map({ "@lib/": "file:///project/lib/", niceeval: "file:///x.ts" }), resolve),
    undefined,
  );
  assert.equal(unmatchedAlias(map({ "@lib/": "file:///other/lib/" }), resolve), "@lib/");
  assert.equal(unmatchedAlias(map({ chalk: "npm:chalk@5" }), resolve), "chalk");
});
