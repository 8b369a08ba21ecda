import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { buildImportMap, importMapText, stripJsonc } from "../../src/loader/import_map.ts";

const ROOT = join(Deno.cwd(), "tmp-project");
const API = {
  "niceeval": "file:///opt/niceeval/mod.ts",
  "niceeval/expect": "file:///opt/niceeval/src/public/expect.ts",
  "niceeval/adapter": "file:///opt/niceeval/src/public/adapter.ts",
  "niceeval/sandbox": "file:///opt/niceeval/src/public/sandbox.ts",
} as const;

function files(entries: Record<string, string>): (path: string) => string | undefined {
  const byPath = new Map(Object.entries(entries).map(([name, text]) => [join(ROOT, name), text]));
  return (path) => byPath.get(path);
}

function url(name: string): string {
  return pathToFileURL(join(ROOT, name)).href;
}

Deno.test("buildImportMap() gives only the API entries when the project has no config file", () => {
  const map = buildImportMap({ root: ROOT, readText: files({}), apiUrls: API });
  assert.deepEqual(map, { imports: { ...API }, scopes: {} });
});

Deno.test("buildImportMap() makes relative targets absolute and keeps other targets", () => {
  const readText = files({
    "deno.json": JSON.stringify({
      imports: {
        "@lib/": "./lib/",
        "helper": "../shared/helper.ts",
        "zod": "npm:zod@^4",
        "std/": "https://example.test/std/",
      },
    }),
  });
  const map = buildImportMap({ root: ROOT, readText, apiUrls: API });
  assert.equal(map.imports["@lib/"], url("lib/"));
  assert.equal(map.imports["helper"], pathToFileURL(join(ROOT, "../shared/helper.ts")).href);
  assert.equal(map.imports["zod"], "npm:zod@^4");
  assert.equal(map.imports["std/"], "https://example.test/std/");
});

Deno.test("buildImportMap() replaces user entries for the four niceeval keys", () => {
  const readText = files({
    "deno.json": JSON.stringify({
      imports: { "niceeval": "jsr:@niceeval/cli", "niceeval/expect": "./mine.ts" },
      scopes: { "./vendor/": { "niceeval": "npm:niceeval", "x": "./x.ts" } },
    }),
  });
  const map = buildImportMap({ root: ROOT, readText, apiUrls: API });
  assert.equal(map.imports["niceeval"], API.niceeval);
  assert.equal(map.imports["niceeval/expect"], API["niceeval/expect"]);
  assert.deepEqual(map.scopes, { [url("vendor/")]: { x: url("x.ts") } });
});

Deno.test("buildImportMap() reads deno.jsonc with comments and trailing commas", () => {
  const readText = files({
    "deno.jsonc": '{\n  // aliases\n  "imports": {\n    "a": "./a.ts", /* b */\n  },\n}\n',
  });
  const map = buildImportMap({ root: ROOT, readText, apiUrls: API });
  assert.equal(map.imports["a"], url("a.ts"));
});

Deno.test("buildImportMap() prefers deno.json over deno.jsonc", () => {
  const readText = files({
    "deno.json": '{ "imports": { "a": "./json.ts" } }',
    "deno.jsonc": '{ "imports": { "a": "./jsonc.ts" } }',
  });
  assert.equal(buildImportMap({ root: ROOT, readText, apiUrls: API }).imports["a"], url("json.ts"));
});

Deno.test("buildImportMap() reads the importMap file when imports is absent", () => {
  const readText = files({
    "deno.json": '{ "importMap": "./maps/import_map.json" }',
    "maps/import_map.json": '{ "imports": { "a": "./a.ts" }, "scopes": { "./s/": {} } }',
  });
  const map = buildImportMap({ root: ROOT, readText, apiUrls: API });
  assert.equal(map.imports["a"], url("maps/a.ts"));
  assert.deepEqual(map.scopes, { [url("maps/s/")]: {} });
});

Deno.test("buildImportMap() throws naming the file when the JSON is invalid", () => {
  const readText = files({ "deno.json": '{ "imports": { "a": } }' });
  assert.throws(
    () => buildImportMap({ root: ROOT, readText, apiUrls: API }),
    (error: Error) =>
      error.message.includes(join(ROOT, "deno.json")) && error.message.includes("hint:"),
  );
});

Deno.test("buildImportMap() throws naming the file when a target is not a string", () => {
  const readText = files({ "deno.json": '{ "imports": { "a": 1 } }' });
  assert.throws(
    () => buildImportMap({ root: ROOT, readText, apiUrls: API }),
    (error: Error) => error.message.includes(join(ROOT, "deno.json")) && /"a"/.test(error.message),
  );
});

Deno.test("buildImportMap() throws naming both files when the importMap file is missing", () => {
  const readText = files({ "deno.json": '{ "importMap": "missing.json" }' });
  assert.throws(
    () => buildImportMap({ root: ROOT, readText, apiUrls: API }),
    (error: Error) =>
      error.message.includes(join(ROOT, "missing.json")) &&
      error.message.includes(join(ROOT, "deno.json")),
  );
});

Deno.test("importMapText() gives identical bytes for identical maps in any key order", () => {
  const a = importMapText({ imports: { b: "2", a: "1" }, scopes: { z: { y: "1", x: "2" } } });
  const b = importMapText({ imports: { a: "1", b: "2" }, scopes: { z: { x: "2", y: "1" } } });
  assert.equal(a, b);
  assert.equal(
    a,
    '{\n  "imports": {\n    "a": "1",\n    "b": "2"\n  },\n  "scopes": {\n    "z": {\n' +
      '      "x": "2",\n      "y": "1"\n    }\n  }\n}\n',
  );
});

Deno.test("stripJsonc() keeps comment markers and commas inside strings", () => {
  const text = '{ "a": "x // y /* z */", "b": "q,]" , }';
  assert.deepEqual(JSON.parse(stripJsonc(text)), { a: "x // y /* z */", b: "q,]" });
});
