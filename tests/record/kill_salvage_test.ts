/**
 * Seeded random SIGKILL of a process writing a Run through the real `RecordWriter`, then salvage.
 * The child (`_kill_salvage_child.ts`) prints a line for each Attempt only after the flush that
 * made it durable; the parent kills it after a seeded number of such lines, so the kill point is
 * chosen by count, never by time. Oracle: every Attempt reported durable survives the kill and
 * salvage (an executed member and a readable Attempt with its verdict), the log holds only whole
 * records, the Run is published `crashed`, and every slot has exactly one member.
 * NICEEVAL_KILL_SEED explores other seeds.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { RecordReader, salvageRuns } from "../../src/record/mod.ts";
import { scanLog } from "../../src/record/log.ts";
import { createFakeClock } from "../_fakes/clock.ts";
import { createSeededRandom } from "../_fakes/random.ts";
import { uuidOf } from "../_fakes/record.ts";
import { drain, readUntil } from "../_helpers/cli.ts";
import { logPathOf, readRunFiles } from "../_helpers/record_files.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

const SEED = Number(Deno.env.get("NICEEVAL_KILL_SEED") ?? "20261202");
const KILLS = 8;
const SLOTS = 24;
const CHILD = new URL("./_kill_salvage_child.ts", import.meta.url);
const DURABLE_REGEXP = /^durable (\d+) (\S+) (passed|failed|errored)$/;

interface Durable {
  readonly position: number;
  readonly attemptId: string;
  readonly verdict: string;
}

/** Runs the child until it printed `ready` and `count` durable lines, then SIGKILLs it. */
async function killAfter(root: string, runId: string, seed: number, count: number) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--frozen", CHILD.href, root, runId, String(SLOTS), String(seed)],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const durable: Durable[] = [];
  let ready = false;
  try {
    const { rest } = await readUntil(child, (line) => {
      if (line === "ready") ready = true;
      const m = DURABLE_REGEXP.exec(line);
      if (m) durable.push({ position: Number(m[1]), attemptId: m[2]!, verdict: m[3]! });
      return ready && durable.length >= count;
    });
    child.kill("SIGKILL");
    await drain(rest);
  } finally {
    const status = await child.status;
    const stderr = await new Response(child.stderr).text();
    await child.stdin.close().catch(() => undefined);
    assert.equal(status.signal, "SIGKILL", `the child exited by itself: ${stderr}`);
  }
  return durable;
}

Deno.test("salvageRuns() keeps every durable Attempt of a Run whose writer was SIGKILLed at a seeded random point", async (t) => {
  const rng = createSeededRandom(SEED);
  for (let kill = 0; kill < KILLS; kill++) {
    const seed = SEED + kill;
    const count = Math.floor(rng.next() * (SLOTS + 1));
    await t.step(`NICEEVAL_KILL_SEED=${SEED} kill ${kill}: after ${count} durable`, async () => {
      await withTempDir(async (root) => {
        const runId = uuidOf(`killed-${seed}`);
        const durable = await killAfter(root, runId, seed, count);
        const what = `NICEEVAL_KILL_SEED=${SEED} kill ${kill} (${count} durable)`;

        const bytes = await Deno.readFile(logPathOf(root, runId));
        const killed = scanLog(bytes);
        // Every durable Attempt's record is among the whole frames before any torn tail.
        const logged = new Set(
          killed.entries.filter((e) => e.value.record === "attempt")
            .map((e) => (e.value.attempt as { attemptId: string }).attemptId),
        );
        for (const d of durable) assert.ok(logged.has(d.attemptId), `${what}: ${d.attemptId}`);

        const outcomes = await salvageRuns(new RecordReader(root), { clock: createFakeClock() });
        assert.equal(outcomes.length, 1, what);
        const outcome = outcomes[0]!;
        assert.equal(outcome.kind, "salvaged", `${what}: ${JSON.stringify(outcome)}`);
        if (outcome.kind !== "salvaged") return;
        assert.ok(outcome.kept >= durable.length, `${what}: kept ${outcome.kept}`);
        assert.equal(outcome.kept + outcome.interrupted, SLOTS, what);

        const files = await readRunFiles(root, runId);
        assert.equal(files.tornBytes, 0, `${what}: torn bytes after salvage`);
        assert.equal(
          scanLog(await Deno.readFile(logPathOf(root, runId))).entries.length,
          files
            .records.length,
        );
        assert.ok(files.published, what);
        assert.equal(files.end?.completion, "crashed", what);
        assert.equal(files.records.at(-1), files.end, `${what}: the end record is the last`);
        const slotIds = files.records.filter((r) => r.record === "member")
          .map((r) => (r.member as { slotId: string }).slotId);
        assert.equal(slotIds.length, SLOTS, `${what}: one member per slot`);
        assert.equal(new Set(slotIds).size, SLOTS, `${what}: one member per slot`);
        assert.deepEqual(
          (await Array.fromAsync(Deno.readDir(join(root, "runs", runId)))).map((e) => e.name)
            .sort(),
          ["complete", "records.log", "run.json"],
        );

        const reader = new RecordReader(root);
        const { runs, unpublished } = await reader.scan();
        assert.deepEqual([runs.map((r) => r.runId), unpublished], [[runId], []], what);
        const run = runs[0]!;
        assert.equal((await reader.details(run)).completion, "crashed", what);
        const byPosition = new Map(durable.map((d) => [d.position, d]));
        for (const [position, slot] of run.doc.expectedSlots.entries()) {
          const { member, stored } = await reader.slot(run, slot);
          const d = byPosition.get(position);
          if (d) {
            assert.equal(member.action, "executed", `${what}: slot ${position}`);
            assert.equal(stored?.doc.attemptId, d.attemptId, `${what}: slot ${position}`);
            assert.equal(stored?.verdict, d.verdict, `${what}: slot ${position}`);
          } else {
            // Settled after the last reported flush (still kept if its record was written whole)
            // or never settled: interrupted.
            assert.ok(["executed", "interrupted"].includes(member.action), member.action);
            assert.equal(member.action === "executed", stored !== null, `${what}: ${position}`);
          }
        }
      });
    });
  }
});
