/**
 * The embedded loader's transform cache across processes (docs/loader.md): a process whose files
 * are all cached never starts esbuild-wasm, and what it loads from the cache behaves as freshly
 * transformed code, frames included (toolchain.md §8.8).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { tempProject } from "../_helpers/cli.ts";

const CHILD = fileURLToPath(new URL("./_embedded_child.ts", import.meta.url));

/** A temporary project whose files are given as `{ relative path: text }`, and a cache dir. */
async function project(
  files: Record<string, string>,
): Promise<AsyncDisposable & { dir: string; cache: string }> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "niceeval-embedded-" }));
  const cache = await Deno.makeTempDir({ prefix: "niceeval-transform-cache-" });
  for (const [path, text] of Object.entries(files)) {
    await Deno.mkdir(join(dir, path, ".."), { recursive: true });
    await Deno.writeTextFile(join(dir, path), text);
  }
  return {
    dir,
    cache,
    [Symbol.asyncDispose]: async () => {
      await Deno.remove(dir, { recursive: true });
      await Deno.remove(cache, { recursive: true });
    },
  };
}

/** The names of the cache entries in `dir`. */
async function entries(dir: string): Promise<string[]> {
  const found = [];
  for await (const e of Deno.readDir(dir)) if (e.name.endsWith(".json")) found.push(e.name);
  return found;
}

/** Runs a scenario of `_embedded_child.ts` in its own process with the transform cache `cache`. */
async function scenario(
  name: string,
  dir: string,
  cache: string,
): Promise<{ result: unknown; starts: number }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--frozen", CHILD, name, dir],
    env: { NICEEVAL_TEST_CACHE_DIR: cache },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, text + new TextDecoder().decode(out.stderr));
  return JSON.parse(text);
}

Deno.test("transform cache: a second process with every file cached never starts esbuild", async () => {
  await using p = await project({
    "lib/shared.ts": "export const instance = {};\nexport let count = 0;\ncount++;\n",
    "a.ts": 'import { instance } from "./lib/shared.ts";\nexport default instance;\n',
    "b.ts": 'import { instance, count } from "./lib/shared.ts";\nexport { count, instance };\n',
  });
  const expected = { shared: true, count: 1, again: true };
  assert.deepEqual(await scenario("once", p.dir, p.cache), { result: expected, starts: 1 });
  assert.equal((await entries(p.cache)).length, 3);
  assert.deepEqual(await scenario("once", p.dir, p.cache), { result: expected, starts: 0 });
});

Deno.test("transform cache: frames of cached files still name the file's own line (§8.8)", async () => {
  await using p = await project({
    "evals/throws.eval.ts": 'type T = string;\nconst label: T = "x";\nthrow new Error(label);\n',
  });
  const url = pathToFileURL(join(p.dir, "evals/throws.eval.ts")).href;
  for (const starts of [1, 0]) {
    const run = await scenario("frames", p.dir, p.cache);
    const result = run.result as { stack: string; described: string };
    assert.equal(run.starts, starts);
    assert.equal(result.stack.split("\n")[1], `    at ${url}:3:7`);
    assert.equal(result.described, "x (at evals/throws.eval.ts:3:7)");
  }
});

Deno.test("transform cache: niceeval exp under the embedded loader names the same error location cold and warm", async () => {
  await using p = await tempProject("throwing_project");
  const cache = await Deno.makeTempDir({ prefix: "niceeval-xdg-cache-" });
  await using _cache = { [Symbol.asyncDispose]: () => Deno.remove(cache, { recursive: true }) };
  const env = { NICEEVAL_LOADER: "embedded", XDG_CACHE_HOME: cache };
  const locations = [];
  for (let i = 0; i < 2; i++) {
    const r = await p.run(["exp", "--json"], { env });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const end = r.stdout.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l))
      .find((e) => e.type === "attempt_end" && e.evalId === "throws");
    locations.push(end?.errorLocation);
    const cached = await entries(join(cache, "niceeval", "transform"));
    assert.ok(cached.length > 0, "the CLI wrote the transform cache");
  }
  assert.deepEqual(locations, ["evals/throws.eval.ts:4:17", "evals/throws.eval.ts:4:17"]);
});
