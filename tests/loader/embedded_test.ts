import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const CHILD = fileURLToPath(new URL("./_embedded_child.ts", import.meta.url));

/** A temporary project whose files are given as `{ relative path: text }`. */
async function project(files: Record<string, string>): Promise<AsyncDisposable & { dir: string }> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "niceeval-embedded-" }));
  for (const [path, text] of Object.entries(files)) {
    await Deno.mkdir(join(dir, path, ".."), { recursive: true });
    await Deno.writeTextFile(join(dir, path), text);
  }
  return {
    dir,
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

/** Runs a scenario of `_embedded_child.ts` on a project; returns its JSON result. */
async function scenario(name: string, dir: string, map?: unknown): Promise<unknown> {
  const args = ["run", "-A", "--frozen", CHILD, name, dir, ...(map ? [JSON.stringify(map)] : [])];
  const out = await new Deno.Command(Deno.execPath(), { args, stdout: "piped", stderr: "piped" })
    .output();
  const text = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, text + new TextDecoder().decode(out.stderr));
  return JSON.parse(text);
}

Deno.test("createEmbeddedLoader() evaluates a helper once across loads and importers", async () => {
  await using p = await project({
    "lib/shared.ts": "export const instance = {};\nexport let count = 0;\ncount++;\n",
    "a.ts": 'import { instance } from "./lib/shared.ts";\nexport default instance;\n',
    "b.ts": 'import { instance, count } from "./lib/shared.ts";\nexport { count, instance };\n',
  });
  assert.deepEqual(await scenario("once", p.dir), { shared: true, count: 1, again: true });
});

Deno.test("createEmbeddedLoader() gives the partial exports of CommonJS inside a cycle", async () => {
  await using p = await project({
    "a.ts": 'import { b } from "./b.ts";\nexport const a = "a";\nexport const seen = b;\n',
    "b.ts": 'import * as a from "./a.ts";\nexport const b = `b:${typeof a.a}`;\n',
  });
  assert.equal(await scenario("cycle", p.dir), "b:undefined");
});

Deno.test("createEmbeddedLoader() fails only the loads that reach a throwing file", async () => {
  await using p = await project({
    "throws.ts": 'export const x = 1;\n\nthrow new Error("boom");\n',
    "uses.ts": 'import "./throws.ts";\nexport default 1;\n',
    "fine.ts": "export default 2;\n",
  });
  assert.deepEqual(await scenario("isolation", p.dir), {
    message: "boom",
    sameError: true,
    fine: 2,
  });
});

Deno.test("createEmbeddedLoader() rewrites frames of user files to their own lines", async () => {
  await using p = await project({
    "evals/throws.eval.ts": 'type T = string;\nconst label: T = "x";\nthrow new Error(label);\n',
  });
  const result = await scenario("frames", p.dir) as { stack: string; described: string };
  // As the native loader shows it: the module's top level, anonymous, at the file's URL.
  const url = pathToFileURL(join(p.dir, "evals/throws.eval.ts")).href;
  assert.equal(result.stack.split("\n")[1], `    at ${url}:3:7`);
  assert.doesNotMatch(result.stack, /data:/);
  assert.equal(result.described, "x (at evals/throws.eval.ts:3:7)");
});

Deno.test("createEmbeddedLoader() resolves niceeval names to the given API", async () => {
  await using p = await project({
    "e.ts": 'import { defineEval } from "niceeval";\nimport * as x from "niceeval/expect";\n' +
      "export const same = defineEval;\nexport const includes = x.includes;\n",
  });
  assert.deepEqual(await scenario("api", p.dir), { root: true, expect: true });
});

Deno.test("createEmbeddedLoader() resolves bare names through the import map to local files", async () => {
  await using p = await project({
    "helpers/greeting.ts": 'export const hello = "hi";\n',
    "e.ts": 'import { hello } from "greeting";\nimport { hello as h } from "@h/greeting.ts";\n' +
      "export default hello + h;\n",
  });
  const base = pathToFileURL(join(p.dir, "helpers/")).href;
  const map = { imports: { greeting: `${base}greeting.ts`, "@h/": base }, scopes: {} };
  assert.equal(await scenario("value", p.dir, map), "hihi");
});

Deno.test("createEmbeddedLoader() resolves node_modules packages by exports, then main", async () => {
  await using p = await project({
    "node_modules/esm-pkg/package.json": JSON.stringify({
      name: "esm-pkg",
      exports: { ".": { import: "./esm.js", require: "./cjs.cjs" }, "./sub/*": "./sub/*.js" },
    }),
    "node_modules/esm-pkg/esm.js":
      'export { default as cjs } from "cjs-pkg";\nexport const v = 1;\n',
    "node_modules/esm-pkg/sub/x.js": 'export const sub = "x";\n',
    "node_modules/cjs-pkg/package.json": JSON.stringify({ name: "cjs-pkg", main: "lib/index" }),
    "node_modules/cjs-pkg/lib/index.js": 'const { basename } = require("path");\n' +
      'module.exports = basename("/a/" + require("./data.json").name);\n',
    "node_modules/cjs-pkg/lib/data.json": '{ "name": "from-json" }',
    "e.ts": 'import { cjs, v } from "esm-pkg";\nimport { sub } from "esm-pkg/sub/x";\n' +
      "export default [cjs, v, sub].join();\n",
  });
  assert.equal(await scenario("value", p.dir), "from-json,1,x");
});

Deno.test("createEmbeddedLoader() names the file, the specifier and the loader of an unsupported import", async () => {
  await using p = await project({ "e.ts": 'import x from "npm:left-pad@1";\nexport default x;\n' });
  assert.match(
    String(await scenario("error", p.dir)),
    /^Cannot import "npm:left-pad@1" from e\.ts \(embedded loader\): npm: specifiers/,
  );
});

Deno.test("createEmbeddedLoader() gives import.meta the file's URL and directory", async () => {
  await using p = await project({
    "lib/meta.ts": "export const url = import.meta.url;\nexport const dir = import.meta.dirname;\n",
  });
  assert.deepEqual(await scenario("meta", p.dir), {
    url: pathToFileURL(join(p.dir, "lib/meta.ts")).href,
    dir: join(p.dir, "lib"),
  });
});
