/**
 * Kills whole process trees of host subprocesses from `/proc` (sandboxes.md rule 101, extended in
 * docs/local_sandbox.md): a tool that a coding-agent CLI starts in a new session has left the
 * command's process group, so a group kill alone misses it. A tree is frozen first (`SIGSTOP`, scan
 * after scan until every member is stopped: a stopped process cannot start another and keeps its
 * children attached), then killed scan after scan until a scan finds none of it alive.
 */
import { statFields } from "../../coordination/mod.ts";

/** One live (not zombie) process of a `/proc` scan. */
interface ProcEntry {
  readonly pid: number;
  readonly ppid: number;
  readonly pgid: number;
  readonly state: string;
}

/** Rounds that send `SIGSTOP` before the tree is killed even if a member never showed stopped. */
const FREEZE_ROUNDS = 20;
/** Scans in all; each round is one `/proc` scan and never waits on a timer. */
const MAX_ROUNDS = 200;

/**
 * Kills group `pgid` and every descendant of its members, whatever group or session they moved to.
 * Answers whether a last scan found none of them alive; `undefined` without `/proc`, after a plain
 * group kill.
 */
export function killTree(pgid: number): Promise<boolean | undefined> {
  return killFrozen((procs) => procs.filter((p) => p.pgid === pgid).map((p) => p.pid), [pgid]);
}

/**
 * Kills every process started with `marker` (`NAME=value`) in its environment, their descendants
 * and their groups. A process started by a marked one while a scan ran inherits the marker and is
 * caught by the next scan. Answers like {@link killTree}; without `/proc` it kills nothing.
 */
export function killMarked(marker: string): Promise<boolean | undefined> {
  return killFrozen(async (procs) => {
    const marked: number[] = [];
    for (const p of procs) {
      const environ = await Deno.readTextFile(`/proc/${p.pid}/environ`).catch(() => "");
      if (environ.split("\0").includes(marker)) marked.push(p.pid);
    }
    return marked;
  }, []);
}

async function killFrozen(
  seedsOf: (procs: readonly ProcEntry[]) => number[] | Promise<number[]>,
  fallbackGroups: readonly number[],
): Promise<boolean | undefined> {
  const own = await Deno.readTextFile("/proc/self/stat").then(statFields, () => []);
  const ownGroup = Number(own[2]);
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const procs = await scanProcesses();
    if (procs === undefined) {
      for (const pgid of fallbackGroups) signalGroup(pgid, "SIGKILL");
      return undefined;
    }
    const tree = withDescendants(procs, await seedsOf(procs));
    if (tree.length === 0) return true;
    const running = tree.filter((p) => p.state !== "T" && p.state !== "t");
    if (round < FREEZE_ROUNDS && running.length > 0) {
      for (const p of running) signal(p.pid, "SIGSTOP");
      continue;
    }
    for (const p of tree) signal(p.pid, "SIGKILL");
    for (const pgid of new Set(tree.map((p) => p.pgid))) {
      if (pgid !== ownGroup) signalGroup(pgid, "SIGKILL");
    }
  }
  return false;
}

/** The seeds and, transitively, every process whose parent is in the set. */
function withDescendants(procs: readonly ProcEntry[], seeds: readonly number[]): ProcEntry[] {
  const byPid = new Map(procs.map((p) => [p.pid, p]));
  const inTree = new Set(seeds.filter((pid) => byPid.has(pid)));
  for (let grew = true; grew;) {
    grew = false;
    for (const p of procs) {
      if (!inTree.has(p.pid) && inTree.has(p.ppid)) {
        inTree.add(p.pid);
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
      if (fields.length < 3 || fields[0] === "Z" || fields[0] === "X") continue;
      const pid = Number(entry.name);
      if (pid === Deno.pid) continue;
      procs.push({ pid, state: fields[0]!, ppid: Number(fields[1]), pgid: Number(fields[2]) });
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

function signalGroup(pgid: number, sig: "SIGKILL"): void {
  if (pgid > 1 && pgid !== Deno.pid) signal(-pgid, sig);
}
