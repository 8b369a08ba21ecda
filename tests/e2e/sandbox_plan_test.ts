/**
 * Planning with sandbox providers on the real CLI (CAP-1 … CAP-3, sandboxes.md rules 4, 50):
 * the provider default that sets G, and pairing conflicts reported together before anything runs.
 */
import assert from "node:assert/strict";
import { ndjson, tempProject } from "../_helpers/cli.ts";

function concurrencyLine(stdout: string): string {
  return stdout.split("\n").find((l) => /^ {2}\d+ attempts? /.test(l)) ?? stdout;
}

Deno.test("niceeval exp --dry: G comes from the planned providers' defaults exits 0", async (t) => {
  await using p = await tempProject("sandbox_custom_project");
  await t.step("a custom provider's recommendedConcurrency", async () => {
    const r = await p.run(["exp", "boxed", "--dry"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(concurrencyLine(r.stdout), /concurrency 3 \(from slowbox default\)$/);
  });
  await t.step("an exclusive custom provider alone forces 1", async () => {
    const r = await p.run(["exp", "solo", "--dry", "--json"]);
    assert.equal(r.code, 0, r.stderr);
    const doc = ndjson(r.stdout)[0]!;
    assert.deepEqual(
      [doc.concurrency, doc.concurrencySource, doc.concurrencyProvider],
      [1, "provider-default", "solo"],
    );
  });
  await t.step("issue 18.3: beside others the exclusive provider does not count", async () => {
    const r = await p.run(["exp", "--dry", "--json"]);
    assert.equal(r.code, 0, r.stderr);
    const doc = ndjson(r.stdout)[0]!;
    assert.deepEqual(
      [doc.concurrency, doc.concurrencySource, doc.concurrencyProvider],
      [3, "provider-default", "slowbox"],
    );
  });
  await t.step("direct agents only: the default of 10", async () => {
    const r = await p.run(["exp", "plain", "--dry"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(concurrencyLine(r.stdout), /concurrency 10 \(from default\)$/);
  });
  await t.step("--max-concurrency still wins", async () => {
    const r = await p.run(["exp", "boxed", "--dry", "--max-concurrency", "7"]);
    assert.match(concurrencyLine(r.stdout), /concurrency 7 \(from flag\)$/);
  });
});

Deno.test("niceeval exp --dry: PLAN names a machine sandbox budget below G (MSB-7) exits 0", async () => {
  await using p = await tempProject("sandbox_custom_project");
  await p.write(
    "niceeval.config.ts",
    'import { defineConfig } from "niceeval";\nexport default defineConfig({ maxSandboxes: { slowbox: 2 } });\n',
  );
  const below = await p.run(["exp", "boxed", "--dry", "--max-concurrency", "5"]);
  assert.equal(below.code, 0, below.stderr);
  assert.match(
    concurrencyLine(below.stdout),
    /concurrency 5 \(from flag\) · slowbox sandboxes ≤2 on this host$/,
  );
  const notBelow = await p.run(["exp", "boxed", "--dry", "--max-concurrency", "2"]);
  assert.match(concurrencyLine(notBelow.stdout), /concurrency 2 \(from flag\)$/);
});

Deno.test("niceeval exp: every sandbox pairing conflict is reported before anything runs exits 2", async () => {
  await using p = await tempProject("sandbox_custom_project");
  await p.write(
    "evals/boxed.eval.ts",
    `import { defineEval } from "niceeval";
import { sandboxLayer } from "niceeval/sandbox";
export default defineEval({ sandbox: sandboxLayer({ fixture: "./missing" }), test() {} });
`,
  );
  const r = await p.run(["exp"]);
  assert.equal(r.code, 2, r.stdout);
  const lines = r.stderr.trimEnd().split("\n");
  assert.match(
    lines[0]!,
    /^error: experiments\/plain\.ts: a direct agent cannot use a sandbox .*\[sandbox-direct-agent\]$/,
  );
  for (const experiment of ["boxed", "solo"]) {
    const missing = new RegExp(
      `^error: experiments/${experiment}\\.ts: Cannot use fixture "\\./missing".*\\[sandbox-config-invalid\\]$`,
    );
    assert.ok(lines.some((l) => missing.test(l)), `${experiment}: ${r.stderr}`);
  }
  assert.equal(lines.at(-1), "hint: fix the experiments and evals listed above");
  // Nothing ran: no machine slot was taken and no Run was published.
  const state = (await Array.fromAsync(Deno.readDir(p.stateDir))).map((e) => e.name);
  assert.deepEqual(state, ["roots"]);
  const runs = await Array.fromAsync(Deno.readDir(`${p.dir}/.niceeval/record/runs`)).catch(
    () => [],
  );
  assert.deepEqual(runs, []);
});
