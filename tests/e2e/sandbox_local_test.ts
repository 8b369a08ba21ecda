/**
 * The `examples/sandbox-local` project on the real CLI: a `commandAgent` edits files in private
 * local sandboxes and evals assert on them through `t.sandbox` (sandboxes.md §3.1, §8.1; rule 97).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ndjson, REPO, tempProject } from "../_helpers/cli.ts";

const EXAMPLE = join(REPO, "examples", "sandbox-local");
async function names(dir: string): Promise<string[]> {
  return (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name).sort();
}

async function deadPid(): Promise<number> {
  const child = new Deno.Command("true").spawn();
  await child.status;
  return child.pid;
}

Deno.test("niceeval exp: the sandbox-local example edits files in its sandboxes exits 0", async (t) => {
  await using p = await tempProject(EXAMPLE);
  const tmpDir = await Deno.realPath(await Deno.makeTempDir({ prefix: "niceeval-e2e-roots-" }));
  const env = { TMPDIR: tmpDir, CI: "1" };
  try {
    // A root left by a killed run on this host: the next `exp` removes it (rule 97).
    const stale = `niceeval-local-${await deadPid()}-stale`;
    await Deno.mkdir(join(tmpDir, stale, "work"), { recursive: true });
    await Deno.writeTextFile(
      join(tmpDir, stale, "owner.json"),
      JSON.stringify({
        host: Deno.hostname(),
        pid: Number(stale.split("-")[2]),
        processStart: "unknown",
        runId: "old-run",
        provisionToken: "e".repeat(32),
      }),
    );
    await t.step("--dry plans the local provider and leaves the stale root alone", async () => {
      const r = await p.run(["exp", "--dry"], { env });
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stdout,
        /3 attempts · 3 evals × 1 config · concurrency 1 \(from local default\)/,
      );
      assert.deepEqual(await names(tmpDir), [stale]);
    });
    await t.step("exp passes every eval, sweeps the orphan and leaves no sandbox", async () => {
      const r = await p.run(["exp", "local", "--json"], { env });
      assert.equal(r.code, 0, r.stderr);
      const events = ndjson(r.stdout);
      const start = events.find((e) => e.type === "start")!;
      assert.deepEqual([start.concurrency, start.concurrencyProvider], [1, "local"]);
      const ends = events.filter((e) => e.type === "attempt_end");
      assert.deepEqual(
        ends.map((e) => [e.evalId, e.verdict]).sort(),
        [["notes/append", "passed"], ["notes/create", "passed"], ["todo/done", "passed"]],
      );
      assert.deepEqual(await names(tmpDir), []);
    });
    await t.step("the agent never touched the project's own workspace", async () => {
      assert.equal(await p.read("workspace/notes.md"), "# Notes\n");
      assert.deepEqual(await names(join(p.dir, "workspace")), ["notes.md", "tools"]);
    });
    await t.step("a failing eval is reported with its sandbox evidence exits 1", async () => {
      await p.write(
        "evals/notes/create.eval.ts",
        (await p.read("evals/notes/create.eval.ts")).replace(
          "hello from the sandbox\\n",
          "something else\\n",
        ),
      );
      const r = await p.run(["exp", "local", "notes/create", "--json"], { env });
      assert.equal(r.code, 1, r.stderr);
      const end = ndjson(r.stdout).find((e) => e.type === "attempt_end")!;
      assert.equal(end.verdict, "failed");
      assert.deepEqual(await names(tmpDir), []);
    });
  } finally {
    await Deno.remove(tmpDir, { recursive: true });
  }
});
