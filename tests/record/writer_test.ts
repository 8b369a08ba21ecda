import assert from "node:assert/strict";
import { join } from "node:path";
import {
  digestOf,
  isTempName,
  RecordReader,
  type RecordWriteError,
  RecordWriter,
  slotIdOf,
} from "../../src/record/mod.ts";
import { createFakeClock } from "../_fakes/clock.ts";
import { createSeededRandom } from "../_fakes/random.ts";
import { CONFIG_A, INPUT_1, uuidOf, writeRun } from "../_fakes/record.ts";
import { result } from "../_fakes/results.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

const T0 = Date.UTC(2026, 10, 29, 10, 0, 0);

/** The header of Run `run-1` of experiment `exp` with `attempts` Attempts per eval. */
function runHeader<S>(attempts: number, expectedSlots: S[]) {
  return {
    runId: "run-1",
    invocationId: "inv-1",
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

async function json(path: string): Promise<Record<string, unknown>> {
  return JSON.parse(await Deno.readTextFile(path));
}

Deno.test("RecordWriter publishes a Run whose every slot has a member, complete marker last", () =>
  withTempDir(async (root) => {
    const published = await writeRun(root, {
      runId: "run-1",
      experimentId: "exp",
      startedAt: T0,
      slots: [
        {
          evalId: "e1",
          ordinal: 0,
          fill: { kind: "executed", result: result({ attemptId: "a-1" }) },
        },
        { evalId: "e1", ordinal: 1, fill: { kind: "not-dispatched", reason: "early-exit" } },
        {
          evalId: "e2",
          ordinal: 0,
          fill: { kind: "carried", originRunId: "run-0", attemptId: "a-0" },
        },
      ],
    });
    assert.deepEqual(published, ["run-1"]);
    const dir = join(root, "runs", "run-1");
    assert.equal((await Deno.stat(join(dir, "complete"))).size, 0);
    const run = await json(join(dir, "run.json"));
    assert.equal(run.completion, "completed");
    assert.equal(typeof run.completedAt, "string");
    const m0 = await json(join(dir, "members", `${slotIdOf("e1", 0)}.json`));
    assert.deepEqual(m0.attempt, { originRunId: "run-1", attemptId: "a-1" });
    assert.equal(m0.action, "executed");
    const m1 = await json(join(dir, "members", `${slotIdOf("e1", 1)}.json`));
    assert.deepEqual([m1.action, m1.attempt, m1.reason], ["not-dispatched", null, "early-exit"]);
    const m2 = await json(join(dir, "members", `${slotIdOf("e2", 0)}.json`));
    assert.deepEqual([m2.action, m2.attempt], ["carried", {
      originRunId: "run-0",
      attemptId: "a-0",
    }]);
    const attempt = await json(join(dir, "attempts", "a-1", "attempt.json"));
    assert.equal(attempt.outcome, "completed");
    assert.equal(attempt.durationMs, 1000);
    assert.equal(
      (await json(join(dir, "attempts", "a-1", "assertions.json"))).format,
      "niceeval.assertions",
    );
    assert.equal(
      (await json(join(dir, "attempts", "a-1", "events.json"))).format,
      "niceeval.events",
    );
    assert.equal((await json(join(root, "record.json"))).format, "niceeval.record");
  }));

Deno.test("RecordWriter leaves a Run with a reserved but unsettled Attempt unpublished (INT-4)", () =>
  withTempDir(async (root) => {
    const published = await writeRun(root, {
      runId: "run-x",
      experimentId: "exp",
      startedAt: T0,
      slots: [{ evalId: "e1", ordinal: 0, fill: { kind: "reserved", attemptId: "a-x" } }],
    });
    assert.deepEqual(published, []);
    const reserved = await json(join(root, "runs", "run-x", "attempts", "a-x", "attempt.json"));
    assert.equal(reserved.outcome, null);
    const scan = await new RecordReader(root).scan();
    assert.deepEqual(scan.runs, []);
    assert.deepEqual(scan.unpublished, ["run-x"]);
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
    writer.handle({ type: "attempt_start", at: T0, slot: ref, attemptId: "a-1" });
    const settled = result({ attemptId: "a-1" });
    const details = { ...settled.details, logs: [{ at: T0, text: 1n as unknown as string }] };
    writer.handle({ type: "attempt_end", at: T0, slot: ref, result: { ...settled, details } });
    assert.deepEqual(await writer.finish("completed"), []);
    const dir = join(root, "runs", "run-1", "attempts", "a-1");
    assert.deepEqual(failures.map((f) => [f.path, f.message]), [
      [dir, "Do not know how to serialize a BigInt"],
    ]);
    assert.equal(writer.failure, failures[0]);
    const left: string[] = [];
    for await (const e of Deno.readDir(dir)) left.push(e.name);
    assert.deepEqual(left.filter((name) => name !== "attempt.json" && !isTempName(name)), []);
    assert.deepEqual(left.filter(isTempName), []);
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
    await writeRun(root, {
      runId: uuidOf("run-1"),
      experimentId: "exp",
      startedAt: T0,
      slots: [{
        evalId: "e1",
        ordinal: 0,
        fill: { kind: "executed", result: result({ attemptId: uuidOf("p") }) },
      }],
    });
    await Deno.remove(join(root, "runs", uuidOf("run-1"), "members", `${slotIdOf("e1", 0)}.json`));
    const reader = new RecordReader(root);
    const [run] = (await reader.scan()).runs;
    await assert.rejects(
      reader.member(run!, slotIdOf("e1", 0)),
      (e: Error & { code?: string }) =>
        e.code === "record-invalid" && /file is missing/.test(e.message),
    );
  }));

Deno.test("RecordReader refuses a record.json of a newer schema version", () =>
  withTempDir(async (root) => {
    await writeRun(root, { runId: "run-1", experimentId: "exp", startedAt: T0, slots: [] });
    const path = join(root, "record.json");
    const doc = JSON.parse(await Deno.readTextFile(path));
    await Deno.writeTextFile(path, JSON.stringify({ ...doc, schemaVersion: 2 }));
    await assert.rejects(
      new RecordReader(root).scan(),
      (e: Error & { code?: string }) => e.code === "record-version-unsupported",
    );
  }));

Deno.test("RecordReader ignores a Run whose complete marker is not a zero-byte file (REC-10)", () =>
  withTempDir(async (root) => {
    await writeRun(root, { runId: "run-1", experimentId: "exp", startedAt: T0, slots: [] });
    await Deno.writeTextFile(join(root, "runs", "run-1", "complete"), "x");
    const scan = await new RecordReader(root).scan();
    assert.deepEqual([scan.runs.length, scan.unpublished], [0, ["run-1"]]);
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
      carried: { originRunId: "run-0", attemptId: `a-${ordinal}` },
    }));
    await writer.begin([{
      header: runHeader(2, slots),
      slots,
    }]);
    assert.deepEqual(await writer.finish("completed"), ["run-1"]);
    const run = await json(join(root, "runs", "run-1", "run.json"));
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
