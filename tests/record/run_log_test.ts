/**
 * Group commit of a Run's log (`RunLog`) on a fake file and the fake clock: when a batch closes,
 * how batches that close during a sync are written, when an append resolves, and how a failed
 * write or sync reaches every waiter.
 */
import assert from "node:assert/strict";
import { type LogFile, RunLog } from "../../src/record/_run_log.ts";
import { scanLog } from "../../src/record/log.ts";
import { createFakeClock } from "../_fakes/clock.ts";
import { createSeededRandom } from "../_fakes/random.ts";

/**
 * A log file that keeps what is written and lists each write (with its record count) and sync.
 * Syncs finish when the test resolves them, unless `autoSync`; `failWrite` / `failSync` make the
 * next writes or syncs fail.
 */
function fakeLogFile(options: { autoSync?: boolean } = {}) {
  const ops: string[] = [];
  const chunks: Uint8Array[] = [];
  const syncs: PromiseWithResolvers<void>[] = [];
  const state = {
    failWrite: undefined as Error | undefined,
    failSync: undefined as Error | undefined,
    closed: false,
  };
  const file: LogFile = {
    write: (bytes) => {
      if (state.failWrite) return Promise.reject(state.failWrite);
      chunks.push(bytes.slice());
      ops.push(`write ${scanLog(bytes).entries.length}`);
      return Promise.resolve(bytes.length);
    },
    syncData: () => {
      ops.push("sync");
      if (state.failSync) return Promise.reject(state.failSync);
      const done = Promise.withResolvers<void>();
      syncs.push(done);
      if (options.autoSync) done.resolve();
      return done.promise;
    },
    close: () => {
      state.closed = true;
    },
  };
  /** The records written so far, in order. */
  const records = () => {
    const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
    let at = 0;
    for (const c of chunks) {
      all.set(c, at);
      at += c.length;
    }
    const scan = scanLog(all);
    assert.equal(scan.tornBytes, 0);
    return scan.entries.map((e) => e.value);
  };
  return { file, ops, syncs, state, records };
}

/** Tracks whether a promise has settled, and how. */
function track(promise: Promise<void>) {
  const state = { settled: false, error: undefined as unknown };
  promise.then(
    () => state.settled = true,
    (error) => {
      state.settled = true;
      state.error = error;
    },
  );
  return state;
}

const line = (i: number) => JSON.stringify({ record: "member", i });

Deno.test("RunLog.append() closes a batch at batchRecords records: one write and one sync", async () => {
  const clock = createFakeClock();
  const log = fakeLogFile({ autoSync: true });
  const runLog = new RunLog(log.file, clock, { batchRecords: 3, batchMs: 25 });
  const appended = [0, 1, 2].map((i) => track(runLog.append(line(i))));
  await clock.flush();
  assert.deepEqual(log.ops, ["write 3", "sync"]);
  assert.ok(appended.every((a) => a.settled && a.error === undefined));
  assert.equal(clock.countTimers(), 0, "a full batch leaves no timer");
  const fourth = track(runLog.append(line(3)));
  await clock.flush();
  assert.deepEqual([log.ops.length, fourth.settled, clock.countTimers()], [2, false, 1]);
  await runLog.close();
  assert.deepEqual(log.ops, ["write 3", "sync", "write 1", "sync"]);
  assert.deepEqual(log.records().map((r) => r.i), [0, 1, 2, 3]);
  assert.equal(log.state.closed, true);
});

Deno.test("RunLog.append() closes a batch batchMs after its first record", async () => {
  const clock = createFakeClock();
  const log = fakeLogFile({ autoSync: true });
  const runLog = new RunLog(log.file, clock, { batchRecords: 256, batchMs: 25 });
  const first = track(runLog.append(line(0)));
  await clock.tickAsync(10);
  const second = track(runLog.append(line(1)));
  await clock.tickAsync(14);
  assert.deepEqual([log.ops, first.settled, second.settled], [[], false, false]);
  await clock.tickAsync(1);
  assert.deepEqual(log.ops, ["write 2", "sync"]);
  assert.deepEqual([first.settled, second.settled], [true, true]);
  assert.equal(clock.countTimers(), 0);
  assert.equal(runLog.syncs, 1);
});

Deno.test("RunLog writes the batches that close during a sync together, in one write and one sync", async () => {
  const clock = createFakeClock();
  const log = fakeLogFile();
  const runLog = new RunLog(log.file, clock, { batchRecords: 1 });
  const a = track(runLog.append(line(0)));
  await clock.flush();
  assert.deepEqual(log.ops, ["write 1", "sync"]);
  const later = [1, 2, 3].map((i) => track(runLog.append(line(i))));
  await clock.flush();
  assert.deepEqual(log.ops, ["write 1", "sync"], "nothing is written while a sync runs");
  assert.equal(runLog.unsynced, 4);
  log.syncs[0]!.resolve();
  await clock.flush();
  assert.equal(a.settled, true);
  assert.deepEqual(log.ops, ["write 1", "sync", "write 3", "sync"]);
  assert.ok(later.every((l) => !l.settled));
  log.syncs[1]!.resolve();
  await clock.flush();
  assert.ok(later.every((l) => l.settled && l.error === undefined));
  assert.deepEqual([runLog.unsynced, runLog.syncs], [0, 2]);
  assert.deepEqual(log.records().map((r) => r.i), [0, 1, 2, 3]);
});

Deno.test("RunLog.append() resolves only once its batch's sync has resolved", async () => {
  const clock = createFakeClock();
  const log = fakeLogFile();
  const runLog = new RunLog(log.file, clock, { batchRecords: 2 });
  const appended = [0, 1].map((i) => track(runLog.append(line(i))));
  for (let i = 0; i < 5; i++) await clock.flush();
  // Written, but the sync is still running: not durable yet.
  assert.deepEqual(log.ops, ["write 2", "sync"]);
  assert.ok(appended.every((a) => !a.settled));
  assert.equal(runLog.unsynced, 2);
  log.syncs[0]!.resolve();
  await clock.flush();
  assert.ok(appended.every((a) => a.settled && a.error === undefined));
  assert.equal(runLog.unsynced, 0);
});

Deno.test("RunLog rejects every waiter of a batch whose write fails, and every later append", async () => {
  const clock = createFakeClock();
  const log = fakeLogFile({ autoSync: true });
  const runLog = new RunLog(log.file, clock, { batchRecords: 2 });
  const failure = new Error("EIO: write");
  log.state.failWrite = failure;
  const batch = [0, 1].map((i) => track(runLog.append(line(i))));
  const queued = track(runLog.append(line(2)));
  await runLog.flush();
  assert.ok(batch.every((b) => b.error === failure));
  assert.equal(queued.error, failure, "a batch queued behind the failed one fails too");
  log.state.failWrite = undefined;
  await assert.rejects(runLog.append(line(3)), (e) => e === failure);
  assert.deepEqual([log.ops, runLog.unsynced], [[], 0]);
});

Deno.test("RunLog rejects every waiter of a batch whose sync fails, and every later append", async () => {
  const clock = createFakeClock();
  const log = fakeLogFile();
  const runLog = new RunLog(log.file, clock, { batchRecords: 2 });
  const failure = new Error("EIO: sync");
  log.state.failSync = failure;
  const batch = [0, 1].map((i) => track(runLog.append(line(i))));
  await clock.flush();
  const queued = track(runLog.append(line(2)));
  await runLog.flush();
  assert.ok(batch.every((b) => b.error === failure));
  assert.equal(queued.error, failure);
  log.state.failSync = undefined;
  await assert.rejects(runLog.append(line(3)), (e) => e === failure);
  // The failed batch's bytes went out once; nothing is written or synced after the failure.
  assert.deepEqual(log.ops, ["write 2", "sync"]);
});

Deno.test("RunLog.flush() resolves once every record appended so far is durable", async () => {
  const clock = createFakeClock();
  const log = fakeLogFile();
  const runLog = new RunLog(log.file, clock, { batchRecords: 256, batchMs: 25 });
  await runLog.flush();
  assert.deepEqual(log.ops, [], "flushing an empty log writes nothing");
  const appended = [0, 1, 2].map((i) => track(runLog.append(line(i))));
  const flushed = track(runLog.flush());
  await clock.flush();
  assert.deepEqual(log.ops, ["write 3", "sync"]);
  assert.equal(clock.countTimers(), 0, "flush closes the open batch and its timer");
  assert.equal(flushed.settled, false);
  const more = track(runLog.append(line(3)));
  log.syncs[0]!.resolve();
  await clock.flush();
  assert.ok(appended.every((a) => a.settled));
  // A record appended after flush() was called may complete later: flush waits for its own.
  assert.equal(more.settled, false);
  assert.equal(flushed.settled, true);
  const second = track(runLog.flush());
  await clock.flush();
  assert.equal(second.settled, false);
  log.syncs[1]!.resolve();
  await clock.flush();
  assert.deepEqual([more.settled, second.settled, runLog.unsynced], [true, true, 0]);
});

Deno.test("RunLog syncs at most ceil(records / batchRecords) times when appends outpace syncs", async () => {
  const random = createSeededRandom(20261202);
  for (const batchRecords of [1, 3, 8]) {
    const clock = createFakeClock();
    const log = fakeLogFile();
    const runLog = new RunLog(log.file, clock, { batchRecords, batchMs: 25 });
    const appended: ReturnType<typeof track>[] = [];
    let next = 0;
    let resolved = 0;
    // Appends arrive in bursts; a pending sync finishes only now and then.
    for (let round = 0; round < 60; round++) {
      const burst = Math.floor(random.next() * 2 * batchRecords);
      for (let i = 0; i < burst; i++) appended.push(track(runLog.append(line(next++))));
      if (random.next() < 0.3 && resolved < log.syncs.length) log.syncs[resolved++]!.resolve();
      await clock.flush();
    }
    const done = track(runLog.flush());
    while (!done.settled) {
      for (const sync of log.syncs) sync.resolve();
      await clock.flush();
    }
    assert.ok(appended.every((a) => a.settled && a.error === undefined));
    assert.ok(
      runLog.syncs <= Math.ceil(next / batchRecords),
      `${runLog.syncs} syncs for ${next} records in batches of ${batchRecords}`,
    );
    // Every sync but the last covered everything closed while the one before it ran.
    assert.ok(runLog.syncs <= resolved + 2, `${runLog.syncs} syncs, ${resolved} resolved early`);
    assert.deepEqual(log.records().map((r) => r.i), Array.from({ length: next }, (_, i) => i));
  }
});
