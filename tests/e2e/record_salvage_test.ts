/**
 * Salvage of Runs left by a killed `niceeval exp` on the real CLI (docs/record.md): `exp --dry`
 * reports what the next run would salvage and writes nothing, `clean` salvages (the Run is
 * published `crashed` with its finished Attempts), `clean --discard` removes instead, and the next
 * `exp` salvages before planning and carries the kept Attempts. `kill_project` blocks its third
 * Attempt while the test holds the barrier file `$KILL_DIR/hold-c`, so each kill lands after
 * exactly two Attempts settled.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ndjson, type TempProject, tempProject } from "../_helpers/cli.ts";
import { readRunFiles, runIdsOf } from "../_helpers/record_files.ts";
import { pollUntil, tree } from "./_coordination.ts";

type Json = Record<string, unknown>;

const SETTLED = ["steps/0000", "steps/0001"];

/** The Record root of the project (`exp --dry --json` names it). */
async function recordRootOf(p: TempProject): Promise<string> {
  const r = await p.run(["exp", "--dry", "--json"]);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout).recordRoot;
}

/**
 * Starts `exp --rerun all`, waits until its first two Attempts' records are in its log and the
 * third Attempt is held, SIGKILLs it and returns the killed RunId.
 */
async function killAfterTwo(p: TempProject, root: string, killDir: string): Promise<string> {
  const before = await runIdsOf(root);
  const hold = join(killDir, "hold-c");
  await Deno.writeTextFile(hold, "");
  await Deno.remove(join(killDir, "log")).catch(() => undefined);
  const child = p.spawn(["exp", "--rerun", "all", "--json"], { env: { KILL_DIR: killDir } });
  const output = child.output();
  let runId = "";
  await pollUntil(
    async () => {
      runId = (await runIdsOf(root)).find((id) => !before.includes(id)) ?? "";
      if (runId === "") return false;
      const log = await Deno.readTextFile(join(killDir, "log")).catch(() => "");
      if (!log.includes("c-held")) return false;
      const files = await readRunFiles(root, runId).catch(() => undefined);
      return SETTLED.every((evalId) =>
        [...(files?.members.values() ?? [])].some((m) =>
          m.evalId === evalId && m.action === "executed"
        )
      );
    },
    "two Attempts settled and the third held",
    { stepMs: 5 },
  );
  child.kill("SIGKILL");
  const status = await output;
  await Deno.remove(hold);
  assert.equal(status.signal, "SIGKILL");
  assert.equal((await readRunFiles(root, runId)).published, false);
  return runId;
}

/** The AttemptIds of the killed Run's settled Attempts, by EvalId. */
async function settledOf(root: string, runId: string): Promise<Map<string, string>> {
  const files = await readRunFiles(root, runId);
  return new Map([...files.attempts.values()].map((a) => [
    a.attempt.evalId as string,
    a.attempt.attemptId as string,
  ]));
}

Deno.test("niceeval exp --dry, clean and exp: a Run killed after two Attempts settled is salvaged as crashed and its Attempts carried exits 0", async (t) => {
  await using p = await tempProject("kill_project");
  const killDir = await Deno.makeTempDir({ prefix: "niceeval-salvage-" });
  try {
    const root = await recordRootOf(p);
    const pending =
      `1 run(s) left unpublished by a killed process in ${root} would be salvaged by the next run: 2 finished Attempt(s) kept, 1 slot(s) interrupted`;
    const first = await killAfterTwo(p, root, killDir);
    const kept = await settledOf(root, first);
    assert.deepEqual([...kept.keys()].sort(), SETTLED);

    await t.step("exp --dry: record-salvage-pending with the counts, nothing written", async () => {
      const before = await tree(root);
      const log = await Deno.readFile(join(root, "runs", first, "records.log"));
      const json = await p.run(["exp", "--dry", "--json"]);
      assert.equal(json.code, 0, json.stderr);
      const plan = JSON.parse(json.stdout);
      assert.deepEqual(
        (plan.problems as Json[]).map((x) => [x.code, x.message]),
        [
          ["record-salvage-pending", pending],
          [
            "record-unpublished-runs",
            `1 unpublished run(s) in ${root} ignored (in progress, or left by a killed process; niceeval clean removes leftovers)`,
          ],
        ],
      );
      assert.deepEqual([plan.reused, plan.toRun], [0, 3]);
      const human = await p.run(["exp", "--dry"]);
      assert.equal(human.code, 0, human.stderr);
      assert.ok(human.stderr.split("\n").includes(`! ${pending}`), human.stderr);
      assert.deepEqual(await tree(root), before, "exp --dry wrote to the Record");
      assert.deepEqual(await Deno.readFile(join(root, "runs", first, "records.log")), log);
    });

    await t.step("clean: salvages the Run, published crashed with its two Attempts", async () => {
      const clean = await p.run(["clean"]);
      assert.equal(clean.code, 0, clean.stderr);
      assert.equal(
        clean.stdout,
        `salvaged 1 run(s) left by a killed process in ${root}: 2 finished Attempt(s) kept, published as crashed\n`,
      );
      const files = await readRunFiles(root, first);
      assert.deepEqual([files.published, files.end?.completion, files.tornBytes], [
        true,
        "crashed",
        0,
      ]);
      const show = await p.run(["show", "--run", first, "--json"]);
      assert.equal(show.code, 0, show.stderr);
      const rows = JSON.parse(show.stdout).rows as Json[];
      assert.deepEqual(
        rows.map((r) => [r.evalId, r.state, (r.attempt as Json | null)?.attemptId ?? null]),
        [
          ["steps/0000", "executed", kept.get("steps/0000")],
          ["steps/0001", "executed", kept.get("steps/0001")],
          ["steps/0002", "interrupted", null],
        ],
      );
      const again = await p.run(["show", "--json"]);
      assert.deepEqual([again.code, JSON.parse(again.stdout).problems], [0, []]);
    });

    await t.step("clean --discard: removes a killed Run instead of salvaging it", async () => {
      const second = await killAfterTwo(p, root, killDir);
      const clean = await p.run(["clean", "--discard"]);
      assert.equal(clean.code, 0, clean.stderr);
      assert.equal(clean.stdout, `removed 1 unpublished run(s) from ${root}\n`);
      assert.ok(!(await runIdsOf(root)).includes(second));
      assert.deepEqual(await runIdsOf(root), [first]);
    });

    await t.step(
      "exp: salvages a killed Run before planning and carries its Attempts",
      async () => {
        const third = await killAfterTwo(p, root, killDir);
        const carriedIds = await settledOf(root, third);
        const r = await p.run(["exp", "--json"]);
        assert.equal(r.code, 0, r.stdout + r.stderr);
        const events = ndjson(r.stdout);
        const salvaged = events.filter((e) => e.code === "record-salvaged");
        assert.deepEqual(salvaged.map((e) => [e.type, e.message]), [[
          "warning",
          `salvaged 1 run(s) left unpublished by a killed process in ${root}: 2 finished Attempt(s) kept, 1 slot(s) interrupted; published as crashed`,
        ]]);
        assert.ok(!events.some((e) => e.code === "record-unpublished-runs"));
        assert.deepEqual([events[0]!.reused, events[0]!.toRun], [2, 1]);
        assert.deepEqual(
          events.filter((e) => e.type === "attempt_start").map((e) => e.evalId),
          ["steps/0002"],
        );
        assert.equal((await readRunFiles(root, third)).end?.completion, "crashed");
        const runId = (events.at(-1)!.runIds as string[])[0]!;
        const show = await p.run(["show", "--run", runId, "--json"]);
        assert.equal(show.code, 0, show.stderr);
        const rows = JSON.parse(show.stdout).rows as Json[];
        const started = events.find((e) => e.type === "attempt_start")!;
        assert.deepEqual(
          rows.map((r) => [r.evalId, r.state, (r.attempt as Json).attemptId]),
          [
            ["steps/0000", "carried", carriedIds.get("steps/0000")],
            ["steps/0001", "carried", carriedIds.get("steps/0001")],
            ["steps/0002", "executed", started.attemptId],
          ],
        );
        const dry = await p.run(["exp", "--dry", "--json"]);
        assert.deepEqual(JSON.parse(dry.stdout).problems, []);
      },
    );
  } finally {
    await Deno.remove(killDir, { recursive: true });
  }
});
