/** PLAN-1 end to end: nothing starts before the complete plan exists. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempProject } from "../_helpers/cli.ts";

function experiment(name: string, extra = ""): string {
  return [
    `import { defineExperiment } from "niceeval";`,
    `import { scriptedAgent } from "niceeval/adapter";`,
    `export default defineExperiment({`,
    `  agent: scriptedAgent({ name: "${name}", script: [], fallback: { text: "ok" } }),`,
    `  async setup() { await Deno.writeTextFile("setup-${name}.txt", "ran"); },`,
    extra,
    `});`,
    ``,
  ].join("\n");
}

Deno.test("S30 niceeval exp: an invalid third experiment exits 2 before any setup", async () => {
  await using p = await tempProject(null);
  await p.write(
    "niceeval.config.ts",
    `import { defineConfig } from "niceeval";\nexport default defineConfig({});\n`,
  );
  await p.write(
    "evals/e.eval.ts",
    `import { defineEval } from "niceeval";\nexport default defineEval({ async test(t) { await t.send("hi"); } });\n`,
  );
  await p.write("experiments/a.ts", experiment("a"));
  await p.write("experiments/b.ts", experiment("b"));
  await p.write("experiments/c.ts", experiment("c", "  maxConcurrency: 0,"));
  const r = await p.run(["exp", "--json"]);
  assert.equal(r.code, 2, r.stderr);
  // issue 18.8: with --json the error is also one `error` line on stdout, and nothing else.
  assert.equal(r.stdout.split("\n").length, 2);
  assert.equal(JSON.parse(r.stdout).type, "error");
  assert.match(r.stderr, /maxConcurrency/);
  for (const name of ["a", "b", "c"]) {
    await assert.rejects(Deno.stat(join(p.dir, `setup-${name}.txt`)), Deno.errors.NotFound);
  }
});
