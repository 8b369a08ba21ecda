/**
 * Kills whole process trees of host subprocesses from `/proc` (sandboxes.md rule 101, extended in
 * docs/local_sandbox.md): a tool that a coding-agent CLI starts in a new session has left the
 * command's process group, so a group kill alone misses it. A tree is frozen first (`SIGSTOP`, scan
 * after scan: a stopped process cannot start another and keeps its children attached), then killed
 * scan after scan until a scan finds none of it alive.
 *
 * Three races of a loaded host shape this:
 * - A scan lists `/proc` before it reads each state, so a member may fork between the two and show
 *   stopped, its child missing from the listing. The kill therefore starts only at a scan that finds
 *   every member stopped and no member that the previous scan did not already find stopped: that
 *   scan listed `/proc` after the whole tree had stopped.
 * - A member whose parent dies first is reparented and leaves its ancestors' tree, and a `SIGKILL`
 *   takes effect only when the target next runs, so a killed member can outlive its parent. So
 *   membership is sticky: a process stays in the tree (by pid and start time) from the first scan
 *   that finds it until a scan finds it dead.
 * - Members of a member's group belong to the tree too (the kill signals those groups anyway): a
 *   child forked just before its parent was killed is still in the parent's group.
 */
import { statFields } from "../../coordination/mod.ts";

/** One live (not zombie) process of a `/proc` scan. */
export interface ProcEntry {
  readonly pid: number;
  readonly ppid: number;
  readonly pgid: number;
  readonly state: string;
  /** Start time in clock ticks after boot: with the pid, the identity of one process. */
  readonly start: string;
}

/** What a kill works on: `/proc` and real signals by default, a scripted table in tests. */
export interface ProcessTable {
  /** Live processes, this one left out; `undefined` on a host without `/proc`. */
  scan(): Promise<ProcEntry[] | undefined>;
  /** The environment of `pid`, `NAME=value` entries separated by NUL; empty when unreadable. */
  environ(pid: number): Promise<string>;
  /** The group of this process, which is never signalled. */
  ownGroup(): Promise<number>;
  /** Signals `pid`, or group `-pid`; a process that is gone or not ours is ignored. */
  signal(pid: number, sig: "SIGSTOP" | "SIGKILL"): void;
}

/** The host's process table. */
const PROC_TABLE: ProcessTable = {
  scan: scanProcesses,
  environ: (pid) => Deno.readTextFile(`/proc/${pid}/environ`).catch(() => ""),
  ownGroup: () =>
    Deno.readTextFile("/proc/self/stat").then((t) => Number(statFields(t)[2]), () => NaN),
  signal,
};

/** Rounds that send `SIGSTOP` before the tree is killed even if it never showed frozen. */
const FREEZE_ROUNDS = 20;
/** Scans in all; each round is one `/proc` scan and never waits on a timer. */
const MAX_ROUNDS = 200;

/**
 * Kills group `pgid` and every descendant of its members, whatever group or session they moved to.
 * Answers whether a last scan found none of them alive; `undefined` without `/proc`, after a plain
 * group kill.
 */
export function killTree(pgid: number, table = PROC_TABLE): Promise<boolean | undefined> {
  const seedsOf = (procs: readonly ProcEntry[]) =>
    procs.filter((p) => p.pgid === pgid).map((p) => p.pid);
  return killFrozen(table, seedsOf, [pgid]);
}

/**
 * Kills every process started with `marker` (`NAME=value`) in its environment, their descendants
 * and their groups. A process started by a marked one while a scan ran inherits the marker and is
 * caught by the next scan. Answers like {@link killTree}; without `/proc` it kills nothing.
 */
export function killMarked(marker: string, table = PROC_TABLE): Promise<boolean | undefined> {
  return killFrozen(table, async (procs) => {
    const marked: number[] = [];
    for (const p of procs) {
      if ((await table.environ(p.pid)).split("\0").includes(marker)) marked.push(p.pid);
    }
    return marked;
  }, []);
}

async function killFrozen(
  table: ProcessTable,
  seedsOf: (procs: readonly ProcEntry[]) => number[] | Promise<number[]>,
  fallbackGroups: readonly number[],
): Promise<boolean | undefined> {
  const ownGroup = await table.ownGroup();
  const killable = (pgid: number) => pgid > 1 && pgid !== ownGroup && pgid !== Deno.pid;
  /** Every process any scan put in the tree: pid to start time. */
  const members = new Map<number, string>();
  /** The members the previous scan found, when it found all of them stopped. */
  let stopped = new Set<string>();
  let killing = false;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const procs = await table.scan();
    if (procs === undefined) {
      for (const pgid of fallbackGroups) if (killable(pgid)) table.signal(-pgid, "SIGKILL");
      return undefined;
    }
    const seeds = await seedsOf(procs);
    for (const p of procs) if (members.get(p.pid) === p.start) seeds.push(p.pid);
    const tree = closure(procs, seeds, killable);
    if (tree.length === 0) return true;
    for (const p of tree) members.set(p.pid, p.start);
    const running = tree.filter((p) => p.state !== "T" && p.state !== "t");
    const frozen = running.length === 0 && tree.every((p) => stopped.has(identity(p)));
    stopped = new Set(running.length === 0 ? tree.map(identity) : []);
    killing ||= frozen || round >= FREEZE_ROUNDS;
    if (!killing) {
      for (const p of running) table.signal(p.pid, "SIGSTOP");
      continue;
    }
    for (const p of tree) table.signal(p.pid, "SIGKILL");
    for (const pgid of new Set(tree.map((p) => p.pgid))) {
      if (killable(pgid)) table.signal(-pgid, "SIGKILL");
    }
  }
  return false;
}

function identity(p: ProcEntry): string {
  return `${p.pid}:${p.start}`;
}

/**
 * The seeds and, transitively, every process whose parent is in the set or whose group is the
 * group of a member (when `groupKillable` allows that group).
 */
function closure(
  procs: readonly ProcEntry[],
  seeds: readonly number[],
  groupKillable: (pgid: number) => boolean,
): ProcEntry[] {
  const byPid = new Map(procs.map((p) => [p.pid, p]));
  const inTree = new Set(seeds.filter((pid) => byPid.has(pid)));
  const groups = new Set([...inTree].map((pid) => byPid.get(pid)!.pgid).filter(groupKillable));
  for (let grew = true; grew;) {
    grew = false;
    for (const p of procs) {
      if (!inTree.has(p.pid) && (inTree.has(p.ppid) || groups.has(p.pgid))) {
        inTree.add(p.pid);
        if (groupKillable(p.pgid)) groups.add(p.pgid);
        grew = true;
      }
    }
  }
  return [...inTree].map((pid) => byPid.get(pid)!);
}

/** Live processes from `/proc`; `undefined` on a host without it. */
async function scanProcesses(): Promise<ProcEntry[] | undefined> {
  const procs: ProcEntry[] = [];
  try {
    for await (const entry of Deno.readDir("/proc")) {
      if (!/^\d+$/.test(entry.name)) continue;
      const fields = await Deno.readTextFile(`/proc/${entry.name}/stat`).then(statFields, () => []);
      if (fields.length < 20 || fields[0] === "Z" || fields[0] === "X") continue;
      const pid = Number(entry.name);
      if (pid === Deno.pid) continue;
      const [state, ppid, pgid] = [fields[0]!, Number(fields[1]), Number(fields[2])];
      procs.push({ pid, state, ppid, pgid, start: fields[19]! });
    }
  } catch {
    return undefined;
  }
  return procs;
}

function signal(pid: number, sig: "SIGSTOP" | "SIGKILL"): void {
  try {
    Deno.kill(pid, sig);
  } catch {
    // Gone already, or not ours to signal: the next scan decides.
  }
}
