/**
 * `stop()` and an aborted command of a local sandbox leave none of their processes behind
 * (sandboxes.md rule 101, docs/local_sandbox.md), not even one that left its command's process
 * group: coding-agent CLIs start their tools in new sessions, and such a tool may keep starting
 * more while it is being killed.
 */
import assert from "node:assert/strict";
import {
  killTree,
  type ProcEntry,
  type ProcessTable,
} from "../../src/sandbox/providers/_process_tree.ts";
import { HANG_MS, killQuietly, localTestBed, pollUntil, processDead, text } from "./_local.ts";

/**
 * A process in a new session that keeps starting a new-session `sleep` and killing the previous
 * one, as fast as it can: whatever it started after a kill's scan is a new process in a new group.
 */
const SPAWNER = `setsid sh -c 'while :; do setsid sleep 300 </dev/null >/dev/null 2>&1 & ` +
  `p=$!; kill $q 2>/dev/null; q=$p; done' </dev/null >/dev/null 2>&1 &`;

/** Live processes started with `NICEEVAL_SANDBOX_ROOT=<root>` in their environment. */
async function marked(root: string): Promise<number[]> {
  const found: number[] = [];
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const pid = Number(entry.name);
    const environ = await Deno.readTextFile(`/proc/${pid}/environ`).catch(() => "");
    if (!environ.split("\0").includes(`NICEEVAL_SANDBOX_ROOT=${root}`)) continue;
    if (!(await processDead(pid))) found.push(pid);
  }
  return found;
}

/** Test cleanup: kills marked processes until none is left (bounded). */
async function killAllMarked(root: string): Promise<void> {
  for (let round = 0; round < 100; round++) {
    const left = await marked(root);
    if (left.length === 0) return;
    for (const pid of left) killQuietly(pid);
  }
}

Deno.test("stop() kills a process that moved to a new session but carries the sandbox marker", async () => {
  await using bed = await localTestBed();
  const sb = await bed.create();
  // It reports its pid through a FIFO once setsid has run, so its group is already its own.
  const r = await sb.exec({
    script: "mkfifo started && (setsid sh -c 'echo $$ >started; exec sleep 300' " +
      ">/dev/null 2>&1 </dev/null &) && read -r pid <started && echo $pid",
  });
  const pid = Number(text(r.stdout).trim());
  assert.ok(pid > 0, text(r.stdout));
  try {
    const stat = await Deno.readTextFile(`/proc/${pid}/stat`).catch(() => "");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // Its own group and session, never the group the sandbox recorded for the command.
    assert.equal(Number(fields[2]), pid, stat);
    await sb.stop();
    assert.ok(await pollUntil(() => processDead(pid), HANG_MS), `process ${pid} survived stop()`);
  } finally {
    killQuietly(pid);
  }
});

/**
 * Link `i` of a chain: starts link `i + 1` in a new session, then sleeps. The newest link always has
 * the highest pid, so a kill that works through one scan reaches it last, after it started the next.
 */
const LINK = `i=$1
[ "$i" -lt 100 ] && setsid sh ./link.sh $((i + 1)) </dev/null >/dev/null 2>&1 &
exec sleep 300
`;

Deno.test("stop() kills new-session processes that keep starting new-session processes", async () => {
  await using bed = await localTestBed();
  const sb = await bed.create();
  await sb.writeFile("link.sh", new TextEncoder().encode(LINK));
  const r = await sb.exec({
    script: `setsid sh ./link.sh 0 </dev/null >/dev/null 2>&1 & echo "$NICEEVAL_SANDBOX_ROOT"`,
  });
  const root = text(r.stdout).trim();
  assert.ok(root.length > 0, text(r.stderr));
  try {
    assert.ok(await pollUntil(async () => (await marked(root)).length > 0, HANG_MS), "it runs");
    await sb.stop();
    // stop() returns only after a scan found none of them: no waiting here.
    assert.deepEqual(await marked(root), [], "marked processes survived stop()");
  } finally {
    await killAllMarked(root);
  }
});

Deno.test("exec() abort kills descendants in new sessions that keep starting more", async () => {
  await using bed = await localTestBed();
  const sb = await bed.create();
  const controller = new AbortController();
  let root = "";
  let onStarted: () => void = () => {};
  const started = new Promise<void>((resolve) => (onStarted = resolve));
  try {
    const running = sb.exec({ script: `${SPAWNER} echo "$NICEEVAL_SANDBOX_ROOT"; wait` }, {
      signal: controller.signal,
      onOutput: (chunk) => {
        root += text(chunk.data);
        if (root.endsWith("\n")) onStarted();
      },
    });
    await started;
    root = root.trim();
    // A process in the middle of an exec shows no environment: wait until one shows the marker.
    assert.ok(await pollUntil(async () => (await marked(root)).length > 0, HANG_MS), "it runs");
    controller.abort(new Error("deadline"));
    const error = await running.then(() => undefined, (e) => e);
    assert.equal(error?.name, "SandboxAbortedError", String(error));
    // The sandbox stays usable and the aborted command left nothing behind.
    assert.deepEqual(await marked(root), [], "descendants of the aborted command survived");
    assert.equal(text((await sb.exec({ script: "echo ok" })).stdout), "ok\n");
  } finally {
    if (root !== "") await killAllMarked(root);
  }
});

/** A process of {@link ScriptedTable}: a `SIGKILL` takes effect after `dieAfter` more scans. */
interface FakeProc {
  ppid: number;
  pgid: number;
  state: "S" | "T";
  stopping?: boolean;
  dieIn?: number;
  dieAfter?: number;
}

/**
 * A process table for `killTree()` whose scans the test scripts: `beforeScan(n)` runs as scan `n`
 * starts, a signal takes effect at the next scan (a loaded host runs the target later), and a
 * dead process's children are reparented to 1.
 */
class ScriptedTable implements ProcessTable {
  readonly procs = new Map<number, FakeProc>();
  readonly signalled = new Map<number, string[]>();
  scans = 0;
  /** Processes that scan `n` leaves out of its listing (forked after it listed `/proc`). */
  unlisted = new Set<number>();
  constructor(readonly beforeScan: (n: number, table: ScriptedTable) => void) {}

  scan(): Promise<ProcEntry[]> {
    for (const [pid, p] of this.procs) {
      if (p.stopping) p.state = "T";
      if (p.dieIn !== undefined && p.dieIn-- === 0) this.#die(pid);
    }
    this.unlisted = new Set();
    this.beforeScan(++this.scans, this);
    const listed = [...this.procs].filter(([pid]) => !this.unlisted.has(pid));
    return Promise.resolve(listed.map(([pid, p]) => ({ pid, ...p, start: "1" })));
  }

  environ(): Promise<string> {
    return Promise.resolve("");
  }

  ownGroup(): Promise<number> {
    return Promise.resolve(2);
  }

  signal(pid: number, sig: "SIGSTOP" | "SIGKILL"): void {
    this.signalled.set(pid, [...(this.signalled.get(pid) ?? []), sig]);
    const targets = pid < 0
      ? [...this.procs].filter(([, p]) => p.pgid === -pid).map(([member]) => member)
      : [pid];
    for (const target of targets) {
      const p = this.procs.get(target);
      if (p === undefined) continue;
      if (sig === "SIGSTOP") p.stopping = true;
      else p.dieIn ??= p.dieAfter ?? 0;
    }
  }

  #die(pid: number): void {
    this.procs.delete(pid);
    for (const p of this.procs.values()) if (p.ppid === pid) p.ppid = 1;
  }
}

Deno.test("killTree() kills a child forked while a scan read the states of a stopping tree", async () => {
  // Command leader 10 and a new-session tool 11; 20 is another command's orphan, left alone.
  const table = new ScriptedTable((n, t) => {
    if (n !== 2) return;
    // 11 forked 12 after scan 2 listed /proc, then stopped: scan 2 shows both stopped without it.
    t.procs.set(12, { ppid: 11, pgid: 12, state: "S" });
    t.unlisted.add(12);
  });
  table.procs.set(10, { ppid: 3, pgid: 10, state: "S" });
  table.procs.set(11, { ppid: 10, pgid: 11, state: "S" });
  table.procs.set(20, { ppid: 1, pgid: 20, state: "S" });
  assert.equal(await killTree(10, table), true);
  assert.deepEqual([...table.procs.keys()], [20], "the forked child survived");
  assert.equal(table.signalled.has(20), false);
});

Deno.test("killTree() confirms the death of a killed member that outlives its parent", async () => {
  const table = new ScriptedTable(() => {});
  table.procs.set(10, { ppid: 3, pgid: 10, state: "S" });
  table.procs.set(11, { ppid: 10, pgid: 11, state: "S" });
  // Not run for 3 scans after its kill: its parent dies first and it is reparented to 1.
  table.procs.set(12, { ppid: 11, pgid: 12, state: "S", dieAfter: 3 });
  table.procs.set(20, { ppid: 1, pgid: 20, state: "S" });
  assert.equal(await killTree(10, table), true);
  assert.deepEqual([...table.procs.keys()], [20], "the killed member was still alive");
  assert.equal(table.signalled.has(20), false);
});
