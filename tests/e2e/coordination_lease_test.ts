/** Section K of scenarios.md with real processes: sharedState leases across Invocations. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { leaseDirOf } from "../../src/coordination/mod.ts";
import { ndjson } from "../_helpers/cli.ts";
import { readRunFiles } from "../_helpers/record_files.ts";
import {
  alive,
  type CoordProject,
  coordProject,
  HANG_MS,
  type Mark,
  marksOf,
  type Running,
  tree,
} from "./_coordination.ts";

const KEY = "db/main";

/** Setup-start to teardown-end of every holder, in log order; fails on any overlap. */
function windows(marks: readonly Mark[]): string[] {
  const out: string[] = [];
  let open: Mark | undefined;
  for (const m of marks) {
    if (m.event === "setup-start") {
      assert.equal(open, undefined, `${m.tag} (pid ${m.pid}) entered while ${open?.tag} held`);
      open = m;
    } else if (m.event === "teardown-end") {
      assert.equal(open?.pid, m.pid, `${m.tag} left a window it did not open`);
      out.push(m.tag);
      open = undefined;
    }
  }
  assert.equal(open, undefined, "every window closed");
  return out;
}

async function leaseNames(p: CoordProject): Promise<string[]> {
  return await tree(leaseDirOf(p.dir, KEY));
}

async function leaseRecord(p: CoordProject, name: string): Promise<Record<string, unknown>> {
  return JSON.parse(await Deno.readTextFile(join(leaseDirOf(p.dir, KEY), name)));
}

function waitingNotices(stdout: string): Record<string, unknown>[] {
  return ndjson(stdout).filter((e) => e.code === "state-lease-waiting");
}

Deno.test("S76 two processes with one key never overlap, the waiter emits one notice and creates no sandbox before the release exits 0", async () => {
  await using p = await coordProject();
  await p.set("hold-attempt-A");
  await using a = p.start(["exp", "boxed", "--json"], "A");
  await p.waitForMark((m) => m.tag === "A" && m.event === "attempt-held", "A holds the lease");
  await using b = p.start(["exp", "boxed", "--record", "rb", "--json"], "B");
  await b.waitForEvent((e) => e.code === "state-lease-waiting", "B waits");
  await p.clear("hold-attempt-A");
  const [doneA, doneB] = [await a.finished(), await b.finished()];
  assert.equal(doneA.code, 0, doneA.stderr);
  assert.equal(doneB.code, 0, doneB.stderr);
  const notices = waitingNotices(doneB.stdout);
  assert.equal(notices.length, 1);
  assert.deepEqual(notices[0]!.data, {
    experimentId: "boxed",
    sharedStateKey: KEY,
    retained: false,
  });
  const marks = await p.marks();
  assert.deepEqual(windows(marks), ["A", "B"]);
  const released = Date.parse(
    String((await leaseRecord(p, "released-0000000001.json")).releasedAt),
  );
  const created = marksOf(marks, "sandbox-created", "B").map((m) => Number(m.detail?.at));
  assert.ok(created.length > 0, "B created its sandbox");
  assert.ok(
    created.every((at) => at >= released),
    `B created a sandbox at ${created} before A released at ${released}`,
  );
  const owner2 = await leaseRecord(p, "owner-0000000002.json");
  assert.equal(owner2.pid, b.pid, "B took the generation after A's release");
  assert.ok(Date.parse(String(owner2.acquiredAt)) >= released);
});

Deno.test("S79 a waiter executes its own plan and carries nothing the holder published exits 0", async () => {
  await using p = await coordProject();
  await p.set("hold-attempt-A");
  await using a = p.start(["exp", "shared", "--json"], "A");
  await p.waitForMark((m) => m.tag === "A" && m.event === "attempt-held", "A holds the lease");
  await using b = p.start(["exp", "shared", "--record", "rb", "--json"], "B");
  await b.waitForEvent((e) => e.code === "state-lease-waiting", "B waits");
  await p.clear("hold-attempt-A");
  assert.equal((await a.finished()).code, 0);
  const done = await b.finished();
  assert.equal(done.code, 0, done.stderr);
  const events = ndjson(done.stdout);
  assert.deepEqual([events[0]!.reused, events[0]!.toRun], [0, 3]);
  assert.equal(events.filter((e) => e.type === "attempt_end").length, 3);
  assert.ok(events.filter((e) => e.type === "eval").every((e) => e.reused === 0));
});

Deno.test("S80 a failed pooled-sandbox stop retains the lease, records it without the token, and a later run waits on retained", async () => {
  await using p = await coordProject();
  await p.set("fail-sandbox-stop-A");
  const a = await p.exec(["exp", "boxed", "--json"], "A");
  assert.equal(a.code, 0, a.stderr);
  assert.equal(marksOf(await p.marks(), "sandbox-stopped", "A").length, 1);
  const names = await leaseNames(p);
  assert.ok(names.includes("owner-0000000001.json"));
  assert.ok(!names.includes("released-0000000001.json"));
  const receipt = ndjson(a.stdout).at(-1)!;
  const [runId] = receipt.runIds as string[];
  const run = await readRunFiles(join(p.dir, ".niceeval/record"), runId!);
  const codes = run.diagnostics.map((d) => d.code);
  assert.ok(codes.includes("sandbox-reuse-cleanup-failed"), JSON.stringify(codes));
  const diagnostic = run.diagnostics.find((d) => d.code === "state-lease-recovery-required")!;
  assert.deepEqual(diagnostic.data, {
    experimentId: "boxed",
    sharedStateKey: KEY,
    reason: "cleanup-failed",
  });
  const token = String((await leaseRecord(p, "owner-0000000001.json")).ownerToken);
  for (const file of ["run.json", "records.log"]) {
    const text = await p.read(`.niceeval/record/runs/${runId}/${file}`);
    assert.ok(!text.includes(token), `${file} never holds the token`);
  }
  assert.ok(!a.stdout.includes(token), "the live output never shows the token either");
  await using b = p.start(["exp", "boxed", "--record", "rb", "--json"], "B");
  const notice = await b.waitForEvent((e) => e.code === "state-lease-waiting", "B waits");
  assert.equal((notice.data as { retained: boolean }).retained, true);
  b.child.kill("SIGINT");
  assert.equal((await b.finished()).code, 130);
  assert.deepEqual(marksOf(await p.marks(), "setup-start", "B"), []);
});

Deno.test("niceeval exp: a failing experiment teardown retains the lease with cleanup-failed exits 0", async () => {
  await using p = await coordProject();
  await p.set("fail-teardown-A");
  const a = await p.exec(["exp", "shared", "--json"], "A");
  assert.equal(a.code, 0, a.stderr);
  assert.ok(!(await leaseNames(p)).includes("released-0000000001.json"));
  const retained = ndjson(a.stdout).filter((e) => e.code === "state-lease-recovery-required");
  assert.deepEqual(retained.map((e) => e.data), [
    { experimentId: "shared", sharedStateKey: KEY, reason: "cleanup-failed" },
  ]);
  const inspect = await p.exec(
    ["exp", "shared", "--teardown", "--recover-shared-state", KEY],
    "T",
  );
  assert.equal(inspect.code, 1);
  assert.match(inspect.stdout, /^state {2,}retained$/m);
});

Deno.test("S81 a SIGSTOPped holder never lets a waiter in; after SIGCONT and its end the waiter acquires exits 0", async () => {
  await using p = await coordProject();
  await p.set("hold-attempt-A");
  await using a = p.start(["exp", "shared", "--json"], "A");
  await p.waitForMark((m) => m.tag === "A" && m.event === "attempt-held", "A holds the lease");
  await using b = p.start(["exp", "shared", "--record", "rb", "--json"], "B");
  await b.waitForEvent((e) => e.code === "state-lease-waiting", "B waits");
  const leaseDir = leaseDirOf(p.dir, KEY);
  const lockPath = join(leaseDir, "lock");
  // Each poll of B opens the key's lock file and, failing to take it, closes it: inotify reports
  // one access per poll. Counting polls, not waiting a time, proves B checked the key while A
  // was stopped (a loaded machine only makes the polls come later).
  const watcher = Deno.watchFs(leaseDir);
  let watching = true;
  const unwatch = () => {
    if (watching) watcher.close();
    watching = false;
  };
  const hang = setTimeout(unwatch, HANG_MS);
  a.child.kill("SIGSTOP");
  try {
    await p.clear("hold-attempt-A");
    // A stopped owner keeps its flock, so no poll may let B write an owner record or start its
    // lifecycle.
    const bOutside = async () =>
      !(await leaseNames(p)).includes("owner-0000000002.json") &&
      (await p.marks()).every((m) => m.tag !== "B") &&
      !b.events().some((e) => e.type === "experiment_setup" || e.type === "attempt_start") &&
      !b.exited;
    let polls = 0;
    for await (const event of watcher) {
      if (event.kind !== "access" || !event.paths.includes(lockPath)) continue;
      assert.ok(await bOutside(), `B got in at poll ${polls + 1} while A was stopped`);
      if (++polls === 3) break;
    }
    assert.equal(polls, 3, "B polled the key three times while A was stopped");
    assert.ok(await bOutside(), "B stays outside while A is stopped");
  } finally {
    clearTimeout(hang);
    unwatch();
    a.child.kill("SIGCONT");
  }
  assert.equal((await a.finished()).code, 0);
  assert.equal((await b.finished()).code, 0);
  assert.deepEqual(windows(await p.marks()), ["A", "B"]);
});

Deno.test("S82 a SIGKILLed holder leaves the key retained and a waiter names the recovery command", async () => {
  await using p = await coordProject();
  await p.set("hold-attempt-A");
  const a = p.start(["exp", "shared", "--json"], "A");
  await p.waitForMark((m) => m.tag === "A" && m.event === "attempt-held", "A holds the lease");
  a.child.kill("SIGKILL");
  await a.finished();
  const inspect = await p.exec(
    ["exp", "shared", "--teardown", "--recover-shared-state", KEY],
    "T",
  );
  assert.equal(inspect.code, 1);
  assert.match(inspect.stdout, /^state {2,}retained$/m);
  await using b = p.start(["exp", "shared", "--record", "rb", "--json"], "B");
  const notice = await b.waitForEvent((e) => e.code === "state-lease-waiting", "B waits");
  assert.match(
    String(notice.message),
    /niceeval exp shared --teardown --recover-shared-state db\/main/,
  );
  b.child.kill("SIGINT");
  const done = await b.finished();
  assert.equal(done.code, 130);
  assert.equal(ndjson(done.stdout).at(-1)!.completion, "interrupted");
});

Deno.test("S90 an owner's surviving child keeps no flock: after SIGKILL the key is retained, not held", async () => {
  await using p = await coordProject();
  await p.set("spawn-child");
  await p.set("hold-setup");
  const a = p.start(["exp", "shared", "--json"], "A");
  const child = await p.waitForMark((m) => m.event === "child", "A spawned a child");
  await p.waitForMark((m) => m.event === "setup-held", "A holds the lease in setup");
  const grandchild = Number(child.detail?.pid);
  try {
    a.child.kill("SIGKILL");
    await a.finished();
    assert.ok(alive(grandchild), "the child outlives its parent");
    const inspect = await p.exec(
      ["exp", "shared", "--teardown", "--recover-shared-state", KEY],
      "T",
    );
    assert.match(inspect.stdout, /^state {2,}retained$/m);
    assert.match(inspect.stdout, /^lock {2,}free$/m);
  } finally {
    Deno.kill(grandchild, "SIGKILL");
  }
});

/**
 * One round of four contenders, each on its own root. The round's first process takes the key
 * and holds it in `setup` until the other three, started one after another, all wait for it, so
 * every window but the round's last has waiters polling for the key (their poll phases spread
 * over their start times).
 */
async function contendedRound(p: CoordProject, round: number): Promise<void> {
  const order = [0, 1, 2, 3].map((i) => (i + round) % 4);
  const start = (i: number) =>
    p.start(
      ["exp", "shared", "--record", `r${i}`, "--rerun", "all", "--json"],
      `P${i}`,
      { COORD_SETUP_MS: "300" },
    );
  await p.set("hold-setup");
  const children: Running[] = [];
  try {
    children.push(start(order[0]!));
    await p.waitForMark(
      (m) => m.pid === children[0]!.pid && m.event === "setup-held",
      `round ${round}: P${order[0]} holds the key`,
    );
    for (const i of order.slice(1)) {
      const child = start(i);
      children.push(child);
      await child.waitForEvent(
        (e) => e.code === "state-lease-waiting",
        `round ${round}: P${i} waits`,
      );
    }
    await p.clear("hold-setup");
    for (const [n, child] of children.entries()) {
      const done = await child.finished();
      assert.equal(done.code, 0, done.stderr);
      assert.equal(waitingNotices(done.stdout).length, n === 0 ? 0 : 1);
    }
  } finally {
    for (const child of children) await child[Symbol.asyncDispose]();
  }
}

Deno.test("niceeval exp: four processes contending for one key over many rounds never overlap exits 0", async () => {
  await using p = await coordProject();
  const rounds = 4;
  for (let round = 0; round < rounds; round++) await contendedRound(p, round);
  const marks = await p.marks();
  const held = windows(marks);
  assert.equal(held.length, 4 * rounds);
  for (let i = 0; i < 4; i++) assert.equal(held.filter((tag) => tag === `P${i}`).length, rounds);
  const names = await leaseNames(p);
  assert.equal(names.filter((n) => n.startsWith("owner-")).length, 4 * rounds);
  assert.equal(names.filter((n) => n.startsWith("released-")).length, 4 * rounds);
  // Generation g went to the g-th window's process, which took it after g − 1 was released.
  const openers = marksOf(marks, "setup-start").map((m) => m.pid);
  let releasedBefore = -Infinity;
  for (let g = 1; g <= 4 * rounds; g++) {
    const file = (kind: string) => `${kind}-${String(g).padStart(10, "0")}.json`;
    const owner = await leaseRecord(p, file("owner"));
    assert.equal(owner.pid, openers[g - 1], `owner of generation ${g}`);
    assert.ok(Date.parse(String(owner.acquiredAt)) >= releasedBefore, `generation ${g}`);
    releasedBefore = Date.parse(String((await leaseRecord(p, file("released"))).releasedAt));
  }
});
