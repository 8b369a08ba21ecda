import assert from "node:assert/strict";
import { join, relative } from "node:path";
import {
  carryDecider,
  isTempName,
  loadCandidates,
  RecordReader,
  RecordWriter,
} from "../../src/record/mod.ts";
import { DirectorySyncer } from "../../src/record/atomic.ts";
import { type LogOpener, openLogFile } from "../../src/record/writer.ts";
import { createFakeClock } from "../_fakes/clock.ts";
import { createSeededRandom } from "../_fakes/random.ts";
import { result } from "../_fakes/results.ts";
import { CONFIG_A, digestFor, INPUT_1, passRunSpec, uuidOf } from "../_fakes/record.ts";
import { logPathOf, readRunFiles } from "../_helpers/record_files.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

const T0 = Date.UTC(2026, 10, 29, 10, 0, 0);

/**
 * One durability step as the fakes saw it: a directory fsync with the names in the directory, or
 * a log sync with the log's size at that moment.
 */
type Step =
  | { readonly kind: "dir"; readonly dir: string; readonly names: readonly string[] }
  | { readonly kind: "log"; readonly path: string; readonly size: number };

async function names(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) out.push(e.name);
  return out.sort();
}

/**
 * A syncer that records every directory fsync; with `fail.at` (1-based) that fsync and every
 * later one fail, and `fail.injected` says whether it came.
 */
function recordingSyncer(steps: Step[], fail = { at: 0, injected: false }): DirectorySyncer {
  let count = 0;
  return new DirectorySyncer(async (dir) => {
    if (fail.at > 0 && ++count >= fail.at) {
      fail.injected = true;
      throw new Error("EIO: simulated fsync failure");
    }
    steps.push({ kind: "dir", dir, names: await names(dir) });
  });
}

/**
 * Opens real log files and records each of their syncs; with `fail.at` (1-based) that write or
 * sync of the log and every later one fail.
 */
function recordingLogs(steps: Step[], fail = { at: 0, injected: false }): LogOpener {
  let count = 0;
  const failing = () => {
    if (fail.at > 0 && ++count >= fail.at) {
      fail.injected = true;
      throw new Error("EIO: simulated log failure");
    }
  };
  return async (path) => {
    const file = await openLogFile(path);
    return {
      write: async (bytes) => {
        failing();
        return await file.write(bytes);
      },
      syncData: async () => {
        failing();
        await file.syncData();
        steps.push({ kind: "log", path, size: (await Deno.stat(path)).size });
      },
      close: () => file.close(),
    };
  };
}

/**
 * Drives a writer through one Run of four slots: the first Attempt settles after the writer
 * flushed while it ran, the next two settle right after they start; the last slot is not
 * dispatched (7 records). `publish: false` stops before `finish`, like a process killed there.
 * Returns the published RunIds and the writer's log syncs before `finish`.
 */
async function writeRun(
  root: string,
  options: {
    runId: string;
    startedAt: number;
    verdict: "passed" | "failed";
    syncer: DirectorySyncer;
    openLog?: LogOpener;
    batchRecords?: number;
    publish?: boolean;
  },
): Promise<{ published: string[]; syncsBeforeFinish: number }> {
  const evalIds = ["e0", "e1", "e2", "e3"];
  const clock = createFakeClock(options.startedAt);
  const writer = new RecordWriter(root, {
    clock,
    random: createSeededRandom(options.startedAt % 1000),
    syncer: options.syncer,
    ...(options.openLog !== undefined ? { openLog: options.openLog } : {}),
    ...(options.batchRecords !== undefined ? { batchRecords: options.batchRecords } : {}),
  });
  await writer.begin([passRunSpec(options.runId, options.startedAt, evalIds)]);
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
  const syncsBeforeFinish = writer.logSyncs;
  if (options.publish === false) {
    // Flushed and closed like the files of a killed process; nothing publishes the Run.
    await writer.close();
    return { published: [], syncsBeforeFinish };
  }
  return { published: await writer.finish("completed"), syncsBeforeFinish };
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

Deno.test("RecordWriter makes every record of a Run durable before its complete marker (REC-8, REC-9)", () =>
  withRoot(async (root) => {
    const steps: Step[] = [];
    const runId = uuidOf("run-1");
    const { published } = await writeRun(root, {
      runId,
      startedAt: T0,
      verdict: "passed",
      syncer: recordingSyncer(steps),
      openLog: recordingLogs(steps),
    });
    assert.deepEqual(published, [runId]);
    const runDir = join(root, "runs", runId);
    const isDir = (dir: string, name: string) => (s: Step) =>
      s.kind === "dir" && s.dir === dir && s.names.includes(name);
    const marker = steps.findIndex(isDir(runDir, "complete"));
    assert.ok(marker >= 0, "the Run directory is fsynced after complete is created");
    // The whole log, end record included, was synced before the marker existed.
    const logSize = (await Deno.stat(logPathOf(root, runId))).size;
    const logSyncs = steps.flatMap((s, i) => s.kind === "log" ? [i] : []);
    const lastLogSync = steps[logSyncs.at(-1)!] as Step & { kind: "log" };
    assert.ok(logSyncs.at(-1)! < marker, "the last log sync comes before complete");
    assert.equal(lastLogSync.size, logSize);
    assert.equal((await readRunFiles(root, runId)).end?.completion, "completed");
    // The header and the log's directory entry were durable before anything was appended.
    const header = steps.findIndex((s) =>
      s.kind === "dir" && s.dir === runDir && s.names.includes("run.json") &&
      s.names.includes("records.log")
    );
    assert.ok(header >= 0 && header < logSyncs[0]!, "run.json and records.log before appends");
    for (const path of await walk(runDir)) {
      if (path === join(runDir, "complete")) continue;
      const name = relative(runDir, path);
      assert.ok(
        steps.slice(0, marker).some(isDir(runDir, name)),
        `${name} is durable before complete`,
      );
    }
    const runs = steps.flatMap((s, i) => isDir(join(root, "runs"), runId)(s) ? [i] : []);
    assert.ok(runs.some((i) => i < marker), "the Run's entry in runs/ is durable before complete");
    assert.ok(runs.some((i) => i > marker), "runs/ is fsynced after the marker (REC-9 step 7)");
    assert.ok(steps.some(isDir(root, "record.json")));
    assert.deepEqual((await walk(root)).filter((p) => isTempName(relative(join(p, ".."), p))), []);
  }));

Deno.test("RecordWriter appends nothing when an Attempt starts, its records once it settles (REC-7a)", () =>
  withRoot(async (root) => {
    const steps: Step[] = [];
    const runId = uuidOf("run-1");
    const clock = createFakeClock(T0);
    const writer = new RecordWriter(root, {
      clock,
      random: createSeededRandom(3),
      syncer: recordingSyncer([]),
      openLog: recordingLogs(steps),
    });
    await writer.begin([passRunSpec(runId, T0, ["e0"])]);
    const slot = { position: 0, experimentId: "exp", evalId: "e0", ordinal: 0 };
    const attemptId = uuidOf("a0");
    writer.handle({ type: "attempt_start", at: clock.now(), slot, attemptId });
    await writer.flush();
    // Started, not settled: no reservation record, no sync, and the Attempt is not durable.
    assert.deepEqual([(await Deno.stat(logPathOf(root, runId))).size, writer.logSyncs], [0, 0]);
    assert.equal(writer.hasUnsettledAttempts(), true);
    writer.handle({
      type: "attempt_end",
      at: clock.now(),
      slot,
      result: result({ attemptId, evalId: "e0" }),
    });
    await writer.flush();
    const files = await readRunFiles(root, runId);
    assert.deepEqual(files.records.map((r) => r.record), ["attempt", "member"]);
    assert.equal(files.attempts.get(attemptId)?.attempt.outcome, "completed");
    assert.equal(writer.logSyncs, 1);
    assert.equal(writer.hasUnsettledAttempts(), false);
    assert.deepEqual(await writer.finish("completed"), [runId]);
  }));

Deno.test("RecordWriter syncs a burst of settled Attempts once per batch", async (t) => {
  for (const [batchRecords, most] of [[undefined, 1], [2, Math.ceil(7 / 2)], [1, 7]] as const) {
    await t.step(
      `batchRecords ${batchRecords ?? "default"}: at most ${most} sync(s)`,
      () =>
        withRoot(async (root) => {
          const runId = uuidOf("run-1");
          const { syncsBeforeFinish } = await writeRun(root, {
            runId,
            startedAt: T0,
            verdict: "passed",
            syncer: new DirectorySyncer(),
            ...(batchRecords !== undefined ? { batchRecords } : {}),
            publish: false,
          });
          assert.ok(syncsBeforeFinish >= 1 && syncsBeforeFinish <= most, `${syncsBeforeFinish}`);
          const files = await readRunFiles(root, runId);
          assert.deepEqual([files.records.length, files.attempts.size, files.tornBytes], [7, 3, 0]);
        }),
    );
  }
});

Deno.test("RecordWriter never publishes a Run when any log write or sync fails", async () => {
  for (let at = 1; at < 100; at++) {
    const fail = { at, injected: false };
    const done = await withTempDir(async (root) => {
      const runId = uuidOf("run-1");
      const { published } = await writeRun(root, {
        runId,
        startedAt: T0,
        verdict: "passed",
        syncer: new DirectorySyncer(),
        openLog: recordingLogs([], fail),
      });
      const scan = await new RecordReader(root).scan();
      if (!fail.injected) {
        assert.deepEqual([published, scan.runs.length], [[runId], 1]);
        return true;
      }
      assert.deepEqual([published, scan.runs, scan.unpublished], [[], [], [runId]], `op #${at}`);
      return false;
    });
    if (done) {
      assert.ok(at > 2, "every log write and sync of the Run was failed once");
      return;
    }
  }
  assert.fail("the writer kept writing its log");
});

Deno.test("RecordWriter never publishes a Run when any directory fsync fails", async () => {
  // Fail the 1st, 2nd, … fsync until a run has fewer fsyncs than that (coalescing varies).
  for (let at = 1; at < 100; at++) {
    const fail = { at, injected: false };
    const done = await withTempDir(async (root) => {
      const { published } = await writeRun(root, {
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
