/**
 * RecordReader checks of published Runs (REC-5, REC-10, REC-11): documents that contradict each
 * other or their place are `record-invalid` naming the file, never a silent wrong answer.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type PublishedRun, RecordReader, slotIdOf } from "../../src/record/mod.ts";
import { uuidOf, writeRun } from "../_fakes/record.ts";
import { result } from "../_fakes/results.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

const T0 = Date.UTC(2026, 10, 29, 10, 0, 0);
const SLOT_0 = { slotId: slotIdOf("e1", 0), evalId: "e1", ordinal: 0 };
const [R0, R1, R2, R3, P, Q] = ["r0", "r1", "r2", "r3", "p", "q"].map(uuidOf) as [
  string,
  string,
  string,
  string,
  string,
  string,
];

/** r1 executed e1#0 (Attempt P) and e1#1 (Attempt Q); r2 carried e1#0 from r1. */
async function twoRuns(root: string): Promise<void> {
  await writeRun(root, {
    runId: R1,
    experimentId: "exp",
    startedAt: T0,
    slots: [
      { evalId: "e1", ordinal: 0, fill: { kind: "executed", result: result({ attemptId: P }) } },
      {
        evalId: "e1",
        ordinal: 1,
        fill: { kind: "executed", result: result({ attemptId: Q, ordinal: 1 }) },
      },
    ],
  });
  await writeRun(root, {
    runId: R2,
    experimentId: "exp",
    startedAt: T0 + 1000,
    slots: [{
      evalId: "e1",
      ordinal: 0,
      fill: { kind: "carried", originRunId: R1, attemptId: P },
    }],
  });
}

async function edit(path: string, change: (doc: Record<string, unknown>) => void): Promise<void> {
  const doc = JSON.parse(await Deno.readTextFile(path));
  change(doc);
  await Deno.writeTextFile(path, JSON.stringify(doc, null, 2) + "\n");
}

async function runOf(reader: RecordReader, runId: string): Promise<PublishedRun> {
  return (await reader.scan()).runs.find((r) => r.runId === runId)!;
}

/** Asserts `promise` rejects with `record-invalid` whose message starts with `path`. */
async function rejectsNaming(promise: Promise<unknown>, path: string, detail: RegExp) {
  await assert.rejects(promise, (e: Error & { code?: string }) => {
    assert.equal(e.code, "record-invalid");
    assert.ok(e.message.startsWith(`${path}: `), e.message);
    assert.match(e.message, detail);
    return true;
  });
}

Deno.test("RecordReader.slot() reads the member and the Attempt it references, across Runs", () =>
  withTempDir(async (root) => {
    await twoRuns(root);
    const reader = new RecordReader(root);
    const { member, stored } = await reader.slot(await runOf(reader, R2), SLOT_0);
    assert.deepEqual([member.action, stored?.doc.attemptId, stored?.verdict], [
      "carried",
      P,
      "passed",
    ]);
  }));

Deno.test("RecordReader.slot() rejects a member whose slotId differs from its file name", () =>
  withTempDir(async (root) => {
    await twoRuns(root);
    const path = join(root, "runs", R1, "members", `${SLOT_0.slotId}.json`);
    await edit(path, (doc) => doc.slotId = slotIdOf("e1", 1));
    const reader = new RecordReader(root);
    await rejectsNaming(reader.slot(await runOf(reader, R1), SLOT_0), path, /file name/);
  }));

Deno.test("RecordReader.slot() rejects a member that belongs to another slot of run.json", () =>
  withTempDir(async (root) => {
    await twoRuns(root);
    const path = join(root, "runs", R1, "members", `${SLOT_0.slotId}.json`);
    await edit(path, (doc) => doc.evalId = "e9");
    const reader = new RecordReader(root);
    await rejectsNaming(reader.slot(await runOf(reader, R1), SLOT_0), path, /expects e1#0/);
  }));

Deno.test("RecordReader.slot() rejects an executed member that references another Run (REC-5)", () =>
  withTempDir(async (root) => {
    await twoRuns(root);
    const path = join(root, "runs", R2, "members", `${SLOT_0.slotId}.json`);
    await edit(path, (doc) => doc.action = "executed");
    const reader = new RecordReader(root);
    await rejectsNaming(reader.slot(await runOf(reader, R2), SLOT_0), path, /this Run/);
  }));

Deno.test("RecordReader.slot() names the member when its origin Run is no longer published", () =>
  withTempDir(async (root) => {
    await twoRuns(root);
    await Deno.remove(join(root, "runs", R1, "complete"));
    const reader = new RecordReader(root);
    await rejectsNaming(
      reader.slot(await runOf(reader, R2), SLOT_0),
      join(root, "runs", R2, "members", `${SLOT_0.slotId}.json`),
      new RegExp(`run ${R1}, which is not a published Run`),
    );
  }));

Deno.test("RecordReader.slot() rejects a reference to the Attempt of another ordinal", () =>
  withTempDir(async (root) => {
    await twoRuns(root);
    const path = join(root, "runs", R2, "members", `${SLOT_0.slotId}.json`);
    await edit(path, (doc) => doc.attempt = { originRunId: R1, attemptId: Q });
    const reader = new RecordReader(root);
    await rejectsNaming(reader.slot(await runOf(reader, R2), SLOT_0), path, /not of this slot/);
  }));

Deno.test("RecordReader.attempt() rejects an attempt.json that names another Attempt", () =>
  withTempDir(async (root) => {
    await twoRuns(root);
    const path = join(root, "runs", R1, "attempts", P, "attempt.json");
    await edit(path, (doc) => doc.attemptId = Q);
    await rejectsNaming(new RecordReader(root).attempt(R1, P), path, /own directory/);
  }));

Deno.test("RecordReader.attempt() checks events.json too: truncated or malformed is record-invalid", () =>
  withTempDir(async (root) => {
    await twoRuns(root);
    const path = join(root, "runs", R1, "attempts", P, "events.json");
    const text = await Deno.readTextFile(path);
    await Deno.writeTextFile(path, text.slice(0, text.length - 10));
    await rejectsNaming(new RecordReader(root).attempt(R1, P), path, /invalid JSON/);
    await edit(path.replace(`/${P}/`, `/${Q}/`), (doc) => doc.turns = [null]);
    await rejectsNaming(
      new RecordReader(root).attempt(R1, Q),
      path.replace(`/${P}/`, `/${Q}/`),
      /turns\.0/,
    );
  }));

Deno.test("RecordReader.scan() rejects a run.json whose slotId does not match its eval and ordinal", () =>
  withTempDir(async (root) => {
    await twoRuns(root);
    const path = join(root, "runs", R1, "run.json");
    await edit(path, (doc) => {
      const slots = doc.expectedSlots as { slotId: string }[];
      slots[1]!.slotId = slots[0]!.slotId;
    });
    await rejectsNaming(new RecordReader(root).scan(), path, /expectedSlots\.1\.slotId/);
  }));

Deno.test("RecordReader.markers() sorts Runs by their complete marker without reading run.json", () =>
  withTempDir(async (root) => {
    await twoRuns(root);
    await Deno.writeTextFile(join(root, "runs", R1, "run.json"), "{");
    await Deno.mkdir(join(root, "runs", R0, "members"), { recursive: true });
    await Deno.mkdir(join(root, "runs", R3));
    await Deno.mkdir(join(root, "runs", R3, "complete"));
    assert.deepEqual(await new RecordReader(root).markers(), {
      published: [R1, R2],
      unpublished: [R0, R3],
    });
    await assert.rejects(new RecordReader(root).scan(), /record-invalid|invalid JSON/);
  }));
