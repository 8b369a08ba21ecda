/** Crash cleanup of local roots, fully real (sandboxes.md §9.2, rules 91–97, 101). */
import assert from "node:assert/strict";
import { join } from "node:path";
import { createProcessProbe } from "../../src/coordination/mod.ts";
import { destroyLocalRoot, findLocalRoots, sweepLocalOrphans } from "../../src/sandbox/mod.ts";
import { HANG_MS, killQuietly, localTestBed, pollUntil, processDead, text } from "./_local.ts";

async function deadPid(): Promise<number> {
  const child = new Deno.Command("true").spawn();
  await child.status;
  return child.pid;
}

Deno.test("sweepLocalOrphans() removes a root whose owner died and keeps a live owner's", async () => {
  await using bed = await localTestBed();
  const probe = createProcessProbe();
  const sleeper = new Deno.Command("sleep", { args: ["60"] }).spawn();
  try {
    const liveStart = await probe.startTimeOf(sleeper.pid);
    const dead = await bed.create({ owner: { pid: await deadPid(), processStart: liveStart } });
    const alive = await bed.create({ owner: { pid: sleeper.pid, processStart: liveStart } });
    const foreign = await bed.create({ owner: { pid: await deadPid(), host: "other-host" } });
    const background = Number(
      text((await dead.exec({ script: "sleep 60 >/dev/null & echo $!" })).stdout),
    );
    try {
      const swept = await sweepLocalOrphans({ tmpDir: bed.tmpDir, host: Deno.hostname(), probe });
      assert.deepEqual(swept, { removed: [dead.id], failed: [] });
      const left = (await findLocalRoots(bed.tmpDir, {})).map((r) => r.id).sort();
      assert.deepEqual(left, [alive.id, foreign.id].sort());
      assert.ok(await pollUntil(() => processDead(background), HANG_MS), "background still alive");
    } finally {
      killQuietly(background);
    }
  } finally {
    sleeper.kill("SIGKILL");
    await sleeper.status;
  }
});

Deno.test("findLocalRoots() matches owner fields and destroyLocalRoot() reports already-gone", async () => {
  await using bed = await localTestBed();
  const a = await bed.create({ owner: { provisionToken: "a".repeat(32) } });
  await bed.create({ owner: { provisionToken: "b".repeat(32) } });
  const found = await findLocalRoots(bed.tmpDir, { provisionToken: "a".repeat(32) });
  assert.deepEqual(found.map((f) => f.id), [a.id]);
  assert.equal(found[0]!.owner.runId, "run-test");
  assert.equal(found[0]!.state, "running");
  assert.equal(await destroyLocalRoot(bed.tmpDir, a.id), "destroyed");
  assert.equal(await destroyLocalRoot(bed.tmpDir, a.id), "already-gone");
  await assert.rejects(() => destroyLocalRoot(bed.tmpDir, "../etc"), RangeError);
});

Deno.test("destroyLocalRoot() leaves a recorded group alone when it lacks the root's marker", async () => {
  await using bed = await localTestBed();
  const sb = await bed.create();
  const stranger = new Deno.Command("sleep", { args: ["60"], detached: true }).spawn();
  try {
    // A recorded group id that now belongs to an unrelated process must not be killed.
    await Deno.writeTextFile(join(sb.workdir, "..", "pgids"), `${stranger.pid}\n`);
    assert.equal(await destroyLocalRoot(bed.tmpDir, sb.id), "destroyed");
    assert.equal(await processDead(stranger.pid), false);
  } finally {
    stranger.kill("SIGKILL");
    await stranger.status;
  }
});

Deno.test("the local provider's findOwned and destroyDetached work without a plan", async () => {
  await using bed = await localTestBed();
  const sb = await bed.create({ owner: { runId: "run-x" } });
  const signal = new AbortController().signal;
  const owned = await bed.provider.findOwned!({ runId: "run-x" }, signal);
  assert.deepEqual(owned.map((o) => o.id), [sb.id]);
  assert.equal(await bed.provider.destroyDetached!(sb.id, signal), "destroyed");
  assert.deepEqual(await bed.provider.findOwned!({ runId: "run-x" }, signal), []);
});
