/**
 * RecordReader checks of published Runs (REC-5, REC-10, REC-11): documents that contradict each
 * other or their place are `record-invalid` naming the file, never a silent wrong answer.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type PublishedRun, RecordReader, slotIdOf } from "../../src/record/mod.ts";
import { frame, scanLog } from "../../src/record/log.ts";
import { uuidOf, writeRun } from "../_fakes/record.ts";
import { result } from "../_fakes/results.ts";
import { mkfifo } from "../_helpers/fuzz_record.ts";
import { logPathOf } from "../_helpers/record_files.ts";
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

type Json = Record<string, unknown>;

const memberOf = (r: Json) => r.record === "member" ? r.member as Json : undefined;
const attemptOf = (r: Json) => r.record === "attempt" ? r.attempt as Json : undefined;

/** The Record root of a Run's log path (`<root>/runs/<RunId>/records.log`). */
function rootOfLog(logPath: string): string {
  return join(logPath, "..", "..", "..");
}

/** Rewrites a log with `records`, each framed whole (a valid checksum): damage a reader must see. */
async function writeRecords(path: string, records: readonly Json[]): Promise<void> {
  const parts = records.map((r) => frame(JSON.stringify(r)));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  await Deno.writeFile(path, out);
}

/** Changes records of a log in place and frames them again. */
async function editLog(path: string, change: (record: Json) => void): Promise<void> {
  const records = scanLog(await Deno.readFile(path)).entries.map((e) => e.value);
  records.forEach(change);
  await writeRecords(path, records);
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

Deno.test("RecordReader.slot() rejects a log with a second member for one slot", () =>
  withTempDir(async (root) => {
    await twoRuns(root);
    const path = logPathOf(root, R1);
    await editLog(path, (r) => {
      if (memberOf(r)?.slotId === SLOT_0.slotId) memberOf(r)!.slotId = slotIdOf("e1", 1);
    });
    const reader = new RecordReader(root);
    await rejectsNaming(reader.slot(await runOf(reader, R1), SLOT_0), path, /second member/);
  }));

Deno.test("RecordReader.slot() rejects a member that belongs to another slot of run.json", () =>
  withTempDir(async (root) => {
    await twoRuns(root);
    const path = logPathOf(root, R1);
    await editLog(path, (r) => {
      if (memberOf(r)?.slotId === SLOT_0.slotId) memberOf(r)!.evalId = "e9";
    });
    const reader = new RecordReader(root);
    await rejectsNaming(reader.slot(await runOf(reader, R1), SLOT_0), path, /expects e1#0/);
  }));

Deno.test("RecordReader.slot() rejects an executed member that references another Run (REC-5)", () =>
  withTempDir(async (root) => {
    await twoRuns(root);
    const path = logPathOf(root, R2);
    await editLog(path, (r) => {
      if (memberOf(r)?.slotId === SLOT_0.slotId) memberOf(r)!.action = "executed";
    });
    const reader = new RecordReader(root);
    await rejectsNaming(reader.slot(await runOf(reader, R2), SLOT_0), path, /this Run/);
  }));

Deno.test("RecordReader.slot() names the member's log when its origin Run is no longer published", () =>
  withTempDir(async (root) => {
    await twoRuns(root);
    await Deno.remove(join(root, "runs", R1, "complete"));
    const reader = new RecordReader(root);
    await rejectsNaming(
      reader.slot(await runOf(reader, R2), SLOT_0),
      logPathOf(root, R2),
      new RegExp(`run ${R1}, which is not a published Run`),
    );
  }));

Deno.test("RecordReader.slot() rejects a reference to the Attempt of another ordinal", () =>
  withTempDir(async (root) => {
    await twoRuns(root);
    const path = logPathOf(root, R2);
    await editLog(path, (r) => {
      if (memberOf(r)?.slotId === SLOT_0.slotId) {
        memberOf(r)!.attempt = { originRunId: R1, attemptId: Q };
      }
    });
    const reader = new RecordReader(root);
    await rejectsNaming(reader.slot(await runOf(reader, R2), SLOT_0), path, /not of this slot/);
  }));

Deno.test("RecordReader.attempt() rejects an attempt record that names another Run", () =>
  withTempDir(async (root) => {
    await twoRuns(root);
    const path = logPathOf(root, R1);
    await editLog(path, (r) => {
      if (attemptOf(r)?.attemptId === P) attemptOf(r)!.originRunId = R2;
    });
    await rejectsNaming(new RecordReader(root).attempt(R1, P), path, new RegExp(`names run ${R2}`));
  }));

Deno.test("RecordReader.attempt() rejects a log that records one Attempt twice", () =>
  withTempDir(async (root) => {
    await twoRuns(root);
    const path = logPathOf(root, R1);
    await editLog(path, (r) => {
      if (attemptOf(r)?.attemptId === Q) attemptOf(r)!.attemptId = P;
    });
    await rejectsNaming(new RecordReader(root).attempt(R1, P), path, /recorded twice/);
  }));

Deno.test("RecordReader.attempt() checks the events too: a damaged or malformed record is record-invalid", async (t) => {
  await t.step("a flipped byte in the events of a record", () =>
    withTempDir(async (root) => {
      await twoRuns(root);
      const path = logPathOf(root, R1);
      const bytes = await Deno.readFile(path);
      const at = new TextDecoder().decode(bytes).indexOf('"niceeval.events"');
      assert.ok(at > 0);
      bytes[at + 1] = "N".charCodeAt(0);
      await Deno.writeFile(path, bytes);
      await rejectsNaming(new RecordReader(root).attempt(R1, P), path, /no whole record/);
    }));
  await t.step(
    "a well-framed record whose events are malformed",
    () =>
      withTempDir(async (root) => {
        await twoRuns(root);
        const path = logPathOf(root, R1);
        await editLog(path, (r) => {
          if (attemptOf(r)?.attemptId === Q) (r.events as Json).turns = [null];
        });
        await rejectsNaming(new RecordReader(root).attempt(R1, Q), path, /events: turns\.0/);
      }),
  );
});

Deno.test("RecordReader.events() rereads a record and rejects a log changed since it was indexed", () =>
  withTempDir(async (root) => {
    await twoRuns(root);
    const reader = new RecordReader(root);
    const stored = await reader.attempt(R1, P);
    assert.equal(stored.log?.path, logPathOf(root, R1));
    assert.equal((await reader.events(stored)).format, "niceeval.events");
    // Same length, other bytes where the record was: the frame no longer checks out.
    const bytes = await Deno.readFile(stored.log!.path);
    bytes.fill(0x78, stored.log!.offset, stored.log!.offset + stored.log!.length);
    await Deno.writeFile(stored.log!.path, bytes);
    const fresh = new RecordReader(root);
    await rejectsNaming(fresh.events(stored), stored.log!.path, /changed while being read/);
  }));

Deno.test("RecordReader rejects a published log that is damaged, naming records.log", async (t) => {
  const cases: [string, (path: string) => Promise<void>, RegExp][] = [
    ["truncated in its last record", async (path) => {
      const bytes = await Deno.readFile(path);
      await Deno.writeFile(path, bytes.subarray(0, bytes.length - 3));
    }, /byte\(s\) that are no whole record/],
    ["with a wrong checksum", async (path) => {
      const text = await Deno.readTextFile(path);
      const [length, crc] = text.split(" ");
      const wrong = crc!.replace(/^./, (c) => c === "0" ? "1" : "0");
      await Deno.writeTextFile(path, `${length} ${wrong}${text.slice(length!.length + 9)}`);
    }, /no whole record/],
    ["reordered: the end record before a member", async (path) => {
      const entries = scanLog(await Deno.readFile(path)).entries.map((e) => e.value);
      const end = entries.pop()!;
      await writeRecords(path, [end, ...entries]);
    }, /follows the end record/],
    ["without its end record", async (path) => {
      const entries = scanLog(await Deno.readFile(path)).entries.map((e) => e.value);
      await writeRecords(path, entries.filter((r) => r.record !== "end"));
    }, /has no end record/],
    ["holding an Attempt of another Run", async (path) => {
      const other = scanLog(await Deno.readFile(logPathOf(rootOfLog(path), R3))).entries
        .map((e) => e.value).filter((r) => r.record === "attempt");
      const entries = scanLog(await Deno.readFile(path)).entries.map((e) => e.value);
      await writeRecords(path, [...other, ...entries]);
    }, new RegExp(`names run ${R3}`)],
    ["with an unknown record", async (path) => {
      const entries = scanLog(await Deno.readFile(path)).entries.map((e) => e.value);
      await writeRecords(path, [{ record: "reservation" }, ...entries]);
    }, /unknown record "reservation"/],
    ["replaced by a symbolic link", async (path) => {
      await Deno.rename(path, `${path}.real`);
      await Deno.symlink(`${path}.real`, path);
    }, /symbolic link/],
    ["replaced by a FIFO", async (path) => {
      await Deno.remove(path);
      await mkfifo(path);
    }, /not a regular file/],
    ["missing", (path) => Deno.remove(path), /file is missing/],
  ];
  for (const [name, damage, detail] of cases) {
    await t.step(name, () =>
      withTempDir(async (root) => {
        await twoRuns(root);
        await writeRun(root, {
          runId: R3,
          experimentId: "exp",
          startedAt: T0 + 2000,
          slots: [{
            evalId: "e1",
            ordinal: 0,
            fill: { kind: "executed", result: result({ attemptId: uuidOf("other") }) },
          }],
        });
        const path = logPathOf(root, R1);
        await damage(path);
        const reader = new RecordReader(root);
        const run = await runOf(reader, R1);
        await rejectsNaming(reader.details(run), path, detail);
        await rejectsNaming(reader.slot(run, SLOT_0), path, detail);
      }));
  }
});

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
