import assert from "node:assert/strict";
import { join } from "node:path";
import {
  digestOf,
  RecordReader,
  type RecordWriteError,
  RecordWriter,
  slotIdOf,
} from "../../src/record/mod.ts";
import { frame, scanLog } from "../../src/record/log.ts";
import { createFakeClock } from "../_fakes/clock.ts";
import { createSeededRandom } from "../_fakes/random.ts";
import { CONFIG_A, INPUT_1, uuidOf, writeRun } from "../_fakes/record.ts";
import { result } from "../_fakes/results.ts";
import { concatBytes, logPathOf, readRunFiles } from "../_helpers/record_files.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

const T0 = Date.UTC(2026, 10, 29, 10, 0, 0);
const RUN_1 = uuidOf("run-1");

/** The header of Run `run-1` of experiment `exp` with `attempts` Attempts per eval. */
function runHeader<S>(attempts: number, expectedSlots: S[]) {
  return {
    runId: RUN_1,
    invocationId: uuidOf("inv-1"),
    experimentId: "exp",
    niceevalVersion: "0.1.0",
    startedAt: T0,
    config: { agent: "det", model: null, flags: {}, provider: null, configHash: CONFIG_A },
    options: {
      attempts,
      earlyExit: false,
      timeoutMs: null,
      budgetUSD: null,
      rerun: "none" as const,
    },
    expectedSlots,
  };
}

async function names(dir: string): Promise<string[]> {
  return (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name).sort();
}

async function json(path: string): Promise<Record<string, unknown>> {
  return JSON.parse(await Deno.readTextFile(path));
}

Deno.test("RecordWriter publishes a Run whose every slot has a member, complete marker last", () =>
  withTempDir(async (root) => {
    const [run1, run0, a0, a1] = ["run-1", "run-0", "a-0", "a-1"].map(uuidOf) as [
      string,
      string,
      string,
      string,
    ];
    const published = await writeRun(root, {
      runId: run1,
      experimentId: "exp",
      startedAt: T0,
      slots: [
        { evalId: "e1", ordinal: 0, fill: { kind: "executed", result: result({ attemptId: a1 }) } },
        { evalId: "e1", ordinal: 1, fill: { kind: "not-dispatched", reason: "early-exit" } },
        { evalId: "e2", ordinal: 0, fill: { kind: "carried", originRunId: run0, attemptId: a0 } },
      ],
    });
    assert.deepEqual(published, [run1]);
    const dir = join(root, "runs", run1);
    assert.deepEqual(await names(dir), ["complete", "records.log", "run.json"]);
    assert.equal((await Deno.stat(join(dir, "complete"))).size, 0);
    const files = await readRunFiles(root, run1);
    assert.equal(files.published, true);
    assert.equal(files.tornBytes, 0);
    // The header is written once, before the outcome is known: completion lives in the log.
    assert.deepEqual(Object.keys(files.header), [
      "format",
      "schemaVersion",
      "runId",
      "invocationId",
      "experimentId",
      "niceevalVersion",
      "startedAt",
      "config",
      "options",
      "expectedSlots",
    ]);
    assert.deepEqual([files.header.format, files.header.schemaVersion], ["niceeval.run", 2]);
    assert.equal(files.records.at(-1), files.end);
    assert.equal(files.end?.completion, "completed");
    assert.equal(typeof files.end?.completedAt, "string");
    const m0 = files.members.get(slotIdOf("e1", 0))!;
    assert.deepEqual([m0.action, m0.attempt], ["executed", { originRunId: run1, attemptId: a1 }]);
    const m1 = files.members.get(slotIdOf("e1", 1))!;
    assert.deepEqual([m1.action, m1.attempt, m1.reason], ["not-dispatched", null, "early-exit"]);
    const m2 = files.members.get(slotIdOf("e2", 0))!;
    assert.deepEqual([m2.action, m2.attempt], ["carried", { originRunId: run0, attemptId: a0 }]);
    const attempt = files.attempts.get(a1)!;
    assert.deepEqual([attempt.attempt.outcome, attempt.attempt.durationMs], ["completed", 1000]);
    assert.equal(attempt.attempt.schemaVersion, 2);
    assert.equal(attempt.assertions.format, "niceeval.assertions");
    assert.equal(attempt.events.format, "niceeval.events");
    // The Attempt's record comes before the member that references it.
    const at = (found: (r: Record<string, unknown>) => boolean) => files.records.findIndex(found);
    assert.ok(
      at((r) => r.record === "attempt") <
        at((r) => (r.member as { action?: string } | undefined)?.action === "executed"),
    );
    const record = await json(join(root, "record.json"));
    assert.deepEqual([record.format, record.schemaVersion], ["niceeval.record", 2]);
  }));

Deno.test("RecordWriter leaves a Run with a started but unsettled Attempt unpublished (INT-4)", () =>
  withTempDir(async (root) => {
    const runX = uuidOf("run-x");
    const published = await writeRun(root, {
      runId: runX,
      experimentId: "exp",
      startedAt: T0,
      slots: [{ evalId: "e1", ordinal: 0, fill: { kind: "reserved", attemptId: uuidOf("a-x") } }],
    });
    assert.deepEqual(published, []);
    // No record for an Attempt that never settled: it appears in the log only when it settles.
    const files = await readRunFiles(root, runX);
    assert.deepEqual(files.attempts.size, 0);
    assert.equal(files.end, undefined);
    assert.equal(files.published, false);
    const scan = await new RecordReader(root).scan();
    assert.deepEqual(scan.runs, []);
    assert.deepEqual(scan.unpublished, [runX]);
  }));

Deno.test("RecordWriter fails the settle write of an Attempt whose result is not JSON", () =>
  withTempDir(async (root) => {
    const writer = new RecordWriter(root, {
      clock: createFakeClock(T0),
      random: createSeededRandom(7),
    });
    const failures: RecordWriteError[] = [];
    writer.onFailure = (error) => failures.push(error);
    const slot = {
      position: 0,
      slotId: slotIdOf("e1", 0),
      evalId: "e1",
      ordinal: 0,
      kind: "pass" as const,
      executionIdentityDigest: digestOf({ configHash: CONFIG_A, inputFingerprint: INPUT_1 }),
      carried: null,
    };
    await writer.begin([{
      header: runHeader(1, []),
      slots: [slot],
    }]);
    const ref = { position: 0, experimentId: "exp", evalId: "e1", ordinal: 0 };
    const attemptId = uuidOf("a-1");
    writer.handle({ type: "attempt_start", at: T0, slot: ref, attemptId });
    const settled = result({ attemptId });
    const details = { ...settled.details, logs: [{ at: T0, text: 1n as unknown as string }] };
    writer.handle({ type: "attempt_end", at: T0, slot: ref, result: { ...settled, details } });
    assert.deepEqual(await writer.finish("completed"), []);
    assert.deepEqual(failures.map((f) => [f.path, f.message]), [
      [logPathOf(root, RUN_1), "Do not know how to serialize a BigInt"],
    ]);
    assert.equal(writer.failure, failures[0]);
    // Nothing after the failure reached the log, and the Run stays unpublished.
    const files = await readRunFiles(root, RUN_1);
    assert.deepEqual([files.records, files.tornBytes, files.published], [[], 0, false]);
    const left = await names(join(root, "runs", RUN_1));
    assert.deepEqual(left, ["records.log", "run.json"]);
  }));

Deno.test("RecordReader recomputes verdicts from stored assertions (REC-6)", () =>
  withTempDir(async (root) => {
    await writeRun(root, {
      runId: uuidOf("run-1"),
      experimentId: "exp",
      startedAt: T0,
      slots: [
        {
          evalId: "e1",
          ordinal: 0,
          fill: { kind: "executed", result: result({ attemptId: uuidOf("p"), verdict: "passed" }) },
        },
        {
          evalId: "e1",
          ordinal: 1,
          fill: { kind: "executed", result: result({ attemptId: uuidOf("f"), verdict: "failed" }) },
        },
        {
          evalId: "e1",
          ordinal: 2,
          fill: {
            kind: "executed",
            result: result({ attemptId: uuidOf("x"), verdict: "errored" }),
          },
        },
      ],
    });
    const reader = new RecordReader(root);
    assert.equal((await reader.attempt(uuidOf("run-1"), uuidOf("p"))).verdict, "passed");
    assert.equal((await reader.attempt(uuidOf("run-1"), uuidOf("f"))).verdict, "failed");
    assert.equal((await reader.attempt(uuidOf("run-1"), uuidOf("x"))).verdict, "errored");
  }));

Deno.test("RecordReader reports a truncated run.json as record-invalid naming the file", () =>
  withTempDir(async (root) => {
    await writeRun(root, { runId: uuidOf("run-1"), experimentId: "exp", startedAt: T0, slots: [] });
    const path = join(root, "runs", uuidOf("run-1"), "run.json");
    const text = await Deno.readTextFile(path);
    await Deno.writeTextFile(path, text.slice(0, text.length / 2));
    await assert.rejects(
      new RecordReader(root).scan(),
      (e: Error & { code?: string; hint?: string }) => {
        assert.equal(e.code, "record-invalid");
        assert.ok(e.message.startsWith(path), e.message);
        assert.match(e.hint ?? "", new RegExp(`move runs/${uuidOf("run-1")} out of`));
        return true;
      },
    );
  }));

Deno.test("RecordReader reports a missing member of a published Run as record-invalid", () =>
  withTempDir(async (root) => {
    const run1 = uuidOf("run-1");
    await writeRun(root, {
      runId: run1,
      experimentId: "exp",
      startedAt: T0,
      slots: [{
        evalId: "e1",
        ordinal: 0,
        fill: { kind: "executed", result: result({ attemptId: uuidOf("p") }) },
      }],
    });
    const path = logPathOf(root, run1);
    const entries = scanLog(await Deno.readFile(path)).entries.filter((e) =>
      e.value.record !== "member"
    );
    await Deno.writeFile(path, concatBytes(entries.map((e) => frame(JSON.stringify(e.value)))));
    const reader = new RecordReader(root);
    const [run] = (await reader.scan()).runs;
    await assert.rejects(
      reader.member(run!, slotIdOf("e1", 0)),
      (e: Error & { code?: string }) =>
        e.code === "record-invalid" && e.message.startsWith(`${path}: `) &&
        e.message.includes(`has no member of slot ${slotIdOf("e1", 0)}`),
    );
  }));

Deno.test("RecordReader refuses a record.json of a newer schema version", () =>
  withTempDir(async (root) => {
    await writeRun(root, { runId: RUN_1, experimentId: "exp", startedAt: T0, slots: [] });
    const path = join(root, "record.json");
    const doc = JSON.parse(await Deno.readTextFile(path));
    assert.equal(doc.schemaVersion, 2);
    await Deno.writeTextFile(path, JSON.stringify({ ...doc, schemaVersion: 3 }));
    await assert.rejects(
      new RecordReader(root).scan(),
      (e: Error & { code?: string }) => e.code === "record-version-unsupported",
    );
  }));

Deno.test("RecordReader ignores a Run whose complete marker is not a zero-byte file (REC-10)", () =>
  withTempDir(async (root) => {
    await writeRun(root, { runId: RUN_1, experimentId: "exp", startedAt: T0, slots: [] });
    await Deno.writeTextFile(join(root, "runs", RUN_1, "complete"), "x");
    const scan = await new RecordReader(root).scan();
    assert.deepEqual([scan.runs.length, scan.unpublished], [0, [RUN_1]]);
  }));

Deno.test("run.json lists only the expected-slot fields when the header shares the writer's slots", () =>
  withTempDir(async (root) => {
    const writer = new RecordWriter(root, {
      clock: createFakeClock(T0),
      random: createSeededRandom(7),
    });
    const slots = [0, 1].map((ordinal) => ({
      position: ordinal,
      slotId: slotIdOf("e1", ordinal),
      evalId: "e1",
      ordinal,
      kind: "pass" as const,
      groupId: null,
      inputFingerprint: INPUT_1,
      executionIdentityDigest: digestOf({ configHash: CONFIG_A, inputFingerprint: INPUT_1 }),
      carried: { originRunId: uuidOf("run-0"), attemptId: uuidOf(`a-${ordinal}`) },
    }));
    await writer.begin([{
      header: runHeader(2, slots),
      slots,
    }]);
    assert.deepEqual(await writer.finish("completed"), [RUN_1]);
    const run = await json(join(root, "runs", RUN_1, "run.json"));
    const expected = run.expectedSlots as Record<string, unknown>[];
    assert.equal(expected.length, 2);
    for (const [i, slot] of expected.entries()) {
      assert.deepEqual(Object.keys(slot), [
        "slotId",
        "evalId",
        "ordinal",
        "kind",
        "groupId",
        "inputFingerprint",
        "executionIdentityDigest",
      ]);
      assert.equal(slot.slotId, slotIdOf("e1", i));
    }
  }));

Deno.test("RecordWriter ignores events of positions outside its Runs", () =>
  withTempDir(async (root) => {
    const writer = new RecordWriter(root, {
      clock: createFakeClock(T0),
      random: createSeededRandom(8),
    });
    await writer.begin([]);
    const slot = { position: 3, experimentId: "exp", evalId: "e1", ordinal: 0 };
    writer.handle({ type: "attempt_start", at: T0, slot, attemptId: "a-1" });
    writer.handle({ type: "not_dispatched", at: T0, slot, reason: "early-exit" });
    assert.deepEqual(await writer.finish("completed"), []);
    assert.equal(writer.hasUnsettledAttempts(), false);
  }));
