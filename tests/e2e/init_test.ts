/** `niceeval init` on the real CLI (cli.md CMD-3, CMD-4). */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { VERSION } from "../../src/_shared/mod.ts";
import { REPO, tempProject } from "../_helpers/cli.ts";

const EXAMPLE = join(REPO, "examples", "keyless");
/** This clone's directory, as the `links` entry of a project's deno.json names it. */
const CLONE = REPO.replace(/\/$/, "");
/** The import map `init` writes when it runs from this clone. */
const CLONE_IMPORTS = {
  "niceeval": `jsr:@niceeval/cli@^${VERSION}`,
  "niceeval/expect": `jsr:@niceeval/cli@^${VERSION}/expect`,
  "niceeval/adapter": `jsr:@niceeval/cli@^${VERSION}/adapter`,
  "niceeval/sandbox": `jsr:@niceeval/cli@^${VERSION}/sandbox`,
};

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
  assert.deepEqual(lines.slice(0, 5), [
    "created evals",
    "created experiments",
    "created niceeval.config.ts",
    "created deno.json",
    "created .gitignore",
  ]);
  assert.match(lines[5]!, /^next: /);
  assert.equal(lines.length, 6);
  assert.deepEqual(await filesUnder(p.dir), [".gitignore", "deno.json", "niceeval.config.ts"]);
  assert.deepEqual(JSON.parse(await p.read("deno.json")), {
    imports: CLONE_IMPORTS,
    links: [CLONE],
  });
  assert.equal(await p.read(".gitignore"), ".niceeval/\n");
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
  assert.deepEqual(await filesUnder(p.dir), [".gitignore", "deno.json", ...expected].sort());
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

Deno.test("niceeval init: an existing deno.json and .gitignore are merged, not replaced exits 0", async () => {
  await using p = await tempProject(null);
  await p.write("deno.json", '{ "imports": { "zod": "npm:zod@^4" } }\n');
  await p.write(".gitignore", "dist/\n");
  const r = await p.run(["init"]);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(r.stdout.includes("updated deno.json\nupdated .gitignore\n"), r.stdout);
  assert.deepEqual(JSON.parse(await p.read("deno.json")), {
    imports: { "zod": "npm:zod@^4", ...CLONE_IMPORTS },
    links: [CLONE],
  });
  assert.equal(await p.read(".gitignore"), "dist/\n.niceeval/\n");
  const again = await p.run(["init"]);
  assert.ok(again.stdout.includes("kept deno.json (exists)\nkept .gitignore (exists)\n"));
});

Deno.test("niceeval init: a deno.jsonc with comments is kept and the lines to add are printed exits 0", async () => {
  await using p = await tempProject(null);
  const mine = "{\n  // tasks come later\n}\n";
  await p.write("deno.jsonc", mine);
  const r = await p.run(["init"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(await p.read("deno.jsonc"), mine);
  assert.ok(
    r.stdout.includes(
      "kept deno.jsonc (not plain JSON); add these lines to it:\n" +
        '  "imports": {\n' +
        `    "niceeval": "jsr:@niceeval/cli@^${VERSION}",\n`,
    ),
    r.stdout,
  );
  assert.ok(r.stdout.includes(`  "links": [\n    "${CLONE}"\n  ],\n`), r.stdout);
  assert.deepEqual(await filesUnder(p.dir), [".gitignore", "deno.jsonc", "niceeval.config.ts"]);
});
