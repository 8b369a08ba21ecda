import assert from "node:assert/strict";
import { join, relative } from "node:path";
import {
  carryDecider,
  digestOf,
  isTempName,
  loadCandidates,
  RecordReader,
  RecordWriter,
  type RunSpec,
  slotIdOf,
} from "../../src/record/mod.ts";
import { DirectorySyncer } from "../../src/record/atomic.ts";
import { createFakeClock } from "../_fakes/clock.ts";
import { createSeededRandom } from "../_fakes/random.ts";
import { result } from "../_fakes/results.ts";
import { CONFIG_A, digestFor, INPUT_1, uuidOf } from "../_fakes/record.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

const T0 = Date.UTC(2026, 10, 29, 10, 0, 0);

/** One directory fsync as the fake saw it: the names in the directory and, for an Attempt
 * directory, the outcome in its attempt.json at that moment. */
interface Fsync {
  readonly dir: string;
  readonly names: readonly string[];
  readonly outcome?: string | null;
}

async function names(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) out.push(e.name);
  return out.sort();
}

/**
 * A syncer that records every directory fsync; with `fail.at` (1-based) that fsync and every
 * later one fail, and `fail.injected` says whether it came.
 */
function recordingSyncer(log: Fsync[], fail = { at: 0, injected: false }): DirectorySyncer {
  let count = 0;
  return new DirectorySyncer(async (dir) => {
    if (fail.at > 0 && ++count >= fail.at) {
      fail.injected = true;
      throw new Error("EIO: simulated fsync failure");
    }
    const listing = await names(dir);
    const outcome = listing.includes("attempt.json") && listing.includes("events.json")
      ? JSON.parse(await Deno.readTextFile(join(dir, "attempt.json"))).outcome
      : undefined;
    log.push({ dir, names: listing, ...(outcome !== undefined ? { outcome } : {}) });
  });
}

function spec(runId: string, startedAt: number, evalIds: readonly string[]): RunSpec {
  const slots = evalIds.map((evalId, position) => ({
    position,
    slotId: slotIdOf(evalId, 0),
    evalId,
    ordinal: 0,
    kind: "pass" as const,
    groupId: null,
    inputFingerprint: INPUT_1,
    executionIdentityDigest: digestOf({ configHash: CONFIG_A, inputFingerprint: INPUT_1 }),
    carried: null,
  }));
  return {
    header: {
      runId,
      invocationId: uuidOf(`inv-${runId}`),
      experimentId: "exp",
      niceevalVersion: "0.1.0",
      startedAt,
      config: { agent: "det", model: null, flags: {}, provider: null, configHash: CONFIG_A },
      options: { attempts: 1, earlyExit: false, timeoutMs: null, budgetUSD: null, rerun: "none" },
      expectedSlots: slots.map(({ carried: _, position: __, ...slot }) => slot),
    },
    slots,
  };
}

/**
 * Drives a writer through one Run of four slots: the first Attempt settles after its reservation
 * is written, the next two settle right after they start; the last slot is not dispatched.
 * `publish: false` stops before `finish`, like a process killed at that point.
 */
async function writeRun(
  root: string,
  options: {
    runId: string;
    startedAt: number;
    verdict: "passed" | "failed";
    syncer: DirectorySyncer;
    publish?: boolean;
    parallelWrites?: number;
  },
): Promise<string[]> {
  const evalIds = ["e0", "e1", "e2", "e3"];
  const clock = createFakeClock(options.startedAt);
  const writer = new RecordWriter(root, {
    clock,
    random: createSeededRandom(options.startedAt % 1000),
    syncer: options.syncer,
    ...(options.parallelWrites !== undefined ? { parallelWrites: options.parallelWrites } : {}),
  });
  await writer.begin([spec(options.runId, options.startedAt, evalIds)]);
  for (const [position, evalId] of evalIds.entries()) {
    const slot = { position, experimentId: "exp", evalId, ordinal: 0 };
    if (position === 3) {
      writer.handle({ type: "not_dispatched", at: clock.now(), slot, reason: "early-exit" });
      continue;
    }
    const attemptId = uuidOf(`${options.runId}-a${position}`);
    writer.handle({ type: "attempt_start", at: clock.now(), slot, attemptId });
    if (position === 0) await writer.flush();
    const settled = result({ attemptId, evalId, verdict: options.verdict });
    writer.handle({ type: "attempt_end", at: clock.now(), slot, result: settled });
  }
  await writer.flush();
  if (options.publish === false) return [];
  return await writer.finish("completed");
}

async function walk(dir: string, out: string[] = []): Promise<string[]> {
  for await (const e of Deno.readDir(dir)) {
    const path = join(dir, e.name);
    out.push(path);
    if (e.isDirectory) await walk(path, out);
  }
  return out;
}

const withRoot = (fn: (root: string) => Promise<void>): Promise<void> => withTempDir(fn);

Deno.test("RecordWriter makes every entry of a Run durable before its complete marker (REC-8, REC-9)", () =>
  withRoot(async (root) => {
    const log: Fsync[] = [];
    const published = await writeRun(root, {
      runId: "run-1",
      startedAt: T0,
      verdict: "passed",
      syncer: recordingSyncer(log),
    });
    assert.deepEqual(published, ["run-1"]);
    const runDir = join(root, "runs", "run-1");
    const marker = log.findIndex((f) => f.dir === runDir && f.names.includes("complete"));
    assert.ok(marker >= 0, "the Run directory is fsynced after complete is created");
    // Every entry of the published Run: its parent directory was fsynced with it in place
    // before the marker existed (Attempt directories: with the final attempt.json).
    for (const path of await walk(runDir)) {
      if (path === join(runDir, "complete")) continue;
      const parent = join(path, "..");
      const name = relative(parent, path);
      const covered = log.slice(0, marker).some((f) =>
        f.dir === parent && f.names.includes(name) &&
        (f.outcome === undefined || f.outcome === "completed")
      );
      assert.ok(covered, `${relative(root, path)} is durable before complete`);
    }
    const runs = log.flatMap((f, i) =>
      f.dir === join(root, "runs") && f.names.includes("run-1") ? [i] : []
    );
    assert.ok(runs.some((i) => i < marker), "the Run's entry in runs/ is durable before complete");
    assert.ok(runs.some((i) => i > marker), "runs/ is fsynced after the marker (REC-9 step 7)");
    assert.ok(log.some((f) => f.dir === root && f.names.includes("record.json")));
    assert.deepEqual((await walk(root)).filter((p) => isTempName(relative(join(p, ".."), p))), []);
  }));

Deno.test("RecordWriter skips a reservation not yet started when its Attempt settles (REC-7a)", async (t) => {
  const outcomesOf = async (parallelWrites: number) => {
    const log: Fsync[] = [];
    await withRoot((root) =>
      writeRun(root, {
        runId: "run-1",
        startedAt: T0,
        verdict: "passed",
        syncer: recordingSyncer(log),
        parallelWrites,
      }).then(() => undefined)
    );
    const attempt = (id: string) => (f: Fsync) =>
      f.dir.endsWith(`/attempts/${uuidOf(`run-1-${id}`)}`);
    return ["a0", "a1", "a2"].map((id) => log.filter(attempt(id)).map((f) => f.outcome ?? null));
  };
  await t.step("a free writer writes each reservation at once", async () => {
    // Reserved attempt.json (outcome null), then the three settle-time files with one fsync.
    assert.deepEqual(await outcomesOf(32), [
      [null, "completed"],
      [null, "completed"],
      [null, "completed"],
    ]);
  });
  await t.step("a busy writer lets the settle write replace a waiting reservation", async () => {
    // One write at a time: e0's settle write holds it while e1 and e2 start and settle.
    assert.deepEqual(await outcomesOf(1), [[null, "completed"], ["completed"], ["completed"]]);
  });
});

Deno.test("RecordWriter never publishes a Run when any directory fsync fails", async () => {
  // Fail the 1st, 2nd, … fsync until a run has fewer fsyncs than that (coalescing varies).
  for (let at = 1; at < 100; at++) {
    const fail = { at, injected: false };
    const done = await withTempDir(async (root) => {
      const published = await writeRun(root, {
        runId: uuidOf("run-1"),
        startedAt: T0,
        verdict: "passed",
        syncer: recordingSyncer([], fail),
      });
      const scan = await new RecordReader(root).scan();
      if (!fail.injected) {
        assert.deepEqual([published, scan.runs.length], [[uuidOf("run-1")], 1]);
        return true;
      }
      assert.deepEqual([published, scan.runs], [[], []], `fsync #${at} failed`);
      return false;
    });
    if (done) {
      assert.ok(at > 5, "every fsync of the Run was failed once");
      return;
    }
  }
  assert.fail("the writer kept fsyncing");
});

Deno.test("A Run whose writer stopped before finish is never read; the published one is complete", () =>
  withRoot(async (root) => {
    await writeRun(root, {
      runId: uuidOf("run-old"),
      startedAt: T0,
      verdict: "passed",
      syncer: new DirectorySyncer(),
    });
    // Later and failing, but killed before publishing: readers must ignore it (REC-10).
    await writeRun(root, {
      runId: uuidOf("run-new"),
      startedAt: T0 + 60_000,
      verdict: "failed",
      syncer: new DirectorySyncer(),
      publish: false,
    });
    const reader = new RecordReader(root);
    const scan = await reader.scan();
    assert.deepEqual(scan.runs.map((r) => r.runId), [uuidOf("run-old")]);
    assert.deepEqual(scan.unpublished, [uuidOf("run-new")]);
    const pairs = ["e0", "e1", "e2"].map((evalId) => ({ experimentId: "exp", evalId }));
    const decide = carryDecider(await loadCandidates(reader, pairs), {
      configHash: () => CONFIG_A,
      inputFingerprint: () => INPUT_1,
      digest: () => digestFor(CONFIG_A, INPUT_1),
    }, "none");
    for (const { evalId } of pairs) {
      const d = decide({ experimentId: "exp", evalId, ordinal: 0, timeoutMs: null });
      assert.deepEqual(
        d.action === "carry" && [d.source.runId, d.source.verdict],
        [uuidOf("run-old"), "passed"],
      );
    }
    const [run] = scan.runs;
    for (const slot of run!.doc.expectedSlots) {
      const member = await reader.member(run!, slot.slotId);
      if (member.attempt === null) continue;
      const stored = await reader.attempt(member.attempt.originRunId, member.attempt.attemptId);
      assert.equal(stored.doc.outcome, "completed");
      assert.equal((await reader.events(stored)).format, "niceeval.events");
    }
  }));
