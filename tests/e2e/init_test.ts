/** `niceeval init` on the real CLI (cli.md CMD-3, CMD-4). */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { REPO, tempProject } from "../_helpers/cli.ts";

const EXAMPLE = join(REPO, "examples", "keyless");

/** Every file under `dir`, project-relative, sorted. */
async function filesUnder(dir: string, base = dir): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) out.push(...await filesUnder(path, base));
    else out.push(relative(base, path).split("\\").join("/"));
  }
  return out.sort();
}

Deno.test("niceeval init: an empty directory gets the config and both directories exits 0", async () => {
  await using p = await tempProject(null);
  const r = await p.run(["init"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
  const lines = r.stdout.trimEnd().split("\n");
  assert.deepEqual(lines.slice(0, 3), [
    "created evals",
    "created experiments",
    "created niceeval.config.ts",
  ]);
  assert.match(lines[3]!, /^next: /);
  assert.equal(lines.length, 4);
  assert.deepEqual(await filesUnder(p.dir), ["niceeval.config.ts"]);
  assert.match(await p.read("niceeval.config.ts"), /export default defineConfig\(\{\}\);/);
  const list = await p.run(["list"]);
  assert.equal(list.code, 0, list.stderr);
  assert.equal(list.stdout, "Discovered 0 evals.\n");
});

Deno.test("niceeval init: a second run keeps every path exits 0", async () => {
  await using p = await tempProject(null);
  assert.equal((await p.run(["init"])).code, 0);
  await p.write("niceeval.config.ts", "// edited by hand\n");
  const r = await p.run(["init"]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.stdout.split("\n").slice(0, 3), [
    "kept evals (exists)",
    "kept experiments (exists)",
    "kept niceeval.config.ts (exists)",
  ]);
  assert.equal(await p.read("niceeval.config.ts"), "// edited by hand\n");
});

Deno.test("niceeval init: a path with the wrong type exits 2", async () => {
  await using p = await tempProject(null);
  await p.write("experiments", "not a directory\n");
  const r = await p.run(["init"]);
  assert.equal(r.code, 2);
  assert.equal(r.stdout, "");
  assert.equal(
    r.stderr,
    "error: experiments exists but is a file, not a directory [usage]\n" +
      "hint: move experiments out of the way, then run niceeval init again\n",
  );
  assert.deepEqual(await filesUnder(p.dir), ["experiments"]);
});

Deno.test("niceeval init: --example writes exactly the files of examples/keyless exits 0 (CMD-4)", async () => {
  await using p = await tempProject(null);
  const r = await p.run(["init", "--example"]);
  assert.equal(r.code, 0, r.stderr);
  const expected = await filesUnder(EXAMPLE);
  assert.deepEqual(await filesUnder(p.dir), expected);
  for (const file of expected) {
    const written = await Deno.readFile(join(p.dir, file));
    const source = await Deno.readFile(join(EXAMPLE, file));
    assert.deepEqual(written, source, `${file} differs from examples/keyless/${file}`);
    assert.ok(r.stdout.includes(`created ${file}\n`), file);
  }
  assert.match(await p.read("niceeval.config.ts"), /maxConcurrency: 4, timeoutMs: 60_000/);
  assert.ok(r.stdout.endsWith("next: niceeval exp\n"));
});

Deno.test("niceeval init: --example over an existing project keeps its files exits 0", async () => {
  await using p = await tempProject(null);
  await p.write("evals/greet/hello.eval.ts", "// mine\n");
  const r = await p.run(["init", "--example"]);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(r.stdout.includes("kept evals/greet/hello.eval.ts (exists)\n"));
  assert.ok(r.stdout.includes("created evals/math.eval.ts\n"));
  assert.equal(await p.read("evals/greet/hello.eval.ts"), "// mine\n");
});
