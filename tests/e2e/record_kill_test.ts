/**
 * SIGKILL at several points of a real `niceeval exp` (INT-5, REC-9, REC-10; docs/record.md
 * salvage): during experiment setup, while the first Attempt runs (nothing of it in the log yet),
 * after two Attempts settled, and while the Run publishes. `kill_project` blocks its setup and each
 * of its three Attempts while the test holds a barrier file in `$KILL_DIR`, so each kill lands at a
 * known step of the write protocol. After each kill: earlier Runs are unchanged, `show` and
 * `exp --dry` work, and the next `exp` (or `clean`) publishes the killed Run as `crashed` with its
 * settled Attempts, which the next run carries. No published Run is ever unreadable.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ndjson, type TempProject, tempProject } from "../_helpers/cli.ts";
import { readRunFiles, type RunFiles, runIdsOf } from "../_helpers/record_files.ts";
import { leftoverTemps, tempLines } from "../_helpers/leftover_temps.ts";
import { pollUntil } from "./_coordination.ts";

type Json = Record<string, unknown>;

const UNPUBLISHED_TAIL =
  "ignored (in progress, or left by a killed process; niceeval clean removes leftovers)";

/** The Record of the project as its files say: Run directories and which are published. */
class RecordFiles {
  readonly root: string;
  constructor(root: string) {
    this.root = root;
  }

  runIds(): Promise<string[]> {
    return runIdsOf(this.root);
  }

  async published(runId: string): Promise<boolean> {
    try {
      const info = await Deno.lstat(join(this.root, "runs", runId, "complete"));
      return info.isFile && info.size === 0;
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return false;
      throw error;
    }
  }

  async publishedIds(): Promise<string[]> {
    const out: string[] = [];
    for (const id of await this.runIds()) if (await this.published(id)) out.push(id);
    return out;
  }

  /** A Run's header and log, or undefined while its header does not exist yet. */
  async files(runId: string): Promise<RunFiles | undefined> {
    try {
      return await readRunFiles(this.root, runId);
    } catch {
      return undefined;
    }
  }

  /** The latest published Run by (startedAt, runId): the carry source (CARRY-1). */
  async latestPublished(): Promise<string> {
    const runs: [string, string][] = [];
    for (const id of await this.publishedIds()) {
      runs.push([(await this.files(id))!.header.startedAt as string, id]);
    }
    runs.sort((a, b) => a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : 1);
    return runs.at(-1)![1];
  }
}

/** `show --run <every published Run> --json` rows, which must be readable. */
async function snapshot(p: TempProject, ids: readonly string[]): Promise<Json[]> {
  const r = await p.run(["show", ...ids.flatMap((id) => ["--run", id]), "--json"]);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout).rows;
}

/** Names of the logged barrier marks. */
async function marks(dir: string): Promise<string[]> {
  try {
    return (await Deno.readTextFile(join(dir, "log"))).split("\n").filter(Boolean);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
}

interface KillPoint {
  readonly name: string;
  /** Barriers held while the killed run starts. */
  readonly holds: readonly string[];
  /** Resolves once the killed run (`runId`) reached the point. */
  reached(record: RecordFiles, runId: string, killDir: string): Promise<boolean>;
  /** Settled Attempts the killed Run holds, which salvage keeps. */
  readonly kept: number;
  /** Whether the killed Run may have been published before the kill landed. */
  readonly mayPublish: boolean;
  /** What publishes the killed Run afterwards: the next `exp`, or `clean`. */
  readonly salvagedBy: "exp" | "clean";
}

const STEP_SLOTS = ["steps/0000", "steps/0001", "steps/0002"];

const executedMembers = (files: RunFiles | undefined) =>
  [...(files?.members.values() ?? [])].filter((m) => m.action === "executed")
    .map((m) => m.evalId as string);

const POINTS: readonly KillPoint[] = [
  {
    name: "during experiment setup, with only the run.json header written",
    holds: ["setup"],
    reached: async (record, runId, dir) => {
      if (!(await marks(dir)).includes("setup-held")) return false;
      const files = await record.files(runId);
      return files !== undefined && files.records.length === 0;
    },
    kept: 0,
    mayPublish: false,
    salvagedBy: "exp",
  },
  {
    // The v2 counterpart of a reserved attempt.json: nothing of a running Attempt is written.
    name: "while the first Attempt runs, with no record of it in the log",
    holds: ["a"],
    reached: async (record, runId, dir) =>
      (await marks(dir)).includes("a-held") && (await record.files(runId)) !== undefined,
    kept: 0,
    mayPublish: false,
    salvagedBy: "clean",
  },
  {
    name: "after two Attempts settled, the third running",
    holds: ["c"],
    reached: async (record, runId, dir) => {
      if (!(await marks(dir)).includes("c-held")) return false;
      const executed = executedMembers(await record.files(runId));
      return STEP_SLOTS.slice(0, 2).every((id) => executed.includes(id));
    },
    kept: 2,
    mayPublish: false,
    salvagedBy: "exp",
  },
  {
    name: "as soon as the end record is in the log (publishing)",
    holds: [],
    reached: async (record, runId) => (await record.files(runId))?.end !== undefined,
    kept: 3,
    mayPublish: true,
    salvagedBy: "clean",
  },
];

Deno.test("niceeval exp: SIGKILL at several points leaves every published Run readable; the next run or clean salvages the killed Run as crashed and carries its settled Attempts exits 0", async (t) => {
  await using p = await tempProject("kill_project");
  const killDir = await Deno.makeTempDir({ prefix: "niceeval-kill-" });
  const env = { KILL_DIR: killDir };
  try {
    const first = await p.run(["exp", "--json"], { env });
    assert.equal(first.code, 0, first.stdout + first.stderr);
    const record = new RecordFiles(ndjson(first.stdout)[0]!.recordRoot as string);
    const root = record.root;
    for (const point of POINTS) {
      await t.step(`killed ${point.name}`, async () => {
        const before = await record.publishedIds();
        const rows = await snapshot(p, before);
        for (const hold of point.holds) await Deno.writeTextFile(join(killDir, `hold-${hold}`), "");
        await Deno.remove(join(killDir, "log")).catch(() => undefined);
        const child = p.spawn(["exp", "--rerun", "all", "--json"], { env });
        const output = child.output();
        let runId = "";
        await pollUntil(
          async () => {
            runId = (await record.runIds()).find((id) => !before.includes(id)) ?? "";
            return runId !== "" && await point.reached(record, runId, killDir);
          },
          point.name,
          { stepMs: 5 },
        );
        try {
          child.kill("SIGKILL");
        } catch {
          // It already exited: only the publishing point allows that.
        }
        const status = await output;
        for (const hold of point.holds) await Deno.remove(join(killDir, `hold-${hold}`));

        const killed = (await record.files(runId))!;
        const publishedNow = killed.published;
        if (!point.mayPublish) {
          assert.equal(status.signal, "SIGKILL");
          assert.equal(publishedNow, false, "the killed Run stays unpublished");
        }
        const settled = new Map(
          [...killed.attempts.values()].map((a) => [a.attempt.evalId, a.attempt.attemptId]),
        );
        assert.equal(settled.size, point.kept, "settled Attempts in the killed Run's log");
        assert.deepEqual(await snapshot(p, before), rows, "earlier Runs are unchanged");

        const show = await p.run(["show", "--json"]);
        assert.equal(show.code, 0, show.stderr);
        const problems = JSON.parse(show.stdout).problems as Json[];
        assert.deepEqual(
          problems.map((x) => [x.code, x.message]),
          publishedNow
            ? []
            : [["record-unpublished-runs", `1 unpublished run(s) in ${root} ${UNPUBLISHED_TAIL}`]],
        );
        const pending = publishedNow ? [] : [
          `1 run(s) left unpublished by a killed process in ${root} would be salvaged by the next run: ${point.kept} finished Attempt(s) kept, ${
            3 - point.kept
          } slot(s) interrupted`,
        ];
        const dry = await p.run(["exp", "--dry", "--json"]);
        assert.equal(dry.code, 0, dry.stderr);
        const plan = JSON.parse(dry.stdout);
        assert.deepEqual(
          (plan.problems as Json[]).filter((x) => x.code === "record-salvage-pending")
            .map((x) => x.message),
          pending,
        );
        assert.equal(plan.reused, 3);
        const latest = await record.latestPublished();
        for (const row of plan.rows as Json[]) assert.equal(row.sourceRunId, latest);
        assert.equal((await record.files(runId))!.published, publishedNow, "--dry wrote nothing");

        // Salvage: the next exp or clean publishes the killed Run as crashed.
        const salvaged = (who: string) =>
          `${point.kept} finished Attempt(s) kept, ${
            who === "exp" ? `${3 - point.kept} slot(s) interrupted; ` : ""
          }published as crashed`;
        if (point.salvagedBy === "clean") {
          const temps = tempLines(await leftoverTemps(root), root); // issue 18.11
          const clean = await p.run(["clean"]);
          assert.equal(clean.code, 0, clean.stderr);
          const lines = publishedNow ? temps : [
            `salvaged 1 run(s) left by a killed process in ${root}: ${salvaged("clean")}`,
            ...temps,
          ];
          assert.equal(clean.stdout, `${lines.join("\n") || `nothing to clean in ${root}`}\n`);
        }
        const rerun = await p.run(["exp", "--json"], { env });
        assert.equal(rerun.code, 0, rerun.stdout + rerun.stderr);
        const next = ndjson(rerun.stdout);
        assert.deepEqual(
          next.filter((e) => e.code === "record-salvaged").map((e) => e.message),
          publishedNow || point.salvagedBy === "clean" ? [] : [
            `salvaged 1 run(s) left unpublished by a killed process in ${root}: ${salvaged("exp")}`,
          ],
        );
        const after = (await record.files(runId))!;
        assert.ok(after.published, "the killed Run is published");
        assert.equal(after.tornBytes, 0);
        // An end record written before the kill stays: salvage only adds the marker.
        assert.equal(after.end?.completion, point.mayPublish ? "completed" : "crashed");
        const own = await snapshot(p, [runId]);
        assert.deepEqual(
          own.map((r) => r.state),
          STEP_SLOTS.map((id) => settled.has(id) ? "executed" : "interrupted"),
        );

        // The next run carried the killed Run's settled Attempts and ran the rest.
        assert.deepEqual([next[0]!.reused, next[0]!.toRun], [point.kept, 3 - point.kept]);
        const nextRun = (next.at(-1)!.runIds as string[])[0]!;
        const nextRows = await snapshot(p, [nextRun]);
        for (const [i, row] of nextRows.entries()) {
          const carried = settled.get(STEP_SLOTS[i]!);
          assert.equal(row.state, carried ? "carried" : "executed", STEP_SLOTS[i]);
          if (carried) assert.equal((row.attempt as Json).attemptId, carried);
        }
        assert.deepEqual(await record.publishedIds(), await record.runIds(), "none unpublished");
        await snapshot(p, await record.publishedIds());
      });
    }
    await t.step(
      "afterwards: the next run carries every slot; nothing is left to clean",
      async () => {
        const latest = await record.latestPublished();
        const latestRows = await snapshot(p, [latest]);
        const rerun = await p.run(["exp", "--json"], { env });
        assert.equal(rerun.code, 0, rerun.stderr);
        const events = ndjson(rerun.stdout);
        assert.ok(!events.some((e) => e.type === "attempt_start"));
        assert.deepEqual([events[0]!.reused, events[0]!.toRun], [3, 0]);
        const runId = (events.at(-1)!.runIds as string[])[0]!;
        const rows = await snapshot(p, [runId]);
        assert.deepEqual(
          rows.map((r) => (r.attempt as Json).attemptId),
          latestRows.map((r) => (r.attempt as Json).attemptId),
        );
        const clean = await p.run(["clean"]);
        assert.equal(clean.code, 0, clean.stderr);
        assert.equal(clean.stdout, `nothing to clean in ${root}\n`);
        const show = await p.run(["show", "--json"]);
        assert.deepEqual(JSON.parse(show.stdout).problems, []);
      },
    );
  } finally {
    await Deno.remove(killDir, { recursive: true });
  }
});
