/**
 * The embedded loader's transform cache in one process (docs/loader.md), with a fake transpiler
 * that counts its starts: keys, corrupt entries, unwritable directories, concurrent writers and
 * pruning.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { CachedTransformer, type TransformerSource } from "../../src/loader/_cached_transform.ts";
import type { Transformed } from "../../src/loader/_transform.ts";
import {
  PRUNE_AFTER_MS,
  TransformCache,
  transformCacheDir,
  transformKey,
} from "../../src/loader/transform_cache.ts";
import { createEmbeddedLoader } from "../../src/loader/mod.ts";

const DAY_MS = 24 * 60 * 60 * 1000;
const FILE = { path: "/project/evals/a.eval.ts", extension: ".ts" };
const fail = (error: unknown) => error as Error;

/** A transpiler whose output is `exports.text = <source>` and that counts what it does. */
function fakeTranspiler(id = "fake 0.28.2") {
  const counts = { starts: 0, transforms: 0 };
  const source: TransformerSource = {
    id: () => Promise.resolve(id),
    start: () => {
      counts.starts++;
      return Promise.resolve({
        transform: (text: string) => {
          counts.transforms++;
          if (text.includes("SYNTAX ERROR")) return Promise.reject(new Error("bad syntax"));
          return Promise.resolve({
            code: `exports.text = ${JSON.stringify(text)};\n`,
            mappings: "AAAA",
            specifiers: [],
          });
        },
      });
    },
  };
  return { source, counts };
}

async function tempDir(): Promise<AsyncDisposable & { dir: string }> {
  const dir = await Deno.makeTempDir({ prefix: "niceeval-transform-cache-" });
  return { dir, [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }) };
}

async function names(dir: string, suffix: string): Promise<string[]> {
  const found = [];
  for await (const e of Deno.readDir(dir)) if (e.name.endsWith(suffix)) found.push(e.name);
  return found.sort();
}
const entries = (dir: string) => names(dir, ".json");

Deno.test("transform cache: a warm load through a new loader never starts the transpiler", async () => {
  await using t = await tempDir();
  await Deno.writeTextFile(join(t.dir, "e.ts"), "export default 1;\n");
  const cacheDir = join(t.dir, "cache");
  const loads = [];
  const counts = [];
  for (let i = 0; i < 2; i++) {
    const fake = fakeTranspiler();
    const loader = createEmbeddedLoader({
      root: t.dir,
      importMap: { imports: {}, scopes: {} },
      api: { root: {}, expect: {}, adapter: {}, sandbox: {} },
      cacheDir,
      transformer: fake.source,
    });
    loads.push(await loader.load(join(t.dir, "e.ts")));
    counts.push(fake.counts.starts);
  }
  assert.deepEqual(counts, [1, 0]);
  assert.deepEqual(loads, [{ text: "export default 1;\n" }, { text: "export default 1;\n" }]);
});

Deno.test("transform cache: a changed source, transpiler version or file name misses; another directory hits", async () => {
  await using t = await tempDir();
  const first = fakeTranspiler("esbuild 0.28.2");
  await new CachedTransformer(first.source, t.dir).transform("a", FILE, fail);
  const cases: [string, string, typeof FILE][] = [
    ["esbuild 0.28.2", "a", FILE], // the same key: a hit
    ["esbuild 0.28.2", "a", { ...FILE, path: "/elsewhere/evals/a.eval.ts" }], // a copy: a hit
    ["esbuild 0.28.2", "b", FILE],
    ["esbuild 0.28.3", "a", FILE],
    ["esbuild 0.28.2", "a", { ...FILE, path: "/project/evals/b.eval.ts" }],
    ["esbuild 0.28.2", "a", { ...FILE, extension: ".tsx" }],
  ];
  const starts = [];
  for (const [id, source, file] of cases) {
    const fake = fakeTranspiler(id);
    const out = await new CachedTransformer(fake.source, t.dir).transform(source, file, fail);
    assert.equal(out.code, `exports.text = ${JSON.stringify(source)};\n`);
    starts.push(fake.counts.starts);
  }
  assert.deepEqual(starts, [0, 0, 1, 1, 1, 1]);
  assert.equal((await entries(t.dir)).length, 5);
});

Deno.test("transform cache: a corrupt, truncated or foreign entry is a miss and is replaced", async () => {
  await using t = await tempDir();
  const key = transformKey({
    transformer: "fake 0.28.2",
    name: "a.eval.ts",
    extension: ".ts",
    source: "a",
  });
  const good = { code: 'exports.text = "a";\n', mappings: "AAAA", specifiers: [] };
  const path = new TransformCache(t.dir).entryPath(key);
  await new CachedTransformer(fakeTranspiler().source, t.dir).transform("a", FILE, fail);
  const whole = await Deno.readTextFile(path);
  const bad = [
    "",
    whole.slice(0, whole.length - 10),
    "\0\0\0\0",
    "null",
    whole.replace(key, "0".repeat(64)),
    whole.replace('exports.text = \\"a\\"', 'exports.text = \\"b\\"'),
    JSON.stringify({ ...JSON.parse(whole), specifiers: [1] }),
  ];
  for (const text of bad) {
    await Deno.writeTextFile(path, text);
    assert.equal(await new TransformCache(t.dir).get(key), undefined, JSON.stringify(text));
    const fake = fakeTranspiler();
    const out = await new CachedTransformer(fake.source, t.dir).transform("a", FILE, fail);
    assert.deepEqual([out, fake.counts.starts], [good, 1]);
    assert.deepEqual(await new TransformCache(t.dir).get(key), good, "the entry was replaced");
  }
});

Deno.test("transform cache: an unwritable cache directory only turns the cache off", async () => {
  await using t = await tempDir();
  const file = join(t.dir, "not-a-dir");
  await Deno.writeTextFile(file, "");
  for (const dir of [file, join(file, "below")]) {
    const fake = fakeTranspiler();
    const cached = new CachedTransformer(fake.source, dir);
    await cached.transform("a", FILE, fail);
    await cached.transform("b", FILE, fail);
    assert.deepEqual(fake.counts, { starts: 1, transforms: 2 });
  }
  assert.equal(await Deno.readTextFile(file), "");
});

Deno.test("transform cache: a failed transform is not cached", async () => {
  await using t = await tempDir();
  for (let i = 0; i < 2; i++) {
    const fake = fakeTranspiler();
    await assert.rejects(
      new CachedTransformer(fake.source, t.dir).transform("SYNTAX ERROR", FILE, fail),
      /bad syntax/,
    );
    assert.equal(fake.counts.transforms, 1);
  }
  assert.deepEqual(await entries(t.dir), []);
});

Deno.test("transform cache: concurrent writers of one key never expose a partial entry", async () => {
  await using t = await tempDir();
  const key = transformKey({ transformer: "fake", name: "a.ts", extension: ".ts", source: "a" });
  // Entries of a few MB each, so that a write spans many system calls.
  const value = (i: number): Transformed => ({
    code: `exports.text = "${String(i).repeat(2_000_000)}";\n`,
    mappings: "AAAA",
    specifiers: [`./dep${i}.ts`],
  });
  await new TransformCache(t.dir).put(key, value(0));
  const written = new Set([0, 1, 2, 3, 4, 5, 6, 7].map((i) => JSON.stringify(value(i))));
  let writing = true;
  const reads: (Transformed | undefined)[] = [];
  const reader = async () => {
    while (writing) reads.push(await new TransformCache(t.dir).get(key));
  };
  const readers = [reader(), reader()];
  await Promise.all([1, 2, 3, 4, 5, 6, 7].map((i) => new TransformCache(t.dir).put(key, value(i))));
  writing = false;
  await Promise.all(readers);
  reads.push(await new TransformCache(t.dir).get(key));
  assert.ok(reads.length > 1);
  for (const read of reads) {
    assert.ok(read !== undefined && written.has(JSON.stringify(read)), "a whole entry");
  }
  assert.deepEqual(await entries(t.dir), [`${key}.json`]);
  assert.deepEqual(await names(t.dir, ".tmp"), []);
});

Deno.test("transform cache: a sweep removes entries unused for the pruning age, once a day", async () => {
  await using t = await tempDir();
  // Close to the real time: a new entry gets the real modification time.
  const now = Date.now();
  let clockNow = now;
  const clock = { now: () => clockNow };
  const put = (name: string) =>
    new TransformCache(t.dir, { clock }).put(name, { code: name, mappings: "", specifiers: [] });
  const age = async (name: string, ms: number) => {
    const at = (now - ms) / 1000;
    await Deno.utime(join(t.dir, name), at, at);
  };
  await Deno.mkdir(t.dir, { recursive: true });
  await new TransformCache(t.dir).put("old", { code: "old", mappings: "", specifiers: [] });
  await new TransformCache(t.dir).put("used", { code: "used", mappings: "", specifiers: [] });
  await new TransformCache(t.dir).put("recent", { code: "r", mappings: "", specifiers: [] });
  await Deno.writeTextFile(join(t.dir, "dead.1234abcd.tmp"), "{");
  await age("old.json", PRUNE_AFTER_MS + DAY_MS);
  await age("used.json", PRUNE_AFTER_MS + DAY_MS);
  await age("recent.json", PRUNE_AFTER_MS - DAY_MS);
  await age("dead.1234abcd.tmp", 2 * DAY_MS);
  await Deno.remove(join(t.dir, "last-sweep"));
  // A hit marks "used" as used now.
  assert.ok(await new TransformCache(t.dir, { clock }).get("used") !== undefined);
  await put("new");
  assert.deepEqual(await entries(t.dir), ["new.json", "recent.json", "used.json"]);
  assert.deepEqual(await names(t.dir, ".tmp"), []);

  // Within a day of that sweep, writers do not sweep again; a day later, one does.
  await age("recent.json", PRUNE_AFTER_MS + DAY_MS);
  clockNow = now + DAY_MS / 2;
  await put("later");
  assert.ok((await entries(t.dir)).includes("recent.json"));
  clockNow = now + DAY_MS + 1;
  await put("next-day");
  assert.deepEqual(await entries(t.dir), ["later.json", "new.json", "next-day.json", "used.json"]);
});

Deno.test("transformCacheDir() follows XDG_CACHE_HOME, then HOME, never the state directory (ERR-3)", () => {
  const env = { NICEEVAL_STATE_DIR: "/s", XDG_CACHE_HOME: "/x", HOME: "/h" };
  assert.equal(transformCacheDir(env), "/x/niceeval/transform");
  assert.equal(transformCacheDir({ ...env, XDG_CACHE_HOME: "" }), "/h/.cache/niceeval/transform");
  assert.equal(
    transformCacheDir({ ...env, XDG_CACHE_HOME: "rel" }),
    "/h/.cache/niceeval/transform",
  );
  assert.equal(transformCacheDir({ NICEEVAL_STATE_DIR: "/s" }), undefined);
});

Deno.test("TRANSFORM_ID names the esbuild version it transforms with", async () => {
  const { TRANSFORM_ID } = await import("../../src/loader/_transform.ts");
  const range = JSON.parse(await Deno.readTextFile(new URL("../../deno.json", import.meta.url)))
    .imports["esbuild-wasm"] as string; // npm:esbuild-wasm@^0.28
  const minor = range.slice(range.indexOf("^") + 1);
  assert.match(
    JSON.parse(TRANSFORM_ID).esbuild,
    new RegExp(`^${minor.replace(".", "\\.")}\\.\\d+$`),
  );
});
