/**
 * Process identity and liveness for coordination records (ORPH-2, LEASE-10). The start time is
 * read the way `sandboxes.md` rule 92 says: on Linux from `/proc/<pid>/stat` field 22 plus `btime`
 * of `/proc/stat`, elsewhere from `ps -o lstart=`, else `unknown`. Every probe is injectable.
 */

/** Start times further apart than this mean the pid was reused. */
const PROCESS_START_TOLERANCE_MS = 2_000;
/** Kernel clock ticks per second of `/proc/<pid>/stat` (USER_HZ, 100 on every Linux ABI). */
const CLOCK_TICKS_PER_SECOND = 100;

/** Who wrote a coordination record: fixed for the whole process, read once at startup. */
export interface ProcessIdentity {
  readonly host: string;
  readonly pid: number;
  /** ISO-8601 UTC with whole seconds, or `unknown`. */
  readonly processStartedAt: string;
}

/** What coordination asks about another process. */
export interface ProcessProbe {
  /** False when no such process exists or it is a zombie; undefined when it cannot be told. */
  isAlive(pid: number): Promise<boolean | undefined>;
  /** ISO-8601 UTC whole seconds, or `unknown`. */
  startTimeOf(pid: number): Promise<string>;
}

/** The system seams of {@link createProcessProbe}. */
interface ProcessProbeSeams {
  /** Reads a text file (tests fake `/proc`). */
  readTextFile?: (path: string) => Promise<string>;
  /** Signals a process; signal 0 only checks existence. */
  kill?: (pid: number, signal: 0) => void;
  /** Runs `ps` with `args`; its trimmed stdout, or undefined when it fails or prints nothing. */
  ps?: (args: string[]) => Promise<string | undefined>;
}

/** Formats epoch ms as ISO-8601 UTC with whole seconds: `2026-11-29T10:00:00Z`. */
export function isoSeconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
}

/**
 * Compares a recorded start time with a current one: true when within
 * {@link PROCESS_START_TOLERANCE_MS}, undefined when either is `unknown` or unparsable.
 */
export function sameProcessStart(recorded: string, current: string): boolean | undefined {
  const a = Date.parse(recorded);
  const b = Date.parse(current);
  if (Number.isNaN(a) || Number.isNaN(b)) return undefined;
  return Math.abs(a - b) <= PROCESS_START_TOLERANCE_MS;
}

/** Reads this process's identity; call once at startup and pass the value around. */
export async function readProcessIdentity(
  options: { host?: string; pid?: number; probe?: ProcessProbe } = {},
): Promise<ProcessIdentity> {
  const pid = options.pid ?? Deno.pid;
  const probe = options.probe ?? createProcessProbe();
  return {
    host: options.host ?? Deno.hostname(),
    pid,
    processStartedAt: await probe.startTimeOf(pid),
  };
}

/**
 * The real probe: `/proc` on Linux, `kill(pid, 0)` and `ps` elsewhere. It serves coordination
 * records and sandbox owner stamps alike.
 */
export function createProcessProbe(seams: ProcessProbeSeams = {}): ProcessProbe {
  const read = seams.readTextFile ?? ((path: string) => Deno.readTextFile(path));
  const kill = seams.kill ?? ((pid: number, signal: 0) => Deno.kill(pid, signal));
  const ps = seams.ps ?? runPs;
  return {
    isAlive: async (pid) => {
      if (!Number.isSafeInteger(pid) || pid <= 0) return undefined;
      const viaProc = await procState(read, pid);
      if (viaProc !== "no-proc") return viaProc;
      const exists = killProbe(kill, pid);
      if (exists !== true) return exists;
      // Signal 0 reaches a zombie too; `ps` tells its state where it can.
      const stat = await ps(["-o", "stat=", "-p", String(pid)]);
      return stat?.startsWith("Z") !== true;
    },
    startTimeOf: async (pid) => {
      if (!Number.isSafeInteger(pid) || pid <= 0) return "unknown";
      try {
        const ticks = Number(statFields(await read(`/proc/${pid}/stat`))[19]);
        const btime = Number(/^btime\s+(\d+)$/m.exec(await read("/proc/stat"))?.[1]);
        if (!Number.isFinite(ticks) || !Number.isFinite(btime)) return "unknown";
        return isoSeconds((btime + ticks / CLOCK_TICKS_PER_SECOND) * 1000);
      } catch {
        if (await hasProc(read)) return "unknown"; // /proc exists but this pid is gone or hidden
        const out = await ps(["-o", "lstart=", "-p", String(pid)]);
        const ms = out === undefined ? NaN : Date.parse(out);
        return Number.isNaN(ms) ? "unknown" : isoSeconds(ms);
      }
    },
  };
}

/** Fields of `/proc/<pid>/stat` from field 3 (state) on; the command name may hold spaces. */
export function statFields(text: string): string[] {
  return text.slice(text.lastIndexOf(")") + 2).trim().split(/\s+/);
}

async function procState(
  read: (path: string) => Promise<string>,
  pid: number,
): Promise<boolean | undefined | "no-proc"> {
  try {
    const state = statFields(await read(`/proc/${pid}/stat`))[0];
    if (state === undefined) return undefined;
    return state !== "Z" && state !== "X";
  } catch (error) {
    if (error instanceof Deno.errors.PermissionDenied) return true;
    return await hasProc(read) ? false : "no-proc";
  }
}

function killProbe(kill: (pid: number, signal: 0) => void, pid: number): boolean | undefined {
  try {
    kill(pid, 0);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false; // ESRCH
    if (error instanceof Deno.errors.PermissionDenied) return true; // EPERM: it exists
    return undefined; // signal 0 unsupported here: cannot tell (fail closed)
  }
}

async function hasProc(read: (path: string) => Promise<string>): Promise<boolean> {
  try {
    await read("/proc/self/stat");
    return true;
  } catch {
    return false; // no procfs on this platform
  }
}

async function runPs(args: string[]): Promise<string | undefined> {
  try {
    const out = await new Deno.Command("ps", { args, stdout: "piped", stderr: "null" }).output();
    const text = new TextDecoder().decode(out.stdout).trim();
    return out.success && text !== "" ? text : undefined;
  } catch {
    return undefined; // no `ps` on this host: the start time is unknown
  }
}
