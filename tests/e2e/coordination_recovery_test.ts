/** LEASE-10 with real processes (S83 … S88): inspection and explicit recovery of a lease. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { leaseDirOf } from "../../src/coordination/mod.ts";
import { snapshot } from "../coordination/_helpers.ts";
import { type CoordProject, coordProject, marksOf, tree } from "./_coordination.ts";

const KEY = "db/main";
const COORDINATION = ".niceeval/coordination";

interface Owner {
  readonly ownerToken: string;
  readonly pid: number;
  readonly host: string;
  readonly processStartedAt: string;
}

async function ownerRecord(p: CoordProject, generation = 1): Promise<Owner> {
  const name = `owner-${String(generation).padStart(10, "0")}.json`;
  return JSON.parse(await Deno.readTextFile(join(leaseDirOf(p.dir, KEY), name)));
}

/** SIGKILLs `exp shared steps/0001` while it holds the lease: the key is then retained. */
async function retainByKill(p: CoordProject): Promise<Owner> {
  await p.set("hold-attempt");
  const a = p.start(["exp", "shared", "steps/0001", "--json"], "A");
  await p.waitForMark((m) => m.tag === "A" && m.event === "attempt-held", "A holds the lease");
  a.child.kill("SIGKILL");
  await a.finished();
  await p.clear("hold-attempt");
  return await ownerRecord(p);
}

function recoverArgs(token: string, ...confirmations: string[]): string[] {
  return [
    "exp",
    "shared",
    "--teardown",
    "--recover-shared-state",
    KEY,
    "--owner-token",
    token,
    ...confirmations,
  ];
}

const BOTH = ["--confirm-owner-terminated", "--confirm-remote-quiesced"];

Deno.test("S83 inspecting a retained key prints the owner evidence and the recovery command, changes nothing exits 1", async () => {
  await using p = await coordProject();
  const owner = await retainByKill(p);
  const before = await snapshot(join(p.dir, COORDINATION));
  const r = await p.exec(["exp", "shared", "--teardown", "--recover-shared-state", KEY], "T");
  assert.equal(r.code, 1);
  const rows = Object.fromEntries(
    r.stdout.trimEnd().split("\n").map((line) => {
      const [, label, value] = /^(\S+(?: \S+)?) {2,}(.*)$/.exec(line)!;
      return [label, value];
    }),
  );
  assert.deepEqual(rows, {
    key: KEY,
    state: "retained",
    experiment: "shared",
    "owner token": owner.ownerToken,
    "owner host": owner.host,
    "owner pid": String(owner.pid),
    "process start": owner.processStartedAt,
    acquired: rows.acquired,
    lock: "free",
    recoveries: "none",
  });
  assert.equal(
    r.stderr.trimEnd().split("\n").at(-1),
    `hint: after checking that the owner has ended and nothing remote still writes the state, run niceeval exp shared --teardown --recover-shared-state ${KEY} --owner-token ${owner.ownerToken} --confirm-owner-terminated --confirm-remote-quiesced`,
  );
  assert.deepEqual(await snapshot(join(p.dir, COORDINATION)), before);
});

Deno.test("S84 a missing confirmation exits 2 and a wrong token exits 1, changing nothing", async () => {
  await using p = await coordProject();
  const owner = await retainByKill(p);
  const before = await snapshot(join(p.dir, COORDINATION));
  const unconfirmed = await p.exec(
    recoverArgs(owner.ownerToken, "--confirm-owner-terminated"),
    "T",
  );
  assert.equal(unconfirmed.code, 2);
  assert.match(
    unconfirmed.stderr,
    /missing --confirm-remote-quiesced \[shared-state-recovery-confirmation-required\]/,
  );
  const wrong = await p.exec(recoverArgs("0b3c2a10-1111-4111-8111-111111111111", ...BOTH), "T");
  assert.equal(wrong.code, 1);
  assert.match(wrong.stderr, /\[shared-state-token-mismatch\]\nhint: /);
  assert.deepEqual(await snapshot(join(p.dir, COORDINATION)), before);
  assert.deepEqual(marksOf(await p.marks(), "teardown-start", "T"), []);
});

Deno.test("S85 recovery refuses while the owner runs and holds the flock exits 1", async () => {
  await using p = await coordProject();
  await p.set("hold-attempt");
  await using a = p.start(["exp", "shared", "--json"], "A");
  await p.waitForMark((m) => m.tag === "A" && m.event === "attempt-held", "A holds the lease");
  const owner = await ownerRecord(p);
  const r = await p.exec(recoverArgs(owner.ownerToken, ...BOTH), "T");
  assert.equal(r.code, 1);
  assert.match(r.stderr, /\[shared-state-owner-alive\]/);
  await p.clear("hold-attempt");
  assert.equal((await a.finished()).code, 0);
});

Deno.test("S86 recovery after a SIGKILL runs teardown once, frees the key, and the waiter then acquires exits 0", async () => {
  await using p = await coordProject();
  const owner = await retainByKill(p);
  await using b = p.start(["exp", "shared", "steps/0002", "--record", "rb", "--json"], "B");
  const notice = await b.waitForEvent((e) => e.code === "state-lease-waiting", "B waits");
  assert.equal((notice.data as { retained: boolean }).retained, true);
  const r = await p.exec(recoverArgs(owner.ownerToken, ...BOTH), "R");
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, `recovered sharedState key ${KEY} for shared\n`);
  const released = JSON.parse(
    await Deno.readTextFile(join(leaseDirOf(p.dir, KEY), "released-0000000001.json")),
  );
  assert.equal(released.by, "recovery");
  const done = await b.finished();
  assert.equal(done.code, 0, done.stderr);
  const marks = await p.marks();
  const forA = marksOf(marks, "teardown-start").filter((m) =>
    m.detail?.evals?.toString() === "steps/0001"
  );
  assert.deepEqual(forA.map((m) => m.tag), ["R"], "the owner's teardown ran once, by recovery");
  assert.equal(marksOf(marks, "setup-start", "B").length, 1);
  assert.deepEqual(await tree(join(p.dir, COORDINATION, "teardowns")), []);
});

Deno.test("S87 a failing recovery teardown keeps the key retained and the same token succeeds later", async () => {
  await using p = await coordProject();
  const owner = await retainByKill(p);
  await p.set("fail-teardown");
  const failed = await p.exec(recoverArgs(owner.ownerToken, ...BOTH), "R1");
  assert.equal(failed.code, 1);
  assert.match(failed.stderr, /injected teardown failure \[shared-state-recovery-failed\]/);
  const inspect = ["exp", "shared", "--teardown", "--recover-shared-state", KEY];
  const still = await p.exec(inspect, "T");
  assert.equal(still.code, 1);
  assert.match(still.stdout, /^state {2,}retained$/m);
  assert.match(still.stdout, /^recoveries {2,}1 \(last by /m);
  await p.clear("fail-teardown");
  const retried = await p.exec(recoverArgs(owner.ownerToken, ...BOTH), "R2");
  assert.equal(retried.code, 0, retried.stderr);
  assert.equal((await p.exec(inspect, "T")).code, 0);
});

Deno.test("S88 --json with --recover-shared-state is refused before anything is read exits 2", async () => {
  await using p = await coordProject();
  const args = ["exp", "shared", "--teardown", "--recover-shared-state", KEY, "--json"];
  const outside = await p.run(args, { cwd: "evals" });
  assert.equal(outside.code, 2);
  assert.match(outside.stderr, /\[usage\]/, "flags are checked before the config is looked for");
  const inside = await p.exec(args, "T");
  assert.equal(inside.code, 2);
  assert.deepEqual(await tree(join(p.dir, ".niceeval")), []);
});
