import assert from "node:assert/strict";
import { join } from "node:path";
import { EXAMPLE_FILES, MINIMAL_CONFIG } from "../../src/cli/example_files.ts";
import { main } from "../../src/cli/main.ts";
import { createFakeIo } from "../_fakes/io.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

function withDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  return withTempDir(fn, "niceeval-init-");
}

async function names(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(dir)) out.push(entry.name);
  return out.sort();
}

async function init(dir: string, ...flags: string[]) {
  const io = createFakeIo({ cwd: dir });
  const code = await main(["init", ...flags], io);
  return { code, stdout: io.stdout.text(), stderr: io.stderr.text() };
}

Deno.test("runInit() creates the config and both directories (CMD-3)", async () => {
  await withDir(async (dir) => {
    const r = await init(dir);
    assert.equal(r.code, 0);
    assert.equal(r.stderr, "");
    assert.deepEqual(r.stdout.split("\n").slice(0, 3), [
      "created evals",
      "created experiments",
      "created niceeval.config.ts",
    ]);
    assert.match(r.stdout.split("\n")[3]!, /^next: /);
    assert.equal(await Deno.readTextFile(join(dir, "niceeval.config.ts")), MINIMAL_CONFIG);
    assert.ok((await Deno.stat(join(dir, "evals"))).isDirectory);
    assert.ok((await Deno.stat(join(dir, "experiments"))).isDirectory);
    assert.match(MINIMAL_CONFIG, /export default defineConfig\(\{\}\);/);
    assert.match(MINIMAL_CONFIG, /experiments/);
  });
});

Deno.test("runInit() keeps existing files untouched (CMD-3)", async () => {
  await withDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "niceeval.config.ts"), "// mine\n");
    const r = await init(dir);
    assert.equal(r.code, 0);
    assert.ok(r.stdout.includes("kept niceeval.config.ts (exists)\n"));
    assert.ok(r.stdout.includes("created evals\n"));
    assert.equal(await Deno.readTextFile(join(dir, "niceeval.config.ts")), "// mine\n");
  });
});

Deno.test("runInit() exits 2 when a path exists with the wrong type (CMD-3)", async () => {
  await withDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "evals"), "");
    const r = await init(dir);
    assert.equal(r.code, 2);
    assert.equal(r.stdout, "");
    assert.equal(
      r.stderr,
      "error: evals exists but is a file, not a directory [usage]\n" +
        "hint: move evals out of the way, then run niceeval init again\n",
    );
    assert.deepEqual(await names(dir), ["evals"]);
  });
});

Deno.test("runInit() exits 2, not 3, when a parent of an example file is a file (CMD-4)", async () => {
  await withDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "agents"), "");
    const r = await init(dir, "--example");
    assert.equal(r.code, 2);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /^error: agents exists but is a file, not a directory \[usage\]\n/);
    assert.deepEqual(await names(dir), ["agents"]);
  });
});

Deno.test("runInit() does not write through a dangling symlink", async () => {
  await withDir(async (dir) => {
    await Deno.symlink(join(dir, "elsewhere.ts"), join(dir, "niceeval.config.ts"));
    const r = await init(dir);
    assert.equal(r.code, 0);
    assert.ok(r.stdout.includes("kept niceeval.config.ts (exists)\n"));
    await assert.rejects(Deno.stat(join(dir, "elsewhere.ts")), Deno.errors.NotFound);
  });
});

Deno.test("runInit() writes every example file with --example (CMD-4)", async () => {
  await withDir(async (dir) => {
    const r = await init(dir, "--example");
    assert.equal(r.code, 0);
    for (const [path, text] of Object.entries(EXAMPLE_FILES)) {
      assert.equal(await Deno.readTextFile(join(dir, path)), text, path);
      assert.ok(r.stdout.includes(`created ${path}\n`), path);
    }
    assert.ok(r.stdout.endsWith("next: niceeval exp\n"));
  });
});
