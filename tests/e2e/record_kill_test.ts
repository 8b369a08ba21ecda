/**
 * SIGKILL at several points of a real `niceeval exp` (INT-5, REC-9, REC-10): during experiment
 * setup, while an Attempt is reserved, after some Attempts settled, and while the Run publishes.
 * `kill_project` blocks its setup and each of its three Attempts while the test holds a barrier
 * file in `$KILL_DIR`, so each kill lands at a known step of the write protocol.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ndjson, type TempProject, tempProject } from "../_helpers/cli.ts";
import { pollUntil } from "./_coordination.ts";

type Json = Record<string, unknown>;

/** The Record of the project as its files say: Run directories and which are published. */
class RecordFiles {
  readonly root: string;
  constructor(root: string) {
    this.root = root;
  }

  async runIds(): Promise<string[]> {
    try {
      return (await Array.fromAsync(Deno.readDir(join(this.root, "runs")))).map((e) => e.name)
        .sort();
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return [];
      throw error;
    }
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

  /** A document of a Run, or undefined while it does not exist (or is being replaced). */
  async doc(runId: string, rel: string): Promise<Json | undefined> {
    try {
      return JSON.parse(await Deno.readTextFile(join(this.root, "runs", runId, rel)));
    } catch {
      return undefined;
    }
  }

  /** The latest published Run by (startedAt, runId): the carry source (CARRY-1). */
  async latestPublished(): Promise<string> {
    const runs: [string, string][] = [];
    for (const id of await this.publishedIds()) {
      runs.push([(await this.doc(id, "run.json"))!.startedAt as string, id]);
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
  /** Whether the killed Run may have been published before the kill landed. */
  readonly mayPublish: boolean;
}

const STEP_SLOTS = ["steps/0000", "steps/0001"];

const POINTS: readonly KillPoint[] = [
  {
    name: "during experiment setup, with only run.json written",
    holds: ["setup"],
    reached: async (record, runId, dir) =>
      (await marks(dir)).includes("setup-held") &&
      (await record.doc(runId, "run.json"))?.completion === null,
    mayPublish: false,
  },
  {
    name: "while the first Attempt is reserved",
    holds: ["a"],
    reached: async (record, runId, dir) => {
      if (!(await marks(dir)).includes("a-held")) return false;
      const attempts = await Array.fromAsync(
        Deno.readDir(join(record.root, "runs", runId, "attempts")),
      );
      const reserved = attempts[0] &&
        await record.doc(runId, `attempts/${attempts[0].name}/attempt.json`);
      return reserved !== undefined && reserved.outcome === null;
    },
    mayPublish: false,
  },
  {
    name: "after two Attempts settled, the third running",
    holds: ["c"],
    reached: async (record, runId, dir) => {
      if (!(await marks(dir)).includes("c-held")) return false;
      const members: Json[] = [];
      for await (const e of Deno.readDir(join(record.root, "runs", runId, "members"))) {
        const doc = await record.doc(runId, `members/${e.name}`);
        if (doc) members.push(doc);
      }
      return STEP_SLOTS.every((id) =>
        members.some((m) => m.evalId === id && m.action === "executed")
      );
    },
    mayPublish: false,
  },
  {
    name: "as soon as the final run.json is written (publishing)",
    holds: [],
    reached: async (record, runId) => {
      const completion = (await record.doc(runId, "run.json"))?.completion;
      return completion !== undefined && completion !== null;
    },
    mayPublish: true,
  },
];

Deno.test("niceeval exp: SIGKILL at several points leaves every published Run readable and the killed Run unpublished; the next run carries from the last published Run exits 0", async (t) => {
  await using p = await tempProject("kill_project");
  const killDir = await Deno.makeTempDir({ prefix: "niceeval-kill-" });
  const env = { KILL_DIR: killDir };
  try {
    const first = await p.run(["exp", "--json"], { env });
    assert.equal(first.code, 0, first.stdout + first.stderr);
    const record = new RecordFiles(ndjson(first.stdout)[0]!.recordRoot as string);
    const killed: string[] = [];
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
            runId = (await record.runIds()).find((id) =>
              !before.includes(id) && !killed.includes(id)
            ) ??
              "";
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
        killed.push(runId);

        const publishedNow = await record.published(runId);
        if (!point.mayPublish) {
          assert.equal(status.signal, "SIGKILL");
          assert.equal(publishedNow, false, "the killed Run stays unpublished");
        }
        assert.deepEqual(await snapshot(p, before), rows, "earlier Runs are unchanged");
        if (publishedNow) {
          const own = await snapshot(p, [runId]);
          assert.deepEqual(own.map((r) => r.state), ["executed", "executed", "executed"]);
        }
        const unpublished = (await record.runIds()).length - (await record.publishedIds()).length;
        const show = await p.run(["show", "--json"]);
        assert.equal(show.code, 0, show.stderr);
        const problems = JSON.parse(show.stdout).problems as Json[];
        assert.deepEqual(
          problems.map((x) => [x.code, (x.message as string).split(" run(s)")[0]]),
          unpublished > 0 ? [["record-unpublished-runs", `${unpublished} unpublished`]] : [],
        );
        const dry = await p.run(["exp", "--dry", "--json"]);
        assert.equal(dry.code, 0, dry.stderr);
        const plan = JSON.parse(dry.stdout);
        assert.equal(plan.reused, 3);
        const latest = await record.latestPublished();
        for (const row of plan.rows as Json[]) assert.equal(row.sourceRunId, latest);
      });
    }
    await t.step("the next run carries every slot; clean removes the killed Runs", async () => {
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
      const leftovers = killed.length -
        (await Promise.all(killed.map((id) => record.published(id))))
          .filter(Boolean).length;
      const clean = await p.run(["clean"]);
      assert.equal(clean.code, 0, clean.stderr);
      assert.equal(clean.stdout, `removed ${leftovers} unpublished run(s) from ${record.root}\n`);
      const show = await p.run(["show", "--json"]);
      assert.deepEqual(JSON.parse(show.stdout).problems, []);
    });
  } finally {
    await Deno.remove(killDir, { recursive: true });
  }
});
