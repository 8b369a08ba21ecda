/**
 * Salvage of Runs left unpublished by a process that died (`salvageRuns`): Runs written by the
 * real writer and never finished, their log files closed as a dying process's are, then sealed.
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { RecordReader, RecordWriter, salvageRuns, slotIdOf } from "../../src/record/mod.ts";
import { frame, scanLog } from "../../src/record/log.ts";
import { type LogOpener, openLogFile } from "../../src/record/writer.ts";
import type { LogFile } from "../../src/record/_run_log.ts";
import { createFakeClock } from "../_fakes/clock.ts";
import { createSeededRandom } from "../_fakes/random.ts";
import { result } from "../_fakes/results.ts";
import { passRunSpec, uuidOf } from "../_fakes/record.ts";
import { mkfifo } from "../_helpers/fuzz_record.ts";
import { concatBytes, logPathOf, readRunFiles } from "../_helpers/record_files.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

const T0 = Date.UTC(2026, 10, 29, 10, 0, 0);
const T_SALVAGE = T0 + 3_600_000;
const RUN = uuidOf("crashed-run");
const V1_FIXTURE = new URL("../fixtures/record_v1_project/record/", import.meta.url);

/** How the dead process left one slot. */
type Left =
  | { readonly kind: "settled"; readonly verdict: "passed" | "failed" }
  | { readonly kind: "started" }
  | { readonly kind: "not-dispatched" }
  | { readonly kind: "nothing" };

const attemptIdOf = (position: number) => uuidOf(`attempt-${position}`);

/**
 * Writes Run `runId` through the real writer as a process that dies after its last flush: the
 * slots are left as `left` says, every appended record is durable, `finish` never runs, and the
 * log files are closed as the operating system closes a dead process's files.
 */
async function crashedRun(
  root: string,
  left: readonly Left[],
  options: { runId?: string; flushEach?: boolean } = {},
): Promise<void> {
  const runId = options.runId ?? RUN;
  const clock = createFakeClock(T0);
  const opened: LogFile[] = [];
  const openLog: LogOpener = async (path) => {
    const file = await openLogFile(path);
    opened.push(file);
    return file;
  };
  const writer = new RecordWriter(root, { clock, random: createSeededRandom(5), openLog });
  await writer.begin([passRunSpec(runId, T0, left.map((_, i) => `e${i}`))]);
  for (const [position, how] of left.entries()) {
    const slot = { position, experimentId: "exp", evalId: `e${position}`, ordinal: 0 };
    const attemptId = attemptIdOf(position);
    if (how.kind === "settled" || how.kind === "started") {
      writer.handle({ type: "attempt_start", at: clock.now(), slot, attemptId });
    }
    if (how.kind === "settled") {
      const settled = result({ attemptId, evalId: `e${position}`, verdict: how.verdict });
      writer.handle({ type: "attempt_end", at: clock.now(), slot, result: settled });
    }
    if (how.kind === "not-dispatched") {
      writer.handle({ type: "not_dispatched", at: clock.now(), slot, reason: "early-exit" });
    }
    // Each slot's records in a batch of their own, synced before the next slot's are written.
    if (options.flushEach) await writer.flush();
  }
  await writer.flush();
  assert.equal(writer.failure, undefined);
  for (const file of opened) file.close();
}

/**
 * Every path below `root` with its bytes (regular files), its target (symbolic links) or its kind,
 * sorted. A FIFO is never opened.
 */
async function snapshot(root: string): Promise<[string, Uint8Array | string][]> {
  const out: [string, Uint8Array | string][] = [];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(dir)) {
      const path = join(dir, e.name);
      const name = relative(root, path);
      if (e.isDirectory) {
        out.push([name, "directory"]);
        await walk(path);
      } else if (e.isSymlink) out.push([name, `-> ${await Deno.readLink(path)}`]);
      else if (e.isFile) out.push([name, await Deno.readFile(path)]);
      else out.push([name, "special file"]);
    }
  };
  await walk(root);
  return out.sort(([a], [b]) => a < b ? -1 : 1);
}

async function copyDir(from: string | URL, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const e of Deno.readDir(from)) {
    const source = from instanceof URL ? new URL(e.name + (e.isDirectory ? "/" : ""), from) : join(
      from,
      e.name,
    );
    if (e.isDirectory) await copyDir(source, join(to, e.name));
    else await Deno.copyFile(source, join(to, e.name));
  }
}

/** Rewrites a log with the given records, each framed whole. */
async function writeRecords(path: string, records: readonly Record<string, unknown>[]) {
  await Deno.writeFile(path, concatBytes(records.map((r) => frame(JSON.stringify(r)))));
}

const salvage = (root: string, dryRun = false) =>
  salvageRuns(new RecordReader(root), { clock: createFakeClock(T_SALVAGE), dryRun });

Deno.test("salvageRuns() keeps settled Attempts, interrupts the other slots and publishes the Run as crashed", () =>
  withTempDir(async (root) => {
    await crashedRun(root, [
      { kind: "settled", verdict: "passed" },
      { kind: "settled", verdict: "failed" },
      { kind: "started" },
      { kind: "nothing" },
      { kind: "not-dispatched" },
    ]);
    const before = await Deno.readFile(logPathOf(root, RUN));
    assert.deepEqual(await new RecordReader(root).markers(), { published: [], unpublished: [RUN] });
    assert.deepEqual(await salvage(root), [
      { kind: "salvaged", runId: RUN, kept: 2, interrupted: 2 },
    ]);
    const files = await readRunFiles(root, RUN);
    assert.equal(files.published, true);
    assert.equal(files.tornBytes, 0);
    // Nothing that was synced is rewritten: the old log is a prefix of the sealed one.
    const after = await Deno.readFile(logPathOf(root, RUN));
    assert.deepEqual(after.subarray(0, before.length), before);
    assert.deepEqual(files.end, {
      record: "end",
      completedAt: new Date(T_SALVAGE).toISOString(),
      completion: "crashed",
    });
    const actions = [0, 1, 2, 3, 4].map((p) => files.members.get(slotIdOf(`e${p}`, 0))?.action);
    assert.deepEqual(actions, [
      "executed",
      "executed",
      "interrupted",
      "interrupted",
      "not-dispatched",
    ]);
    assert.deepEqual([...files.attempts.keys()].sort(), [attemptIdOf(0), attemptIdOf(1)].sort());

    const reader = new RecordReader(root);
    const scan = await reader.scan();
    assert.deepEqual([scan.runs.map((r) => r.runId), scan.unpublished], [[RUN], []]);
    const run = scan.runs[0]!;
    assert.equal((await reader.details(run)).completion, "crashed");
    const verdicts = [];
    for (const slot of run.doc.expectedSlots) {
      const { member, stored } = await reader.slot(run, slot);
      verdicts.push([member.action, stored?.verdict ?? null]);
    }
    assert.deepEqual(verdicts, [
      ["executed", "passed"],
      ["executed", "failed"],
      ["interrupted", null],
      ["interrupted", null],
      ["not-dispatched", null],
    ]);
    assert.deepEqual(await salvage(root), [], "a salvaged Run is published: nothing is left");
  }));

Deno.test("salvageRuns() cuts off a torn tail: no torn record is ever read back", async (t) => {
  // A whole attempt record of slot e1, of which the crash left only a part.
  const tornFrame = async (root: string) => {
    const records = scanLog(await Deno.readFile(logPathOf(root, RUN))).entries.map((e) => e.value);
    const attempt = structuredClone(records.find((r) => r.record === "attempt")!);
    Object.assign(attempt.attempt as object, {
      attemptId: attemptIdOf(1),
      evalId: "e1",
      slotId: slotIdOf("e1", 0),
    });
    return frame(JSON.stringify(attempt));
  };
  for (const cut of ["1 byte", "half", "all but the newline"]) {
    await t.step(cut, () =>
      withTempDir(async (root) => {
        await crashedRun(root, [{ kind: "settled", verdict: "passed" }, { kind: "started" }]);
        const path = logPathOf(root, RUN);
        const synced = await Deno.readFile(path);
        const whole = await tornFrame(root);
        const keep = cut === "1 byte" ? 1 : cut === "half" ? whole.length >> 1 : whole.length - 1;
        await Deno.writeFile(path, concatBytes([synced, whole.subarray(0, keep)]));
        assert.equal((await readRunFiles(root, RUN)).tornBytes, keep);
        assert.deepEqual(await salvage(root), [
          { kind: "salvaged", runId: RUN, kept: 1, interrupted: 1 },
        ]);
        const files = await readRunFiles(root, RUN);
        assert.equal(files.tornBytes, 0);
        assert.deepEqual([...files.attempts.keys()], [attemptIdOf(0)]);
        assert.equal(files.members.get(slotIdOf("e1", 0))?.action, "interrupted");
        const after = await Deno.readFile(path);
        assert.deepEqual(after.subarray(0, synced.length), synced);
        const reader = new RecordReader(root);
        const [run] = (await reader.scan()).runs;
        assert.deepEqual(await reader.attemptIds(run!), [attemptIdOf(0)]);
        await assert.rejects(reader.attempt(RUN, attemptIdOf(1)), /has no Attempt/);
      }));
  }
});

Deno.test("salvageRuns() gives a settled Attempt whose member was never written its executed member", () =>
  withTempDir(async (root) => {
    await crashedRun(root, [{ kind: "settled", verdict: "failed" }, { kind: "nothing" }]);
    // The crash came between the Attempt's record and its member's.
    const path = logPathOf(root, RUN);
    const records = scanLog(await Deno.readFile(path)).entries.map((e) => e.value);
    await writeRecords(path, records.filter((r) => r.record !== "member"));
    assert.deepEqual(await salvage(root), [
      { kind: "salvaged", runId: RUN, kept: 1, interrupted: 1 },
    ]);
    const member = (await readRunFiles(root, RUN)).members.get(slotIdOf("e0", 0));
    assert.deepEqual([member?.action, member?.attempt], [
      "executed",
      { originRunId: RUN, attemptId: attemptIdOf(0) },
    ]);
    const reader = new RecordReader(root);
    const [run] = (await reader.scan()).runs;
    const { stored } = await reader.slot(run!, {
      slotId: slotIdOf("e0", 0),
      evalId: "e0",
      ordinal: 0,
    });
    assert.equal(stored?.verdict, "failed");
  }));

Deno.test("salvageRuns() only adds the marker to a log that already has its end record", () =>
  withTempDir(async (root) => {
    await crashedRun(root, [{ kind: "settled", verdict: "passed" }]);
    // The crash came after the end record was durable, before `complete` was created.
    const path = logPathOf(root, RUN);
    const records = scanLog(await Deno.readFile(path)).entries.map((e) => e.value);
    await writeRecords(path, [...records, {
      record: "end",
      completedAt: new Date(T0 + 5000).toISOString(),
      completion: "completed",
    }]);
    const before = await Deno.readFile(path);
    assert.deepEqual(await salvage(root), [
      { kind: "salvaged", runId: RUN, kept: 1, interrupted: 0 },
    ]);
    assert.deepEqual(await Deno.readFile(path), before);
    const files = await readRunFiles(root, RUN);
    assert.deepEqual([files.published, files.end?.completion], [true, "completed"]);
  }));

Deno.test("salvageRuns({ dryRun }) writes nothing and counts what a salvage does", () =>
  withTempDir(async (root) => {
    await crashedRun(root, [
      { kind: "settled", verdict: "passed" },
      { kind: "started" },
      { kind: "nothing" },
    ]);
    const path = logPathOf(root, RUN);
    await Deno.writeFile(path, new Uint8Array([0x39, 0x39, 0x20]), { append: true });
    const empty = uuidOf("empty-run");
    await Deno.mkdir(join(root, "runs", empty));
    await Deno.writeFile(logPathOf(root, empty), new Uint8Array());
    const before = await snapshot(root);
    const counted = await salvage(root, true);
    assert.deepEqual(await snapshot(root), before);
    const byRun = (a: { runId: string }, b: { runId: string }) => a.runId < b.runId ? -1 : 1;
    assert.deepEqual(
      [...counted].sort(byRun),
      [
        { kind: "salvaged", runId: RUN, kept: 1, interrupted: 2 },
        { kind: "empty", runId: empty },
      ].sort(byRun),
    );
    assert.deepEqual(await salvage(root), counted);
    assert.notDeepEqual(await snapshot(root), before);
  }));

Deno.test("salvageRuns() removes a Run directory that holds no header and at most an empty log", async (t) => {
  for (const holds of ["nothing", "an empty log"]) {
    await t.step(holds, () =>
      withTempDir(async (root) => {
        await crashedRun(root, [{ kind: "nothing" }], { runId: uuidOf("other") });
        await Deno.remove(join(root, "runs", uuidOf("other")), { recursive: true });
        const empty = uuidOf("empty-run");
        await Deno.mkdir(join(root, "runs", empty));
        if (holds !== "nothing") await Deno.writeFile(logPathOf(root, empty), new Uint8Array());
        assert.deepEqual(await salvage(root), [{ kind: "empty", runId: empty }]);
        await assert.rejects(Deno.lstat(join(root, "runs", empty)), Deno.errors.NotFound);
      }));
  }
});

Deno.test("salvageRuns() skips a Run without a header whose log holds records, leaving it as it is", () =>
  withTempDir(async (root) => {
    await crashedRun(root, [{ kind: "settled", verdict: "passed" }]);
    await Deno.remove(join(root, "runs", RUN, "run.json"));
    const before = await snapshot(root);
    assert.deepEqual(await salvage(root), [
      { kind: "skipped", runId: RUN, reason: "run.json is missing" },
    ]);
    assert.deepEqual(await snapshot(root), before);
  }));

Deno.test("salvageRuns() skips an unpublished layout-1 Run and leaves it as it is", () =>
  withTempDir(async (root) => {
    await copyDir(V1_FIXTURE, root);
    const [v1] = (await new RecordReader(root).markers()).published;
    await Deno.remove(join(root, "runs", v1!, "complete"));
    const before = await snapshot(root);
    const outcomes = await salvage(root);
    assert.deepEqual(outcomes.map((o) => [o.kind, o.runId]), [["skipped", v1]]);
    assert.match((outcomes[0] as { reason: string }).reason, /layout-1/);
    assert.deepEqual(await snapshot(root), before);
  }));

Deno.test("salvageRuns() skips a Run whose log is damaged before its end and leaves it as it is", async (t) => {
  const damages: [string, (records: Record<string, unknown>[]) => Record<string, unknown>[]][] = [
    ["an unknown record in the middle", (r) => [r[0]!, { record: "reservation" }, ...r.slice(1)]],
    ["an Attempt of another Run in the middle", (r) => {
      const other = structuredClone(r.find((x) => x.record === "attempt")!);
      Object.assign(other.attempt as object, { originRunId: uuidOf("elsewhere") });
      return [r[0]!, other, ...r.slice(1)];
    }],
    ["a record after the end record", (r) => [
      ...r,
      { record: "end", completedAt: new Date(T0).toISOString(), completion: "completed" },
      r[0]!,
    ]],
    ["two members for one slot", (r) => [...r, r.find((x) => x.record === "member")!]],
  ];
  for (const [name, damage] of damages) {
    await t.step(name, () =>
      withTempDir(async (root) => {
        await crashedRun(root, [
          { kind: "settled", verdict: "passed" },
          { kind: "settled", verdict: "passed" },
          { kind: "nothing" },
        ]);
        const path = logPathOf(root, RUN);
        await writeRecords(
          path,
          damage(scanLog(await Deno.readFile(path)).entries.map((e) => e.value)),
        );
        const before = await snapshot(root);
        const outcomes = await salvage(root);
        assert.deepEqual(outcomes.map((o) => [o.kind, o.runId]), [["skipped", RUN]]);
        assert.match((outcomes[0] as { reason: string }).reason, /^records\.log: record \d+/);
        assert.deepEqual(await snapshot(root), before);
      }));
  }
});

Deno.test("salvageRuns() skips a Run whose log has a damaged frame followed by later synced batches", () =>
  withTempDir(async (root) => {
    await crashedRun(root, [
      { kind: "settled", verdict: "passed" },
      { kind: "settled", verdict: "passed" },
      { kind: "nothing" },
    ], { flushEach: true });
    // A flipped byte inside the member of e0, whose batch was synced before e1's was written: the
    // whole records after it are synced Attempts, not the torn tail of an unsynced batch.
    const path = logPathOf(root, RUN);
    const bytes = await Deno.readFile(path);
    const entries = scanLog(bytes).entries;
    assert.deepEqual(entries.map((e) => e.value.record), [
      "attempt",
      "member",
      "attempt",
      "member",
    ]);
    const damaged = entries[1]!.offset + 20;
    bytes[damaged] = bytes[damaged]! ^ 0x01;
    await Deno.writeFile(path, bytes);
    const before = await snapshot(root);
    const outcomes = await salvage(root);
    assert.deepEqual(outcomes.map((o) => [o.kind, o.runId]), [["skipped", RUN]]);
    assert.deepEqual(await snapshot(root), before);
  }));

Deno.test("salvageRuns() skips a Run whose records.log is not a regular file and leaves it as it is", async (t) => {
  const kinds: [string, (path: string, root: string) => Promise<void>][] = [
    ["a symbolic link to a log outside the Run", async (path, root) => {
      await Deno.rename(path, join(root, "elsewhere.log"));
      await Deno.symlink(join(root, "elsewhere.log"), path);
    }],
    ["a FIFO", async (path) => {
      await Deno.remove(path);
      await mkfifo(path);
    }],
    ["a directory", async (path) => {
      await Deno.remove(path);
      await Deno.mkdir(path);
    }],
  ];
  for (const [name, replace] of kinds) {
    await t.step(name, () =>
      withTempDir(async (root) => {
        await crashedRun(root, [{ kind: "settled", verdict: "passed" }, { kind: "nothing" }]);
        await replace(logPathOf(root, RUN), root);
        const before = await snapshot(root);
        const outcomes = await salvage(root);
        assert.deepEqual(outcomes, [{
          kind: "skipped",
          runId: RUN,
          reason: "records.log: is not a regular file",
        }]);
        assert.deepEqual(await snapshot(root), before);
      }));
  }
});

Deno.test("salvageRuns() skips a Run whose complete is not a zero-byte file, and salvages the others", async (t) => {
  const markers: [string, (path: string) => Promise<void>][] = [
    ["a file with bytes", (path) => Deno.writeTextFile(path, "x")],
    ["a directory", (path) => Deno.mkdir(path)],
    ["a FIFO", (path) => mkfifo(path)],
  ];
  for (const [name, make] of markers) {
    await t.step(name, () =>
      withTempDir(async (root) => {
        await crashedRun(root, [{ kind: "settled", verdict: "passed" }, { kind: "nothing" }]);
        await crashedRun(root, [{ kind: "settled", verdict: "passed" }], {
          runId: uuidOf("other"),
        });
        // Not a publish signal (REC-10): the Run is unpublished, and no salvage can publish it.
        await make(join(root, "runs", RUN, "complete"));
        const before = (await snapshot(root)).filter(([path]) => path.includes(RUN));
        const outcomes = await salvage(root);
        assert.deepEqual(
          outcomes.find((o) => o.runId === uuidOf("other")),
          { kind: "salvaged", runId: uuidOf("other"), kept: 1, interrupted: 0 },
        );
        assert.equal(outcomes.find((o) => o.runId === RUN)?.kind, "skipped");
        assert.deepEqual((await snapshot(root)).filter(([path]) => path.includes(RUN)), before);
      }));
  }
});
