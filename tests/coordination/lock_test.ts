/** `src/coordination/lock.ts` (toolchain.md §6.10, S165). */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  lockRecordRoot,
  readLockOwner,
  stateDirOf,
  tryAcquireLock,
} from "../../src/coordination/mod.ts";
import { acquireLock } from "../../src/coordination/lock.ts";
import { createFakeClock } from "../_fakes/clock.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";
import { withinHangBound } from "./_helpers.ts";

const LOCK_MODULE = new URL("../../src/coordination/lock.ts", import.meta.url).href;

/** Spawns a process that takes the lock, prints "locked" and waits for stdin to close. */
async function holder(path: string): Promise<Deno.ChildProcess> {
  const script = `import { tryAcquireLock } from ${JSON.stringify(LOCK_MODULE)};
const lock = await tryAcquireLock(${
    JSON.stringify(path)
  }, { owner: { pid: Deno.pid, hostname: "h", startedAt: "t" } });
console.log(lock ? "locked" : "busy");
for await (const _ of Deno.stdin.readable) { /* hold until stdin closes */ }`;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", script],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const { value } = await withinHangBound(
    reader.read(),
    `the holder child ${child.pid} reports whether it took ${path}`,
  );
  reader.releaseLock();
  assert.equal(value?.trim(), "locked");
  return child;
}

Deno.test("S165 tryAcquireLock() returns null at once for a second handle in the same process, and closing frees it", () =>
  withTempDir(async (dir) => {
    const path = join(dir, "a", "b.lock");
    const first = await tryAcquireLock(path);
    assert.ok(first);
    assert.equal(await tryAcquireLock(path), null);
    first.release();
    first.release();
    const again = await tryAcquireLock(path);
    assert.ok(again);
    again.release();
    assert.ok((await Deno.stat(path)).isFile, "the lock file stays after release");
  }));

Deno.test("tryAcquireLock() sees a lock held by a child process, free again once it is SIGKILLed", () =>
  withTempDir(async (dir) => {
    const path = join(dir, "x.lock");
    const child = await holder(path);
    try {
      assert.equal(await tryAcquireLock(path), null);
      assert.equal(
        (await readLockOwner(path))?.pid,
        child.pid,
        "the owner JSON of a busy lock stays intact",
      );
      child.kill("SIGKILL");
      await child.status;
      const lock = await tryAcquireLock(path);
      assert.ok(lock, "the kernel released the lock of the killed holder");
      lock.release();
    } finally {
      await child.stdin.close().catch(() => undefined);
      await child.stdout.cancel().catch(() => undefined);
      try {
        child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
      await child.status;
    }
  }));

Deno.test("a child started while a lock is held does not inherit it", () =>
  withTempDir(async (dir) => {
    const path = join(dir, "y.lock");
    const lock = await tryAcquireLock(path);
    assert.ok(lock);
    const child = new Deno.Command("sleep", { args: ["30"], stdout: "null", stderr: "null" })
      .spawn();
    try {
      lock.release();
      const again = await tryAcquireLock(path);
      assert.ok(again, "the sleeping child holds no copy of the descriptor");
      again.release();
    } finally {
      child.kill("SIGKILL");
      await child.status;
    }
  }));

Deno.test("a lock released while another thread spawns children is free at once", () =>
  withTempDir(async (dir) => {
    // Between fork and exec a child holds a copy of every descriptor of the process; releasing
    // must not leave the lock with that copy.
    const spawner = `let go = true;
self.onmessage = () => { go = false; };
while (go) await new Deno.Command("true").spawn().status;
self.postMessage("stopped");`;
    const worker = new Worker(`data:application/javascript,${encodeURIComponent(spawner)}`, {
      type: "module",
    });
    const path = join(dir, "r.lock");
    let refused = 0;
    try {
      for (let i = 0; i < 300; i++) {
        const lock = await tryAcquireLock(path);
        if (lock) lock.release();
        else refused++;
      }
    } finally {
      const stopped = new Promise((resolve) => worker.onmessage = resolve);
      worker.postMessage("stop");
      await withinHangBound(stopped, "the spawner worker stops");
      worker.terminate();
    }
    assert.equal(refused, 0, "every acquisition right after a release succeeds");
  }));

Deno.test("acquireLock() polls on the injected clock and rejects with the abort reason", () =>
  withTempDir(async (dir) => {
    const path = join(dir, "z.lock");
    const held = await tryAcquireLock(path);
    assert.ok(held);
    const clock = createFakeClock();
    const controller = new AbortController();
    const waiting = acquireLock(path, { signal: controller.signal, clock, pollMs: 200 });
    await clock.tickAsync(1000);
    held.release();
    await clock.tickAsync(200);
    const got = await withinHangBound(
      waiting,
      "acquireLock() gets the lock released by the first handle (was it never released?)",
    );
    assert.equal(got.path, path);
    const second = acquireLock(path, { signal: controller.signal, clock, pollMs: 200 });
    await clock.tickAsync(400);
    const reason = new Error("stop");
    controller.abort(reason);
    await assert.rejects(second, (e) => e === reason);
    got.release();
  }));

Deno.test("lockRecordRoot() fails with record-root-busy naming the holder pid, and treats a symlink as the same root", () =>
  withTempDir(async (dir) => {
    const state = join(dir, "state");
    const root = join(dir, "record");
    const owner = { pid: 4242, hostname: "h", startedAt: "t" };
    const lock = await lockRecordRoot(root, state, owner);
    try {
      await Deno.symlink(root, join(dir, "alias"));
      await assert.rejects(
        lockRecordRoot(join(dir, "alias"), state, owner),
        (e: Error & { code?: string; hint?: string }) => {
          assert.equal(e.code, "record-root-busy");
          assert.match(e.message, /\(pid 4242\)$/);
          assert.match(e.hint ?? "", /--record /);
          return true;
        },
      );
      const other = await lockRecordRoot(join(dir, "record-2"), state, owner);
      other.release();
    } finally {
      lock.release();
    }
  }));

Deno.test("stateDirOf() prefers NICEEVAL_STATE_DIR, then XDG_STATE_HOME, then HOME (LOCK-2)", () => {
  assert.equal(stateDirOf({ NICEEVAL_STATE_DIR: "/s", XDG_STATE_HOME: "/x", HOME: "/h" }), "/s");
  assert.equal(stateDirOf({ XDG_STATE_HOME: "/x", HOME: "/h" }), "/x/niceeval");
  assert.equal(stateDirOf({ HOME: "/h" }), "/h/.local/state/niceeval");
});

Deno.test("tryAcquireLock() with create: false never creates the file and throws NotFound", () =>
  withTempDir(async (dir) => {
    const path = join(dir, "missing", "r.json");
    await assert.rejects(tryAcquireLock(path, { create: false }), Deno.errors.NotFound);
    await assert.rejects(Deno.stat(join(dir, "missing")), Deno.errors.NotFound);
  }));

Deno.test('tryAcquireLock() with create: "new" refuses an existing file', () =>
  withTempDir(async (dir) => {
    const path = join(dir, "n.json");
    const lock = await tryAcquireLock(path, { create: "new" });
    assert.ok(lock);
    try {
      await assert.rejects(tryAcquireLock(path, { create: "new" }), Deno.errors.AlreadyExists);
    } finally {
      lock.release();
    }
  }));

Deno.test("FileLock.writeContent() replaces the content and stat() follows the inode across a rename", () =>
  withTempDir(async (dir) => {
    const path = join(dir, "w.json");
    await Deno.writeTextFile(path, "a much longer previous content");
    const lock = await tryAcquireLock(path, { create: false });
    assert.ok(lock);
    try {
      await lock.writeContent("{}\n");
      assert.equal(await Deno.readTextFile(path), "{}\n");
      await Deno.rename(path, `${path}.claimed`);
      assert.equal((await lock.stat()).ino, (await Deno.stat(`${path}.claimed`)).ino);
      assert.equal(
        await tryAcquireLock(`${path}.claimed`, { create: false }),
        null,
        "the flock follows the inode",
      );
    } finally {
      lock.release();
    }
  }));
