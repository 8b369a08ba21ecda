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

/** Every file of a project with its content, without niceeval's own `.niceeval/` state. */
async function projectTree(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(join(dir, prefix))) {
    const rel = prefix === "" ? e.name : `${prefix}/${e.name}`;
    if (rel === ".niceeval") continue;
    if (e.isDirectory) out.push(`${rel}/`, ...await projectTree(dir, rel));
    else out.push(`${rel}: ${await Deno.readTextFile(join(dir, rel))}`);
  }
  return out.sort();
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
    const checkout = await projectTree(p.dir);
    await t.step("--dry plans the local provider and leaves the stale root alone", async () => {
      const r = await p.run(["exp", "--dry"], { env });
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stdout,
        /3 attempts \(3 evals × 1 experiment\) · concurrency 1 \(from local default\)/,
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
    await t.step("the agent never touched the project's own files", async () => {
      assert.equal(await p.read("workspace/notes.md"), "# Notes\n");
      assert.equal(await p.read("evals/todo/files/todo.txt"), "- ship the example\n");
      assert.deepEqual(await projectTree(p.dir), checkout);
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

Deno.test("niceeval exp: host variables and .env values stay out of local sandboxes exits 0", async () => {
  await using p = await tempProject(EXAMPLE);
  const tmpDir = await Deno.realPath(await Deno.makeTempDir({ prefix: "niceeval-e2e-roots-" }));
  const hostSecret = "host-s3cret-4f1d";
  const dotenvSecret = "dotenv-s3cret-9a2c";
  try {
    await p.write(".env", `NICEEVAL_E2E_DOTENV_SECRET=${dotenvSecret}\n`);
    await p.write(
      "evals/env/isolated.eval.ts",
      [
        'import { defineEval } from "niceeval";',
        'import { commandSucceeded, excludes, satisfies } from "niceeval/expect";',
        "",
        "export default defineEval({",
        "  async test(t) {",
        '    const turn = await t.send("write seen.txt checked");',
        "    await turn.succeeded().orStop();",
        '    const env = await t.sandbox.runCommand("env");',
        '    t.check(env, commandSucceeded()).label("env ran");',
        // A predicate keeps the values out of the recorded expectations.
        "    const secrets = [",
        `      ${JSON.stringify(hostSecret)},`,
        `      ${JSON.stringify(dotenvSecret)},`,
        "    ];",
        '    t.check(env.stdout, satisfies("no secret value", (out: string) =>',
        "      secrets.every((s) => !out.includes(s))",
        '    )).label("no secret value");',
        '    t.check(env.stdout, excludes("NICEEVAL_E2E_")).label("no host variable names");',
        "  },",
        "});",
        "",
      ].join("\n"),
    );
    const r = await p.run(["exp", "local", "env/isolated", "--json"], {
      env: { TMPDIR: tmpDir, CI: "1", NICEEVAL_E2E_HOST_SECRET: hostSecret },
    });
    assert.equal(r.code, 0, r.stderr + r.stdout);
    const end = ndjson(r.stdout).find((e) => e.type === "attempt_end")!;
    assert.deepEqual([end.evalId, end.verdict], ["env/isolated", "passed"]);
    // Nothing niceeval persisted or printed carries the values either.
    for (const text of [r.stdout, r.stderr, ...await recordTexts(join(p.dir, ".niceeval"))]) {
      assert.equal(text.includes(hostSecret), false);
      assert.equal(text.includes(dotenvSecret), false);
    }
    assert.deepEqual(await names(tmpDir), []);
  } finally {
    await Deno.remove(tmpDir, { recursive: true });
  }
});

async function recordTexts(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    const path = join(dir, e.name);
    if (e.isDirectory) out.push(...await recordTexts(path));
    else if (e.isFile) out.push(await Deno.readTextFile(path));
  }
  return out;
}
