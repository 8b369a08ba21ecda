/** Section V (and S31, COORD-2) with real processes: where coordination state lives. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { sha256Hex } from "../../src/_shared/mod.ts";
import { alive, coordProject, flockFree, quietTree, tree } from "./_coordination.ts";

Deno.test("S31 exp --dry with a held root and a held key prints the plan at once and creates nothing exits 0", async () => {
  await using p = await coordProject();
  await p.set("hold-attempt");
  await using a = p.start(["exp", "shared", "--json"], "A");
  await p.waitForMark((m) => m.event === "attempt-held", "A holds the root and the key");
  const dirs = [join(p.dir, ".niceeval"), p.stateDir];
  // A keeps writing inside its own Run; everything else must stay as it was.
  const outsideRuns = async (dir: string) =>
    (await quietTree(dir)).filter((path) => !/^record\/runs\/[^/]+\/./.test(path));
  const before = await Promise.all(dirs.map(outsideRuns));
  const human = await p.run(["exp", "shared", "--dry"]);
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stdout, /^PLAN \(dry run\)\n {2}3 attempts \(3 evals × 1 experiment\) · /);
  const json = await p.run(["exp", "shared", "--dry", "--json"]);
  assert.equal(json.code, 0, json.stderr);
  assert.deepEqual([JSON.parse(json.stdout).total, JSON.parse(json.stdout).toRun], [3, 3]);
  assert.equal(a.exited, false, "--dry returned while A still holds everything");
  assert.deepEqual(await Promise.all(dirs.map(outsideRuns)), before);
  await p.clear("hold-attempt");
  assert.equal((await a.finished()).code, 0);
});

Deno.test("niceeval list, exp list, show and exp --dry never create .niceeval/ (COORD-2) exits 0", async () => {
  await using p = await coordProject();
  for (const args of [["list"], ["exp", "list"], ["show"], ["exp", "plain", "--dry"]]) {
    const r = await p.run(args);
    assert.ok(r.code === 0 || args[0] === "show", `${args.join(" ")}: ${r.stderr}`);
    assert.deepEqual(await tree(join(p.dir, ".niceeval")), [], args.join(" "));
  }
  assert.deepEqual(await tree(p.stateDir), []);
});

Deno.test("S166 a SIGKILLed niceeval whose child lives on leaves every flock free: root, slot, lease, registration", async () => {
  await using p = await coordProject();
  // The child starts in the sandbox's setup hook: after the root, the lease, the registration
  // and the machine slot were all taken, so it could have inherited every one of them.
  await p.set("spawn-child-sandbox");
  await p.set("hold-attempt");
  const a = p.start(["exp", "boxed", "--json"], "A");
  const child = await p.waitForMark((m) => m.event === "child", "A spawned a child");
  await p.waitForMark((m) => m.event === "attempt-held", "A runs an Attempt");
  const grandchild = Number(child.detail?.pid);
  try {
    const slot = join(p.stateDir, "slots", "local", "slot-0.lock");
    const registrations = join(p.dir, ".niceeval", "coordination", "teardowns");
    const [registration] = await tree(registrations);
    assert.ok(registration, "A registered its teardown");
    assert.equal(await flockFree(slot), false, "A holds the machine slot");
    assert.equal(await flockFree(join(registrations, registration)), false);
    a.child.kill("SIGKILL");
    await a.finished();
    assert.ok(alive(grandchild), "the child outlives its parent");
    await p.clear("spawn-child-sandbox");
    await p.clear("hold-attempt");
    assert.equal(await flockFree(slot), true, "the machine slot is free");
    assert.equal(await flockFree(join(registrations, registration)), true);
    const clean = await p.run(["clean"]);
    assert.equal(clean.code, 0, `the root lock is free: ${clean.stderr}`);
    const inspect = await p.run([
      "exp",
      "boxed",
      "--teardown",
      "--recover-shared-state",
      "db/main",
    ]);
    assert.match(inspect.stdout, /^lock {2,}free$/m);
    assert.match(inspect.stdout, /^state {2,}retained$/m);
    const teardown = await p.exec(["exp", "boxed", "--teardown"], "T");
    assert.equal(teardown.stdout, "boxed  ran for 1 orphaned registration(s)\n");
  } finally {
    Deno.kill(grandchild, "SIGKILL");
  }
});

Deno.test("S167 the root lock lives under $XDG_STATE_HOME/niceeval unless NICEEVAL_STATE_DIR is set exits 0", async () => {
  await using p = await coordProject();
  const xdg = await Deno.makeTempDir({ prefix: "niceeval-xdg-" });
  try {
    const root = join(p.dir, ".niceeval", "record");
    const viaXdg = await p.exec(["exp", "plain"], "A", {
      NICEEVAL_STATE_DIR: "",
      XDG_STATE_HOME: xdg,
    });
    assert.equal(viaXdg.code, 0, viaXdg.stderr);
    const lock = `roots/${sha256Hex(await Deno.realPath(root))}.lock`;
    assert.deepEqual(await tree(join(xdg, "niceeval")), ["roots/", lock]);
    assert.deepEqual(await tree(p.stateDir), []);
    const viaState = await p.exec(["exp", "plain", "--rerun", "all"], "B", {
      XDG_STATE_HOME: xdg,
    });
    assert.equal(viaState.code, 0, viaState.stderr);
    assert.deepEqual(await tree(p.stateDir), ["roots/", lock]);
  } finally {
    await Deno.remove(xdg, { recursive: true });
  }
});
