/**
 * issue 20: discovery loads every file through one module graph (docs/loader.md "One module
 * graph"), under both loaders: files still evaluate in discovery order, and a bad file among good
 * ones is reported by name, as a load of that file alone reports it (authoring.md §1.6).
 */
import assert from "node:assert/strict";
import { tempProject } from "../_helpers/cli.ts";

const CONFIG = 'import { defineConfig } from "niceeval";\nexport default defineConfig({});\n';
const LOADERS = ["native", "embedded"] as const;

/** An eval entry that says its name on stderr while it loads. */
function chattyEval(name: string, padding = 0): string {
  return [
    `import { defineEval } from "niceeval";`,
    `console.error("loading ${name}");`,
    `export const padding = ${JSON.stringify("x".repeat(padding))};`,
    `export default defineEval({ async test(t) { await t.send("hi"); } });`,
    ``,
  ].join("\n");
}

async function projectWith(files: Record<string, string>) {
  const p = await tempProject(null);
  await p.write("niceeval.config.ts", CONFIG);
  for (const [path, text] of Object.entries(files)) await p.write(path, text);
  return p;
}

const names = Array.from({ length: 24 }, (_, i) => `e${String(i).padStart(2, "0")}`);

for (const loader of LOADERS) {
  Deno.test(`issue 20: niceeval list (${loader}) loads every eval in discovery order exits 0`, async () => {
    // A large file in the middle spreads the embedded loader's code over several modules.
    await using p = await projectWith(Object.fromEntries(
      names.map((name, i) => [`evals/${name}.eval.ts`, chattyEval(name, i === 10 ? 40_000 : 0)]),
    ));
    const r = await p.run(["list"], { env: { NICEEVAL_LOADER: loader } });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const loaded = r.stderr.split("\n").filter((line) => line.startsWith("loading "));
    assert.deepEqual(loaded, names.map((name) => `loading ${name}`));
    for (const name of names) assert.ok(r.stdout.includes(`  ${name}\n`), r.stdout);
  });

  Deno.test(`issue 20: niceeval exp --dry (${loader}) names exactly the bad files among good ones exits 2`, async () => {
    await using p = await projectWith({
      ...Object.fromEntries(
        names.map((name, i) => [`evals/${name}.eval.ts`, chattyEval(name, i === 3 ? 40_000 : 0)]),
      ),
      "evals/e07.eval.ts": 'console.error("loading e07");\n\nthrow new Error("e07 is broken");\n',
      "evals/e15.eval.ts": "export default {;\n",
      "experiments/base.ts": [
        `import { defineExperiment } from "niceeval";`,
        `import { scriptedAgent } from "niceeval/adapter";`,
        `export default defineExperiment({ agent: scriptedAgent({ name: "a", script: [] }) });`,
        ``,
      ].join("\n"),
    });
    const r = await p.run(["exp", "--dry"], { env: { NICEEVAL_LOADER: loader } });
    assert.equal(r.code, 2, r.stdout + r.stderr);
    const errors = r.stderr.split("\n").filter((line) => line.startsWith("error: "));
    assert.equal(errors.length, 2, r.stderr);
    assert.match(
      errors[0]!,
      /^error: evals\/e07\.eval\.ts: cannot load: e07 is broken \(at evals\/e07\.eval\.ts:3:7\) \[discovery\.import-failed\]$/,
    );
    assert.match(
      errors[1]!,
      /^error: evals\/e15\.eval\.ts: cannot load: .*evals\/e15\.eval\.ts:1:\d+/,
    );
    // Every other file loaded, each once, in discovery order.
    const loaded = r.stderr.split("\n").filter((line) => line.startsWith("loading "));
    assert.deepEqual(loaded, names.filter((n) => n !== "e15").map((name) => `loading ${name}`));
  });
}
