/** `src/coordination/lease.ts` and `lease_state.ts`: LEASE-2 … LEASE-9 on real files and flocks. */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  acquireLease,
  createKeyedMutex,
  createProcessProbe,
  deriveLeaseState,
  inspectLease,
  leaseDirOf,
  type LeaseWaitingInfo,
  tryAcquireLock,
} from "../../src/coordination/mod.ts";
import { createFakeClock, type FakeClock } from "../_fakes/clock.ts";
import { createSeededRandom } from "../_fakes/random.ts";
import {
  COORDINATION_MODULE,
  eventually,
  expectLine,
  identity,
  names,
  SHARED_MODULE,
  snapshot,
  spawnChild,
  tempProject,
  watch,
  type Watched,
  withinHangBound,
} from "./_helpers.ts";

const KEY = "db/main";
const POLL = 2_000;

function options(root: string, clock: FakeClock, extra: Record<string, unknown> = {}) {
  return {
    projectRoot: root,
    experimentId: "e1",
    invocationId: "inv-1",
    identity: identity(),
    signal: new AbortController().signal,
    clock,
    random: createSeededRandom(3),
    ...extra,
  };
}

/** Advances one poll period and waits until every waiter slept again (or settled). */
async function poll(clock: FakeClock, waiters: Watched<unknown>[]): Promise<void> {
  await clock.tickAsync(POLL);
  await eventually(
    () => clock.countTimers() === waiters.filter((w) => !w.settled).length,
    "every waiter polled",
  );
}

async function writeRecord(dir: string, name: string, value: unknown): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(join(dir, name), JSON.stringify(value));
}

function ownerRecord(generation: number, extra: Record<string, unknown> = {}) {
  return {
    schema: "niceeval.shared-state-owner/v1",
    key: KEY,
    generation,
    ownerToken: `token-${generation}`,
    experimentId: "e0",
    invocationId: "inv-0",
    host: "host-a",
    pid: 999_999,
    processStartedAt: "2026-11-29T08:00:00Z",
    acquiredAt: "2026-11-29T08:00:01Z",
    ...extra,
  };
}

const released = (generation: number) => ({
  schema: "niceeval.shared-state-release/v1",
  generation,
  ownerToken: `token-${generation}`,
  releasedAt: "2026-11-29T08:10:00Z",
  by: "owner",
});

Deno.test("deriveLeaseState() follows every row of the LEASE-4 table", () => {
  assert.equal(deriveLeaseState({ generation: null, isReleased: false, lockTaken: false }), "free");
  assert.equal(deriveLeaseState({ generation: 3, isReleased: true, lockTaken: false }), "free");
  assert.equal(deriveLeaseState({ generation: 3, isReleased: false, lockTaken: true }), "held");
  assert.equal(
    deriveLeaseState({ generation: 3, isReleased: false, lockTaken: false }),
    "retained",
  );
  assert.equal(
    deriveLeaseState({ generation: null, isReleased: false, lockTaken: true }),
    "held",
    "an acquirer between flock and record",
  );
  assert.equal(deriveLeaseState({ generation: 3, isReleased: true, lockTaken: true }), "held");
});

Deno.test("inspectLease() derives each LEASE-4 state from real files and a real flock", async (t) => {
  await using project = await tempProject();
  const dir = leaseDirOf(project.root, KEY);
  await t.step("no directory: free, and nothing is created", async () => {
    const evidence = await inspectLease(KEY, { projectRoot: project.root });
    assert.equal(evidence.state, "free");
    assert.equal(evidence.generation, null);
    assert.deepEqual(await names(project.root), [], "inspection creates no .niceeval/");
  });
  await t.step("owner-g and released-g: free", async () => {
    await writeRecord(dir, "owner-0000000001.json", ownerRecord(1));
    await writeRecord(dir, "released-0000000001.json", released(1));
    const evidence = await inspectLease(KEY, { projectRoot: project.root });
    assert.equal(evidence.state, "free");
    assert.equal(evidence.released?.by, "owner");
  });
  await t.step("owner-g without released-g, lock free: retained", async () => {
    await writeRecord(dir, "owner-0000000002.json", ownerRecord(2));
    const evidence = await inspectLease(KEY, { projectRoot: project.root });
    assert.equal(evidence.state, "retained");
    assert.equal(evidence.generation, 2);
    assert.equal(evidence.owner?.ownerToken, "token-2");
    assert.equal(evidence.lockTaken, false);
  });
  await t.step("owner-g without released-g, lock taken: held", async () => {
    const holder = await tryAcquireLock(join(dir, "lock"));
    assert.ok(holder);
    try {
      const evidence = await inspectLease(KEY, { projectRoot: project.root });
      assert.equal(evidence.state, "held");
      assert.equal(evidence.lockTaken, true);
    } finally {
      holder.release();
    }
  });
});

Deno.test("acquireLease() on a free key creates owner-<g+1>.json, writes key, and keeps the flock", async () => {
  await using project = await tempProject();
  const dir = leaseDirOf(project.root, KEY);
  await writeRecord(dir, "owner-0000000003.json", ownerRecord(3));
  await writeRecord(dir, "released-0000000003.json", released(3));
  const clock = createFakeClock();
  await using lease = await acquireLease(KEY, options(project.root, clock));
  assert.equal(lease.generation, 4);
  const owner = JSON.parse(await Deno.readTextFile(join(dir, "owner-0000000004.json")));
  assert.deepEqual(owner, {
    schema: "niceeval.shared-state-owner/v1",
    key: KEY,
    generation: 4,
    ownerToken: lease.owner.ownerToken,
    experimentId: "e1",
    invocationId: "inv-1",
    host: "host-a",
    pid: 4242,
    processStartedAt: "2026-11-29T09:00:00Z",
    acquiredAt: "2026-11-29T10:00:00.000Z",
  });
  assert.match(lease.owner.ownerToken, /^[0-9a-f-]{36}$/);
  assert.equal(await Deno.readTextFile(join(dir, "key")), `${KEY}\n`);
  assert.equal(await tryAcquireLock(join(dir, "lock")), null, "the owner keeps the flock");
  assert.equal((await inspectLease(KEY, { projectRoot: project.root })).state, "held");
  assert.equal(await lease.release().then((r) => r.ok), true);
});

Deno.test("HeldLease.release() writes released-<g>.json by owner, then frees the flock; idempotent", async () => {
  await using project = await tempProject();
  const clock = createFakeClock();
  const lease = await acquireLease(KEY, options(project.root, clock));
  await clock.tickAsync(5_000);
  assert.deepEqual(await lease.release(), { ok: true });
  assert.deepEqual(await lease.release(), { ok: true });
  lease.retain();
  const record = JSON.parse(await Deno.readTextFile(join(lease.dir, "released-0000000001.json")));
  assert.deepEqual(record, {
    schema: "niceeval.shared-state-release/v1",
    generation: 1,
    ownerToken: lease.owner.ownerToken,
    releasedAt: "2026-11-29T10:00:05.000Z",
    by: "owner",
  });
  const evidence = await inspectLease(KEY, { projectRoot: project.root });
  assert.equal(evidence.state, "free");
  assert.equal(evidence.lockTaken, false);
});

Deno.test("HeldLease.retain() and disposal drop the flock and write nothing: the key is retained", async () => {
  await using project = await tempProject();
  const clock = createFakeClock();
  const lease = await acquireLease(KEY, options(project.root, clock));
  const before = await names(lease.dir);
  lease.retain();
  lease.retain();
  assert.equal((await lease.release()).ok, false, "release after retain writes nothing");
  assert.deepEqual(await names(lease.dir), before);
  const evidence = await inspectLease(KEY, { projectRoot: project.root });
  assert.equal(evidence.state, "retained");
  assert.equal(evidence.lockTaken, false);

  await using other = await tempProject();
  {
    await using _disposed = await acquireLease(KEY, options(other.root, clock));
  }
  assert.equal((await inspectLease(KEY, { projectRoot: other.root })).state, "retained");
});

Deno.test("HeldLease.release() returns a failure and still frees the flock when the write fails", async () => {
  await using project = await tempProject();
  const clock = createFakeClock();
  const lease = await acquireLease(KEY, options(project.root, clock));
  const moved = `${lease.dir}-moved`;
  await Deno.rename(lease.dir, moved);
  const outcome = await lease.release();
  assert.equal(outcome.ok, false);
  assert.ok(!outcome.ok && outcome.error instanceof Deno.errors.NotFound);
  await Deno.rename(moved, lease.dir);
  const evidence = await inspectLease(KEY, { projectRoot: project.root });
  assert.equal(evidence.state, "retained", "release-failed leaves the lease retained");
});

Deno.test("acquireLease() waits while another handle holds the key, notifies once, then takes g+1", async () => {
  await using project = await tempProject();
  const clock = createFakeClock();
  const first = await acquireLease(KEY, options(project.root, clock));
  const notices: LeaseWaitingInfo[] = [];
  const second = watch(acquireLease(
    KEY,
    options(project.root, clock, {
      experimentId: "e2",
      onWaiting: (i: LeaseWaitingInfo) => notices.push(i),
    }),
  ));
  await eventually(() => clock.countTimers() === 1, "the second acquirer sleeps");
  for (let i = 0; i < 5; i++) await poll(clock, [second]);
  assert.equal(second.settled, false);
  assert.deepEqual(notices, [{ retained: false }]);
  assert.deepEqual(await first.release(), { ok: true });
  await poll(clock, [second]);
  const lease = await withinHangBound(
    second.promise,
    "the lease the first handle released reaches the second acquirer (never released?)",
  );
  assert.equal(lease.generation, 2);
  assert.equal(lease.owner.experimentId, "e2");
  assert.deepEqual(notices, [{ retained: false }]);
  await lease.release();
});

Deno.test("acquireLease() never takes over a retained lease whose owner pid is dead", async () => {
  await using project = await tempProject();
  const dead = new Deno.Command("true", { stdout: "null", stderr: "null" }).spawn();
  await dead.status;
  const dir = leaseDirOf(project.root, KEY);
  await writeRecord(dir, "owner-0000000001.json", ownerRecord(1, { pid: dead.pid }));
  const before = await snapshot(dir);
  const clock = createFakeClock();
  const notices: LeaseWaitingInfo[] = [];
  const controller = new AbortController();
  const waiting = watch(acquireLease(
    KEY,
    options(project.root, clock, {
      signal: controller.signal,
      onWaiting: (i: LeaseWaitingInfo) => notices.push(i),
    }),
  ));
  await eventually(() => clock.countTimers() === 1, "the acquirer sleeps");
  for (let i = 0; i < 30; i++) await poll(clock, [waiting]);
  assert.equal(waiting.settled, false, "an hour of polling on a dead owner takes nothing over");
  assert.deepEqual(notices, [{ retained: true }]);
  const reason = new Error("interrupt");
  controller.abort(reason);
  await assert.rejects(waiting.promise, (e) => e === reason);
  const after = await snapshot(dir);
  assert.deepEqual(Object.keys(after).sort(), [...Object.keys(before), "lock"].sort());
  assert.equal(after["owner-0000000001.json"], before["owner-0000000001.json"]);
  assert.equal(after.lock, "", "the lock file stays empty");
});

Deno.test("S91 acquireLease() never overwrites a planted owner-<g+1>.json and keeps waiting", async () => {
  await using project = await tempProject();
  const dir = leaseDirOf(project.root, KEY);
  await writeRecord(dir, "owner-0000000001.json", ownerRecord(1));
  await writeRecord(dir, "released-0000000001.json", released(1));
  await writeRecord(dir, "owner-0000000002.json", { planted: true });
  const clock = createFakeClock();
  const controller = new AbortController();
  const notices: LeaseWaitingInfo[] = [];
  const waiting = watch(acquireLease(
    KEY,
    options(project.root, clock, {
      signal: controller.signal,
      onWaiting: (i: LeaseWaitingInfo) => notices.push(i),
    }),
  ));
  await eventually(() => clock.countTimers() === 1, "the acquirer sleeps");
  for (let i = 0; i < 3; i++) await poll(clock, [waiting]);
  assert.equal(waiting.settled, false);
  assert.deepEqual(notices, [{ retained: true }]);
  assert.deepEqual(JSON.parse(await Deno.readTextFile(join(dir, "owner-0000000002.json"))), {
    planted: true,
  });
  assert.ok(!(await names(dir)).includes("owner-0000000003.json"));
  controller.abort(new Error("stop"));
  await assert.rejects(waiting.promise, /stop/);
});

Deno.test("acquireLease() rejects at once with an already aborted signal and leaves no flock", async () => {
  await using project = await tempProject();
  const controller = new AbortController();
  const reason = new Error("early");
  controller.abort(reason);
  await assert.rejects(
    acquireLease(KEY, options(project.root, createFakeClock(), { signal: controller.signal })),
    (e) => e === reason,
  );
  assert.equal((await inspectLease(KEY, { projectRoot: project.root })).state, "free");
});

Deno.test("acquireLease() with a KeyedMutex hands the key over in FIFO order without a poll", async () => {
  await using project = await tempProject();
  const clock = createFakeClock();
  const mutex = createKeyedMutex();
  const notices: string[] = [];
  const start = (id: string) =>
    watch(acquireLease(
      KEY,
      options(project.root, clock, {
        experimentId: id,
        mutex,
        onWaiting: (i: LeaseWaitingInfo) => notices.push(`${id}:${i.retained}`),
      }),
    ));
  const a = start("a");
  await eventually(() => a.settled, "a holds the lease");
  const b = start("b");
  const c = start("c");
  await clock.flush();
  assert.deepEqual(notices, ["b:false", "c:false"]);
  assert.equal(clock.countTimers(), 0, "mutex waiters do not poll the flock");
  await a.value!.release();
  await eventually(() => b.settled, "b got the key that a released, without time passing");
  assert.equal(c.settled, false);
  assert.equal(b.value!.generation, 2);
  await b.value!.release();
  await eventually(() => c.settled, "c got the key that b released");
  assert.equal(c.value!.generation, 3);
  await c.value!.release();
  const d = await withinHangBound(
    acquireLease(KEY, options(project.root, clock, { mutex })),
    "a new acquirer gets the key that c released (KeyedMutex never released?)",
  );
  assert.equal(d.generation, 4, "the mutex is free again");
  await d.release();
});

Deno.test("acquireLease() notifies a second time when the lease it waits for turns retained", async () => {
  await using project = await tempProject();
  const clock = createFakeClock();
  const mutex = createKeyedMutex();
  const first = await acquireLease(KEY, options(project.root, clock, { mutex }));
  const notices: LeaseWaitingInfo[] = [];
  const controller = new AbortController();
  const second = watch(acquireLease(
    KEY,
    options(project.root, clock, {
      mutex,
      signal: controller.signal,
      onWaiting: (i: LeaseWaitingInfo) => notices.push(i),
    }),
  ));
  await clock.flush();
  first.retain();
  await eventually(() => clock.countTimers() === 1, "the waiter polls the retained lease");
  for (let i = 0; i < 3; i++) await poll(clock, [second]);
  assert.deepEqual(notices, [{ retained: false }, { retained: true }]);
  controller.abort(new Error("stop"));
  await assert.rejects(second.promise, /stop/);
  assert.equal(mutex.isHeld(KEY), false, "an aborted waiter frees the mutex");
});

Deno.test("a SIGKILLed child owner leaves the lease retained, not held, even with a surviving grandchild (S90)", async () => {
  await using project = await tempProject();
  const script = `
import { acquireLease, readProcessIdentity } from ${JSON.stringify(COORDINATION_MODULE)};
import { realClock } from ${JSON.stringify(SHARED_MODULE)};
const lease = await acquireLease(${JSON.stringify(KEY)}, {
  projectRoot: ${JSON.stringify(project.root)}, experimentId: "child", invocationId: "inv-child",
  identity: await readProcessIdentity(), signal: new AbortController().signal, clock: realClock,
});
const grandchild = new Deno.Command("sleep", { args: ["60"], stdout: "null", stderr: "null" }).spawn();
console.log("held " + lease.generation + " " + grandchild.pid);
for await (const _ of Deno.stdin.readable) { /* hold until killed */ }`;
  await using child = spawnChild(script);
  const [, generation, grandchildPid] = (await expectLine(child, /^held 1 \d+$/)).split(" ");
  try {
    const clock = createFakeClock();
    const notices: LeaseWaitingInfo[] = [];
    const controller = new AbortController();
    const waiting = watch(acquireLease(
      KEY,
      options(project.root, clock, {
        signal: controller.signal,
        onWaiting: (i: LeaseWaitingInfo) => notices.push(i),
      }),
    ));
    await eventually(() => clock.countTimers() === 1, "the parent waits");
    const held = await inspectLease(KEY, { projectRoot: project.root });
    assert.equal(held.state, "held");
    assert.equal(held.owner?.pid, child.pid);
    await child.kill();
    for (let i = 0; i < 3; i++) await poll(clock, [waiting]);
    const after = await inspectLease(KEY, { projectRoot: project.root });
    assert.equal(after.state, "retained");
    assert.equal(after.lockTaken, false, "the grandchild did not inherit the flock");
    assert.equal(await createProcessProbe().isAlive(Number(grandchildPid)), true);
    assert.equal(after.generation, Number(generation));
    assert.equal(after.owner?.ownerToken, held.owner?.ownerToken, "the owner record stays");
    assert.equal(waiting.settled, false);
    assert.deepEqual(notices, [{ retained: false }, { retained: true }]);
    controller.abort(new Error("stop"));
    await assert.rejects(waiting.promise, /stop/);
  } finally {
    try {
      Deno.kill(Number(grandchildPid), "SIGKILL");
    } catch {
      // Already gone.
    }
  }
});
