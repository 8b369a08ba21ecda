/** `src/coordination/orphans.ts`: ORPH-2 classification, ORPH-3 claims, ORPH-6 reminders. */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  claimOrphan,
  createProcessProbe,
  findOrphans,
  listPendingOrphans,
  type ProcessIdentity,
  type ProcessProbe,
  readProcessIdentity,
  registerTeardown,
  scanRegistrations,
  teardownsDirOf,
  tryAcquireLock,
} from "../../src/coordination/mod.ts";
import { createFakeClock } from "../_fakes/clock.ts";
import {
  type Child,
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
} from "./_helpers.ts";

const ME = identity({ pid: 1000, processStartedAt: "2026-11-29T09:59:00Z" });

/** Writes a registration as `writer` did and drops its flock, like a process that died. */
async function leftBehind(
  root: string,
  experimentId: string,
  invocationId: string,
  writer: ProcessIdentity,
  selectedEvalIds: readonly string[] = ["e/1"],
): Promise<string> {
  const result = await registerTeardown({
    projectRoot: root,
    experimentId,
    selectedEvalIds,
    invocationId,
    identity: writer,
    clock: createFakeClock(),
  });
  assert.ok(result.ok);
  result.held.abandon();
  return result.held.path;
}

function scan(root: string, probe: ProcessProbe, me: ProcessIdentity = ME) {
  return { projectRoot: root, identity: me, probe };
}

Deno.test("S66 scanRegistrations() never touches a registration of another host, even with a dead pid", async () => {
  await using project = await tempProject();
  await leftBehind(project.root, "E", "inv-far", identity({ host: "host-b", pid: 77 }));
  const before = await snapshot(project.root);
  const probe = fakeProbe();
  const entries = await scanRegistrations("E", scan(project.root, probe));
  assert.deepEqual(entries.map((e) => e.status), ["other-host"]);
  assert.equal(probe.calls, 0, "no liveness question about another host's pid");
  assert.deepEqual(await findOrphans("E", scan(project.root, probe)), []);
  assert.equal(await claimOrphan(entries[0]!), null);
  assert.deepEqual(await snapshot(project.root), before);
});

Deno.test("S67 scanRegistrations() classifies by flock, liveness and a 2 s start-time tolerance", async (t) => {
  await using project = await tempProject();
  const writer = identity({ pid: 77, processStartedAt: "2026-11-29T08:00:00Z" });
  await leftBehind(project.root, "E", "inv-1", writer);
  const cases: Array<[string, ProcessProbe, string]> = [
    ["pid dead", fakeProbe({}), "orphan"],
    [
      "pid reused (start 10 s later)",
      fakeProbe({ 77: true }, { 77: "2026-11-29T08:00:10Z" }),
      "orphan",
    ],
    [
      "same process (start 2 s off)",
      fakeProbe({ 77: true }, { 77: "2026-11-29T08:00:02Z" }),
      "live",
    ],
    ["start unreadable", fakeProbe({ 77: true }, {}), "unverified"],
    ["liveness unknown", fakeProbe({ 77: undefined }), "unverified"],
  ];
  for (const [what, probe, status] of cases) {
    await t.step(what, async () => {
      const entries = await scanRegistrations("E", scan(project.root, probe));
      assert.deepEqual(entries.map((e) => e.status), [status]);
    });
  }
  await t.step("flock taken: live, whatever the pid", async () => {
    const [entry] = await scanRegistrations("E", scan(project.root, fakeProbe()));
    const holder = await tryAcquireLock(entry!.path, { create: false });
    assert.ok(holder);
    try {
      const entries = await scanRegistrations("E", scan(project.root, fakeProbe()));
      assert.deepEqual(entries.map((e) => e.status), ["live"]);
    } finally {
      holder.release();
    }
  });
});

Deno.test("scanRegistrations() leaves unreadable files unverified and ignores other Experiments and temp files", async () => {
  await using project = await tempProject();
  const path = await leftBehind(project.root, "E", "inv-1", identity({ pid: 77 }));
  await leftBehind(project.root, "F", "inv-1", identity({ pid: 77 }));
  await Deno.writeTextFile(path, "{ torn");
  await Deno.writeTextFile(join(teardownsDirOf(project.root), ".x.json.1234abcd.tmp"), "{}");
  const entries = await scanRegistrations("E", scan(project.root, fakeProbe()));
  assert.deepEqual(entries.map((e) => [e.status, e.registration]), [["unverified", undefined]]);
  assert.deepEqual(await findOrphans("E", scan(project.root, fakeProbe())), []);
});

Deno.test("a live registration of this very process is never an orphan", async () => {
  await using project = await tempProject();
  const held = await registerTeardown({
    projectRoot: project.root,
    experimentId: "E",
    selectedEvalIds: [],
    invocationId: "inv-me",
    identity: ME,
    clock: createFakeClock(),
  });
  assert.ok(held.ok);
  const entries = await scanRegistrations("E", scan(project.root, fakeProbe()));
  assert.deepEqual(entries.map((e) => e.status), ["live"]);
  await held.held.remove();
});

Deno.test("claimOrphan() renames to .claimed under its flock; done() deletes it (S75 after a failed teardown)", async () => {
  await using project = await tempProject();
  const path = await leftBehind(project.root, "E", "inv-1", identity({ pid: 77 }), ["a", "b"]);
  const [orphan] = await findOrphans("E", scan(project.root, fakeProbe()));
  assert.ok(orphan);
  const claim = await claimOrphan(orphan);
  assert.ok(claim);
  assert.equal(claim.path, `${path}.claimed`);
  assert.deepEqual(claim.selectedEvalIds, ["a", "b"]);
  assert.deepEqual(await names(teardownsDirOf(project.root)), [
    `${path.split("/").at(-1)}.claimed`,
  ]);
  assert.equal(await tryAcquireLock(claim.path, { create: false }), null, "the claimer holds it");
  assert.deepEqual(
    (await scanRegistrations("E", scan(project.root, fakeProbe()))).map((e) => e.status),
    ["live"],
    "a claim in progress is not an orphan",
  );
  assert.equal(await claimOrphan(orphan), null, "the original name is gone");
  // The teardown threw: the claimed file is deleted all the same (ORPH-3, S75).
  assert.deepEqual(await claim.done(), { ok: true });
  assert.deepEqual(await names(teardownsDirOf(project.root)), []);
});

Deno.test("claimOrphan() lets exactly one of two concurrent claimers win", async () => {
  await using project = await tempProject();
  await leftBehind(project.root, "E", "inv-1", identity({ pid: 77 }));
  const [orphan] = await findOrphans("E", scan(project.root, fakeProbe()));
  const claims = await Promise.all([claimOrphan(orphan!), claimOrphan(orphan!)]);
  const winners = claims.filter((c) => c !== null);
  assert.equal(winners.length, 1);
  await winners[0]!.done();
});

Deno.test("claimOrphan() fails when the file was claimed and finished after it was scanned", async () => {
  await using project = await tempProject();
  await leftBehind(project.root, "E", "inv-1", identity({ pid: 77 }));
  const [seenByA] = await findOrphans("E", scan(project.root, fakeProbe()));
  const [seenByB] = await findOrphans("E", scan(project.root, fakeProbe()));
  const b = await claimOrphan(seenByB!);
  assert.ok(b);
  await b.done();
  assert.equal(await claimOrphan(seenByA!), null);
  assert.deepEqual(await names(teardownsDirOf(project.root)), [], "nothing was recreated");
});

Deno.test("a .claimed file whose claimer died is an orphan again and keeps its name when reclaimed", async () => {
  await using project = await tempProject();
  await leftBehind(project.root, "E", "inv-1", identity({ pid: 77 }), ["k"]);
  const [orphan] = await findOrphans("E", scan(project.root, fakeProbe()));
  const first = await claimOrphan(orphan!);
  assert.ok(first);
  first.abandon(); // the claimer died before deleting it
  const [again] = await findOrphans("E", scan(project.root, fakeProbe()));
  assert.ok(again);
  assert.equal(again.claimed, true);
  assert.equal(again.path, first.path);
  const second = await claimOrphan(again);
  assert.ok(second);
  assert.equal(second.path, first.path);
  assert.deepEqual(second.selectedEvalIds, ["k"]);
  await second.done();
  assert.deepEqual(await names(teardownsDirOf(project.root)), []);
});

Deno.test("claimOrphan() retries a briefly busy flock on the clock, and gives up on a held one", async () => {
  await using project = await tempProject();
  const path = await leftBehind(project.root, "E", "inv-1", identity({ pid: 77 }));
  const [orphan] = await findOrphans("E", scan(project.root, fakeProbe()));
  const clock = createFakeClock();
  const scanner = await tryAcquireLock(path, { create: false });
  assert.ok(scanner);
  const claiming = watch(claimOrphan(orphan!, { clock }));
  await eventually(() => clock.countTimers() === 1, "the claimer sleeps");
  await clock.tickAsync(50);
  await eventually(() => clock.countTimers() === 1, "the claimer retries");
  scanner.release();
  await clock.tickAsync(50);
  const claim = await claiming.promise;
  assert.ok(claim, "the claim succeeds once the scan let go");
  await claim.done();

  const other = await leftBehind(project.root, "E", "inv-2", identity({ pid: 77 }));
  const [second] = await findOrphans("E", scan(project.root, fakeProbe()));
  const holder = await tryAcquireLock(other, { create: false });
  assert.ok(holder);
  try {
    const gaveUp = watch(claimOrphan(second!, { clock }));
    for (let i = 0; i < 3; i++) {
      await eventually(() => gaveUp.settled || clock.countTimers() === 1, "the claimer sleeps");
      await clock.tickAsync(50);
    }
    assert.equal(await gaveUp.promise, null);
  } finally {
    holder.release();
  }
});

Deno.test("listPendingOrphans() names each Experiment with an orphan once, sorted", async () => {
  await using project = await tempProject();
  await leftBehind(project.root, "zeta", "inv-1", identity({ pid: 77 }));
  await leftBehind(project.root, "zeta", "inv-2", identity({ pid: 78 }));
  await leftBehind(project.root, "alpha", "inv-1", identity({ pid: 77 }));
  await leftBehind(project.root, "far", "inv-1", identity({ host: "host-b", pid: 77 }));
  const live = await leftBehind(project.root, "held", "inv-1", identity({ pid: 77 }));
  const holder = await tryAcquireLock(live, { create: false });
  assert.ok(holder);
  try {
    assert.deepEqual(await listPendingOrphans(scan(project.root, fakeProbe())), ["alpha", "zeta"]);
  } finally {
    holder.release();
  }
});

Deno.test("S64 a real child's registration is live while it runs and an orphan after SIGKILL", async () => {
  await using project = await tempProject();
  const script = `
import { readProcessIdentity, registerTeardown } from ${JSON.stringify(COORDINATION_MODULE)};
import { realClock } from ${JSON.stringify(SHARED_MODULE)};
const reg = await registerTeardown({
  projectRoot: ${JSON.stringify(project.root)}, experimentId: "E", selectedEvalIds: ["first/run"],
  invocationId: "inv-child", identity: await readProcessIdentity(), clock: realClock,
});
console.log(reg.ok ? "registered" : "failed");
for await (const _ of Deno.stdin.readable) { /* hold until killed */ }`;
  await using child = spawnChild(script);
  await expectLine(child, "registered");
  const options = scan(project.root, createProcessProbe(), await readProcessIdentity());
  assert.deepEqual((await scanRegistrations("E", options)).map((e) => e.status), ["live"]);
  await child.kill();
  const [orphan, ...rest] = await findOrphans("E", options);
  assert.ok(orphan);
  assert.equal(rest.length, 0);
  assert.equal(orphan.registration?.pid, child.pid);
  const claim = await claimOrphan(orphan);
  assert.ok(claim);
  assert.deepEqual(claim.selectedEvalIds, ["first/run"]);
  await claim.done();
});

Deno.test("S69 three processes claiming the same orphans concurrently claim each exactly once", async () => {
  await using project = await tempProject();
  const me = await readProcessIdentity();
  // Registrations of this very pid with another start time: orphans by pid reuse, for everyone.
  const writer = { ...me, processStartedAt: "2000-01-01T00:00:00Z" };
  const count = 24;
  for (let i = 0; i < count; i++) {
    await leftBehind(project.root, "E", `inv-${String(i).padStart(2, "0")}`, writer);
  }
  const script = `
import { claimOrphan, createProcessProbe, findOrphans, readProcessIdentity } from ${
    JSON.stringify(COORDINATION_MODULE)
  };
const options = { projectRoot: ${
    JSON.stringify(project.root)
  }, identity: await readProcessIdentity(), probe: createProcessProbe() };
console.log("ready");
const reader = Deno.stdin.readable.getReader();
await reader.read();
const claims = [];
for (const orphan of await findOrphans("E", options)) {
  const claim = await claimOrphan(orphan);
  if (claim) claims.push(claim);
}
for (const claim of claims) await claim.done();
console.log(JSON.stringify(claims.map((c) => c.registration.invocationId)));
await reader.read();`;
  const children: Child[] = [spawnChild(script), spawnChild(script)];
  try {
    for (const child of children) await expectLine(child, "ready");
    await Promise.all(children.map((child) => child.send("go")));
    const mine: string[] = [];
    const options = scan(project.root, createProcessProbe(), me);
    for (const orphan of await findOrphans("E", options)) {
      const claim = await claimOrphan(orphan);
      if (claim) {
        mine.push(claim.registration.invocationId);
        await claim.done();
      }
    }
    const theirs = await Promise.all(
      children.map(async (child) => JSON.parse(await child.nextLine()) as string[]),
    );
    const all = [...mine, ...theirs.flat()].sort();
    assert.equal(all.length, count, `claims: ${JSON.stringify([mine, ...theirs])}`);
    assert.equal(new Set(all).size, count, "no orphan was claimed twice");
    assert.deepEqual(await names(teardownsDirOf(project.root)), []);
  } finally {
    for (const child of children) await child[Symbol.asyncDispose]();
  }
});
