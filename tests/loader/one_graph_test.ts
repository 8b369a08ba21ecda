/**
 * issue 20: discovery through one module graph. `loadInOneGraph` loads a group at once and halves
 * a failed group down to single files; the native loader's group is one generated entry module.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createNativeLoader, loadInOneGraph, type LoadOutcome } from "../../src/loader/mod.ts";
import { GroupUnavailable } from "../../src/loader/one_graph.ts";

/** A fake runtime: files named `bad*` fail; every group and single load is recorded. */
function fakeRuntime() {
  const groups: string[][] = [];
  const singles: string[] = [];
  /** Every path each load started with, in the order of the loads. */
  const log: string[] = [];
  const ns = (path: string) => ({ path });
  return {
    groups,
    singles,
    log,
    group: (paths: readonly string[]) => {
      groups.push([...paths]);
      log.push(...paths);
      if (paths.some((p) => p.startsWith("bad"))) return Promise.reject(new Error("group failed"));
      return Promise.resolve(paths.map(ns));
    },
    single: (path: string) => {
      singles.push(path);
      log.push(path);
      return path.startsWith("bad")
        ? Promise.reject(new Error(`${path} failed alone`))
        : Promise.resolve(ns(path));
    },
  };
}

const failed = (outcomes: LoadOutcome[]) =>
  outcomes.flatMap((o) => o.ok ? [] : [(o.error as Error).message]);

Deno.test("issue 20: loadInOneGraph() loads every file in one group when none fails", async () => {
  const runtime = fakeRuntime();
  const paths = Array.from({ length: 50 }, (_, i) => `f${i}`);
  const outcomes = await loadInOneGraph(paths, runtime.group, runtime.single);
  assert.deepEqual(runtime.groups, [paths]);
  assert.deepEqual(runtime.singles, []);
  assert.deepEqual(outcomes.map((o) => o.ok && o.namespace.path), paths);
});

Deno.test("issue 20: loadInOneGraph() reports a failed file by its load alone, others from groups", async () => {
  const runtime = fakeRuntime();
  const paths = Array.from({ length: 64 }, (_, i) => i === 37 ? "bad37" : `f${i}`);
  const outcomes = await loadInOneGraph(paths, runtime.group, runtime.single);
  assert.deepEqual(failed(outcomes), ["bad37 failed alone"]);
  assert.deepEqual(
    outcomes.map((o) => o.ok ? o.namespace.path : "x"),
    paths.map((p, i) => i === 37 ? "x" : p),
  );
  // Halved down to a small group around the bad file; the rest loaded as groups.
  assert.ok(runtime.singles.includes("bad37") && runtime.singles.length <= 8, `${runtime.singles}`);
  assert.ok(runtime.groups.length <= 8, `${runtime.groups.length} groups`);
  // Files are first reached in the order of the paths, as file-by-file loading reaches them.
  assert.deepEqual([...new Set(runtime.log)], paths);
});

Deno.test("issue 20: loadInOneGraph() loads file by file once no group can be written", async () => {
  const singles: string[] = [];
  let groups = 0;
  const outcomes = await loadInOneGraph(
    Array.from({ length: 30 }, (_, i) => `f${i}`),
    () => {
      groups++;
      return Promise.reject(new GroupUnavailable("no temp directory"));
    },
    (path) => {
      singles.push(path);
      return Promise.resolve({ path });
    },
  );
  assert.equal(groups, 1);
  assert.equal(singles.length, 30);
  assert.ok(outcomes.every((o) => o.ok));
});

async function project(files: Record<string, string>): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "niceeval-graph-test-" });
  for (const [name, text] of Object.entries(files)) await Deno.writeTextFile(join(dir, name), text);
  return dir;
}

Deno.test("issue 20: the native loadAll() imports one generated entry module and removes it", async () => {
  const dir = await project({
    "a.ts": "export default 'a';\n",
    "b.ts": "export default 'b';\n",
    "c.ts": "export const c = 'c';\n",
  });
  const temp = await Deno.makeTempDir({ prefix: "niceeval-graph-entry-" });
  const imported: string[] = [];
  try {
    const loader = createNativeLoader({
      tempDir: temp,
      importModule: (url) => {
        imported.push(url);
        return import(url);
      },
    });
    const paths = ["a.ts", "b.ts", "c.ts"].map((name) => join(dir, name));
    const outcomes = await loader.loadAll!(paths);
    assert.equal(imported.length, 1);
    assert.ok(imported[0]!.startsWith(pathToFileURL(temp).href), imported[0]);
    assert.deepEqual(outcomes.map((o) => o.ok && (o.namespace.default ?? o.namespace.c)), [
      "a",
      "b",
      "c",
    ]);
    // The namespaces are the modules' own: a later load of a file gives the same object.
    assert.equal(await loader(paths[1]!), outcomes[1]!.ok && outcomes[1]!.namespace);
    assert.deepEqual(await Array.fromAsync(Deno.readDir(temp)), [], "the entry module is removed");
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(temp, { recursive: true });
  }
});

Deno.test("issue 20: the native loadAll() names exactly the file that throws, the others load", async () => {
  const dir = await project({
    "good1.ts": "export default 1;\n",
    "throws.ts": "export default 2;\nthrow new Error('top-level boom');\n",
    "syntax.ts": "export default {;\n",
    "good2.ts": "export default 3;\n",
  });
  try {
    const paths = ["good1.ts", "throws.ts", "syntax.ts", "good2.ts"].map((n) => join(dir, n));
    const outcomes = await createNativeLoader().loadAll!(paths);
    assert.deepEqual(outcomes.map((o) => o.ok ? o.namespace.default : "failed"), [
      1,
      "failed",
      "failed",
      3,
    ]);
    const [, thrown, syntax] = outcomes.map((o) => o.ok ? undefined : o.error as Error);
    assert.equal(thrown?.message, "top-level boom");
    assert.ok(thrown?.stack?.includes(pathToFileURL(paths[1]!).href), thrown?.stack);
    assert.ok(String(syntax).includes(pathToFileURL(paths[2]!).href), String(syntax));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
