/** `src/coordination/lease_recovery.ts`: LEASE-10 inspection and recovery (S83–S87 at module level). */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  acquireLease,
  createProcessProbe,
  inspectLease,
  leaseDirOf,
  type LeaseOwnerRecord,
  readProcessIdentity,
  recoverLease,
  type RecoverLeaseOptions,
  registerTeardown,
  teardownsDirOf,
  tryAcquireLock,
} from "../../src/coordination/mod.ts";
import { createFakeClock, type FakeClock } from "../_fakes/clock.ts";
import { createSeededRandom } from "../_fakes/random.ts";
import {
  COORDINATION_MODULE,
  eventually,
  expectLine,
  fakeProbe,
  identity,
  names,
  SHARED_MODULE,
  snapshot,
  spawnChild,
  tempProject,
  watch,
  withinHangBound,
} from "./_helpers.ts";

const KEY = "db/main";
const OWNER = identity({ pid: 5151, processStartedAt: "2026-11-29T08:00:00Z" });
const OPERATOR = identity({ pid: 6161 });

/** A lease of E taken by OWNER with a registration of E, both left behind as by a SIGKILL. */
async function retainedByDeadOwner(root: string, clock: FakeClock): Promise<LeaseOwnerRecord> {
  const lease = await acquireLease(KEY, {
    projectRoot: root,
    experimentId: "E",
    invocationId: "inv-owner",
    identity: OWNER,
    signal: new AbortController().signal,
    clock,
    random: createSeededRandom(11),
  });
  const registration = await registerTeardown({
    projectRoot: root,
    experimentId: "E",
    selectedEvalIds: ["a/one", "a/two"],
    invocationId: "inv-owner",
    identity: OWNER,
    clock,
  });
  assert.ok(registration.ok);
  registration.held.abandon();
  lease.retain();
  return lease.owner;
}

function recovery(
  root: string,
  clock: FakeClock,
  overrides: Partial<RecoverLeaseOptions> = {},
): RecoverLeaseOptions {
  return {
    projectRoot: root,
    ownerToken: "",
    confirmOwnerTerminated: true,
    confirmRemoteQuiesced: true,
    selectedExperimentIds: ["E"],
    identity: OPERATOR,
    probe: fakeProbe(),
    clock,
    ...overrides,
  };
}

function usageCode(code: string): (e: unknown) => boolean {
  return (e) => {
    assert.equal((e as { name?: string }).name, "UsageError");
    assert.equal((e as { code?: string }).code, code);
    return true;
  };
}

Deno.test("S83 inspectLease() shows the retained owner's token, host, pid and start, and changes nothing", async () => {
  await using project = await tempProject();
  const clock = createFakeClock();
  const owner = await retainedByDeadOwner(project.root, clock);
  const before = await snapshot(project.root);
  const evidence = await inspectLease(KEY, { projectRoot: project.root });
  assert.equal(evidence.state, "retained");
  assert.equal(evidence.key, KEY);
  assert.deepEqual(evidence.owner, owner);
  assert.equal(evidence.owner?.host, "host-a");
  assert.equal(evidence.owner?.pid, 5151);
  assert.equal(evidence.owner?.processStartedAt, "2026-11-29T08:00:00Z");
  assert.equal(evidence.lockTaken, false);
  assert.deepEqual(evidence.recoveries, []);
  assert.deepEqual(await snapshot(project.root), before);
});

Deno.test("S84 recoverLease() requires both confirmations (exit 2) before reading anything", async () => {
  await using project = await tempProject();
  const clock = createFakeClock();
  const owner = await retainedByDeadOwner(project.root, clock);
  const before = await snapshot(project.root);
  for (
    const [terminated, quiesced] of [[true, false], [false, true], [false, false]] as const
  ) {
    await assert.rejects(
      recoverLease(
        KEY,
        recovery(project.root, clock, {
          ownerToken: owner.ownerToken,
          confirmOwnerTerminated: terminated,
          confirmRemoteQuiesced: quiesced,
          selectedExperimentIds: ["wrong"],
        }),
      ),
      usageCode("shared-state-recovery-confirmation-required"),
    );
  }
  assert.deepEqual(await snapshot(project.root), before);
});

Deno.test("recoverLease() refuses a selector that is not exactly the owner's experiment (exit 2)", async () => {
  await using project = await tempProject();
  const clock = createFakeClock();
  const owner = await retainedByDeadOwner(project.root, clock);
  const holder = await tryAcquireLock(join(leaseDirOf(project.root, KEY), "lock"));
  assert.ok(holder, "a held flock does not hide the selector refusal");
  try {
    const before = await snapshot(project.root);
    for (const selected of [[], ["E", "F"], ["F"]]) {
      await assert.rejects(
        recoverLease(
          KEY,
          recovery(project.root, clock, {
            ownerToken: owner.ownerToken,
            selectedExperimentIds: selected,
          }),
        ),
        usageCode("shared-state-experiment-mismatch"),
      );
    }
    assert.deepEqual(await snapshot(project.root), before);
  } finally {
    holder.release();
  }
});

Deno.test("S85 recoverLease() answers shared-state-owner-alive while the flock is taken, before the token check", async () => {
  await using project = await tempProject();
  const clock = createFakeClock();
  await retainedByDeadOwner(project.root, clock);
  const holder = await tryAcquireLock(join(leaseDirOf(project.root, KEY), "lock"));
  assert.ok(holder);
  try {
    const before = await snapshot(project.root);
    const result = await recoverLease(KEY, recovery(project.root, clock, { ownerToken: "wrong" }));
    assert.equal(result.ok, false);
    assert.equal(!result.ok && result.code, "shared-state-owner-alive");
    assert.deepEqual(await snapshot(project.root), before);
  } finally {
    holder.release();
  }
});

Deno.test("S84 recoverLease() answers shared-state-token-mismatch for a wrong token, before the liveness check", async () => {
  await using project = await tempProject();
  const clock = createFakeClock();
  await retainedByDeadOwner(project.root, clock);
  const before = await snapshot(project.root);
  const probe = fakeProbe({ 5151: true }, { 5151: "2026-11-29T08:00:00Z" });
  const result = await recoverLease(KEY, recovery(project.root, clock, { ownerToken: "x", probe }));
  assert.equal(!result.ok && result.code, "shared-state-token-mismatch");
  assert.equal(probe.calls, 0, "the owner's liveness is not even probed");
  assert.deepEqual(await snapshot(project.root), before);
});

Deno.test("recoverLease() refuses an owner that still runs on this host with the recorded start time", async (t) => {
  await using project = await tempProject();
  const clock = createFakeClock();
  const owner = await retainedByDeadOwner(project.root, clock);
  const before = await snapshot(project.root);
  const cases = [
    { what: "same start", alive: true, start: "2026-11-29T08:00:01Z" },
    { what: "unknown start (fail closed)", alive: true, start: "unknown" },
    { what: "unknown liveness (fail closed)", alive: undefined, start: "unknown" },
  ];
  for (const c of cases) {
    await t.step(c.what, async () => {
      const probe = fakeProbe({ 5151: c.alive }, { 5151: c.start });
      const result = await recoverLease(
        KEY,
        recovery(project.root, clock, { ownerToken: owner.ownerToken, probe }),
      );
      assert.equal(!result.ok && result.code, "shared-state-owner-alive");
      assert.deepEqual(await snapshot(project.root), before);
    });
  }
});

Deno.test("S86 recoverLease() writes recovery-<g>-1, runs teardown once, removes the owner's registration, releases by recovery", async () => {
  await using project = await tempProject();
  const clock = createFakeClock();
  const owner = await retainedByDeadOwner(project.root, clock);
  const other = await registerTeardown({
    projectRoot: project.root,
    experimentId: "E",
    selectedEvalIds: ["b"],
    invocationId: "inv-live",
    identity: identity({ pid: 7777 }),
    clock,
  });
  assert.ok(other.ok);
  const teardowns: Array<readonly string[] | undefined> = [];
  await clock.tickAsync(60_000);
  const result = await recoverLease(
    KEY,
    recovery(project.root, clock, {
      ownerToken: owner.ownerToken,
      probe: fakeProbe({ 5151: true }, { 5151: "2026-11-29T09:30:00Z" }),
      runTeardown: ({ selectedEvalIds }) => {
        teardowns.push(selectedEvalIds);
        return Promise.resolve();
      },
    }),
  );
  assert.deepEqual(result, {
    ok: true,
    outcome: "recovered",
    key: KEY,
    experimentId: "E",
    generation: 1,
    teardownRan: true,
    removedRegistrations: 1,
  });
  assert.deepEqual(teardowns, [["a/one", "a/two"]]);
  const dir = leaseDirOf(project.root, KEY);
  assert.deepEqual(
    JSON.parse(await Deno.readTextFile(join(dir, "recovery-0000000001-0000000001.json"))),
    {
      schema: "niceeval.shared-state-recovery/v1",
      generation: 1,
      ownerToken: owner.ownerToken,
      operatorHost: "host-a",
      operatorPid: 6161,
      startedAt: "2026-11-29T10:01:00.000Z",
    },
  );
  const releasedRecord = JSON.parse(await Deno.readTextFile(join(dir, "released-0000000001.json")));
  assert.equal(releasedRecord.by, "recovery");
  assert.equal(releasedRecord.ownerToken, owner.ownerToken);
  assert.deepEqual(
    await names(teardownsDirOf(project.root)),
    [other.held.path.split("/").at(-1)],
    "only the owner's registration is removed; a live one stays",
  );
  assert.equal(await other.held.remove().then((r) => r.ok), true);
  const evidence = await inspectLease(KEY, { projectRoot: project.root });
  assert.equal(evidence.state, "free");
  assert.equal(evidence.recoveries.length, 1);
  const next = await acquireLease(KEY, {
    projectRoot: project.root,
    experimentId: "E",
    invocationId: "inv-b",
    identity: identity(),
    signal: new AbortController().signal,
    clock,
  });
  assert.equal(next.generation, 2);
  await next.release();
});

Deno.test("S87 a failing recovery teardown leaves the lease retained, and a second recovery with the same token succeeds", async () => {
  await using project = await tempProject();
  const clock = createFakeClock();
  const owner = await retainedByDeadOwner(project.root, clock);
  let calls = 0;
  const options = recovery(project.root, clock, {
    ownerToken: owner.ownerToken,
    runTeardown: () => {
      calls++;
      return calls === 1 ? Promise.reject(new Error("remote said no")) : Promise.resolve();
    },
  });
  const failed = await recoverLease(KEY, options);
  assert.equal(!failed.ok && failed.code, "shared-state-recovery-failed");
  assert.match(!failed.ok ? failed.message : "", /remote said no$/);
  const dir = leaseDirOf(project.root, KEY);
  assert.equal((await inspectLease(KEY, { projectRoot: project.root })).state, "retained");
  assert.ok(!(await names(dir)).includes("released-0000000001.json"));
  assert.equal((await names(teardownsDirOf(project.root))).length, 1, "registration kept");
  const second = await recoverLease(KEY, options);
  assert.equal(second.ok && second.outcome, "recovered");
  assert.equal(calls, 2);
  assert.deepEqual((await names(dir)).filter((n) => n.startsWith("recovery-")), [
    "recovery-0000000001-0000000001.json",
    "recovery-0000000001-0000000002.json",
  ]);
  assert.equal((await inspectLease(KEY, { projectRoot: project.root })).state, "free");
  assert.deepEqual(await names(teardownsDirOf(project.root)), []);
});

Deno.test("recoverLease() of a free key runs no teardown and removes only the recorded owner's free registration", async () => {
  await using project = await tempProject();
  const clock = createFakeClock();
  const lease = await acquireLease(KEY, {
    projectRoot: project.root,
    experimentId: "E",
    invocationId: "inv-owner",
    identity: OWNER,
    signal: new AbortController().signal,
    clock,
  });
  const stale = await registerTeardown({
    projectRoot: project.root,
    experimentId: "E",
    selectedEvalIds: [],
    invocationId: "inv-owner",
    identity: OWNER,
    clock,
  });
  assert.ok(stale.ok);
  stale.held.abandon();
  await lease.release();
  let ran = 0;
  const result = await recoverLease(
    KEY,
    recovery(project.root, clock, {
      ownerToken: "any",
      runTeardown: () => {
        ran++;
        return Promise.resolve();
      },
    }),
  );
  assert.deepEqual(result, {
    ok: true,
    outcome: "already-free",
    key: KEY,
    removedRegistrations: 1,
  });
  assert.equal(ran, 0);
  assert.deepEqual(await names(teardownsDirOf(project.root)), []);
});

Deno.test("recoverLease() of a never-used key creates nothing", async () => {
  await using project = await tempProject();
  const clock = createFakeClock();
  const result = await recoverLease(KEY, recovery(project.root, clock, { ownerToken: "t" }));
  assert.deepEqual(result, {
    ok: true,
    outcome: "already-free",
    key: KEY,
    removedRegistrations: 0,
  });
  assert.deepEqual(await names(project.root), []);
});

Deno.test("S85 S86 a real child owner: refused while it runs, recovered after SIGKILL, then the waiter acquires", async () => {
  await using project = await tempProject();
  const script = `
import { acquireLease, readProcessIdentity, registerTeardown } from ${
    JSON.stringify(COORDINATION_MODULE)
  };
import { realClock } from ${JSON.stringify(SHARED_MODULE)};
const identity = await readProcessIdentity();
const root = ${JSON.stringify(project.root)};
const lease = await acquireLease(${JSON.stringify(KEY)}, {
  projectRoot: root, experimentId: "E", invocationId: "inv-child", identity,
  signal: new AbortController().signal, clock: realClock,
});
const reg = await registerTeardown({
  projectRoot: root, experimentId: "E", selectedEvalIds: ["x"], invocationId: "inv-child",
  identity, clock: realClock,
});
console.log(reg.ok ? "ready " + lease.owner.ownerToken : "failed");
for await (const _ of Deno.stdin.readable) { /* hold until killed */ }`;
  await using child = spawnChild(script);
  const token = (await expectLine(child, /^ready [0-9a-f-]{36}$/)).slice("ready ".length);
  const me = await readProcessIdentity();
  const clock = createFakeClock();
  const controller = new AbortController();
  const waiter = watch(acquireLease(KEY, {
    projectRoot: project.root,
    experimentId: "E",
    invocationId: "inv-b",
    identity: me,
    signal: controller.signal,
    clock,
  }));
  await eventually(() => clock.countTimers() === 1, "B waits");
  let teardowns = 0;
  const options = recovery(project.root, clock, {
    ownerToken: token,
    identity: me,
    probe: createProcessProbe(),
    runTeardown: () => {
      teardowns++;
      return Promise.resolve();
    },
  });
  const refused = await recoverLease(KEY, options);
  assert.equal(!refused.ok && refused.code, "shared-state-owner-alive");
  await child.kill();
  const recovered = await recoverLease(KEY, options);
  assert.equal(recovered.ok && recovered.outcome, "recovered");
  assert.equal(recovered.ok && recovered.removedRegistrations, 1);
  assert.equal(teardowns, 1);
  assert.deepEqual(await names(teardownsDirOf(project.root)), []);
  await clock.tickAsync(2_000);
  const lease = await withinHangBound(
    waiter.promise,
    "waiter B gets the lease recovered from the killed owner (never released?)",
  );
  assert.equal(lease.generation, 2);
  await lease.release();
});
