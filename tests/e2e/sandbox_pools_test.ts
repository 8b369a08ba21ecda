/**
 * Scenarios S50 and S55 of scenarios.md on the real CLI with the `local` provider: the parts that
 * do not depend on docker (one physical sandbox per group lane or pool, the ledger reset between
 * Attempts, pools stopped before the Experiment's teardown). The docker variants are in
 * `tests/scheduler/docker_pools_test.ts`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ndjson, tempProject } from "../_helpers/cli.ts";

interface PoolsBed extends AsyncDisposable {
  readonly env: Record<string, string>;
  readonly tmpDir: string;
  /** Lines of a report the fixture wrote, `[]` when it wrote none. */
  report(name: string): Promise<string[]>;
  /** Local sandbox roots left in the private temp directory. */
  roots(): Promise<string[]>;
}

async function poolsBed(): Promise<PoolsBed> {
  const tmpDir = await Deno.realPath(await Deno.makeTempDir({ prefix: "niceeval-e2e-pools-" }));
  const reportDir = await Deno.makeTempDir({ prefix: "niceeval-e2e-report-" });
  return {
    env: { TMPDIR: tmpDir, POOLS_REPORT_DIR: reportDir, CI: "1" },
    tmpDir,
    report: async (name) => {
      const text = await Deno.readTextFile(join(reportDir, name)).catch(() => "");
      return text.split("\n").filter((l) => l !== "");
    },
    roots: async () =>
      (await Array.fromAsync(Deno.readDir(tmpDir))).map((e) => e.name)
        .filter((n) => n.startsWith("niceeval-local-")),
    async [Symbol.asyncDispose]() {
      await Deno.remove(tmpDir, { recursive: true });
      await Deno.remove(reportDir, { recursive: true });
    },
  };
}

function verdicts(stdout: string): string[] {
  return ndjson(stdout).filter((e) => e.type === "attempt_end").map((e) =>
    `${e.evalId} ${e.verdict}`
  );
}

Deno.test("S50 niceeval exp: a local two-member group shares one sandbox and member 2 does not see member 1's file exits 0", async () => {
  await using p = await tempProject("sandbox_pools_project");
  await using bed = await poolsBed();
  const r = await p.run(["exp", "group", "--json"], { env: bed.env });
  assert.equal(r.code, 0, r.stderr + r.stdout);
  assert.deepEqual(verdicts(r.stdout), ["group/a-writes passed", "group/b-reads passed"]);
  const ids = (await bed.report("group-ids")).map((l) => l.split(" "));
  assert.deepEqual(ids.map(([evalId]) => evalId), ["group/a-writes", "group/b-reads"]);
  const sandboxes = new Set(ids.map(([, id]) => id));
  assert.equal(sandboxes.size, 1, `one sandbox serves both members: ${[...sandboxes]}`);
  assert.match([...sandboxes][0]!, /^niceeval-local-/);
  assert.deepEqual(await bed.roots(), []);
});

Deno.test("S55 niceeval exp: local reuse with maxConcurrency 1 serves 3 Attempts from one sandbox and removes it before teardown exits 0", async () => {
  await using p = await tempProject("sandbox_pools_project");
  await using bed = await poolsBed();
  const r = await p.run(["exp", "reuse", "--json"], { env: bed.env });
  assert.equal(r.code, 0, r.stderr + r.stdout);
  assert.deepEqual(verdicts(r.stdout).sort(), [
    "pool/a passed",
    "pool/b passed",
    "pool/c passed",
  ]);
  const ids = (await bed.report("pool-ids")).map((l) => l.split(" ")[1]);
  assert.equal(ids.length, 3);
  assert.equal(new Set(ids).size, 1, `one sandbox is created: ${ids}`);
  // The pool was stopped (its root removed) before the Experiment's teardown started.
  assert.deepEqual(await bed.report("teardown-roots"), ["[]"]);
  assert.deepEqual(await bed.roots(), []);
});
