/**
 * Owner stamps and their classification (sandboxes.md §7.1–§7.2). The process start is read once at
 * startup (rule 92): on Linux from `/proc/<pid>/stat` field 22 plus `btime` of `/proc/stat`,
 * elsewhere from `ps -o lstart=`, else `unknown`. Liveness and start-time readers are injectable.
 */
import type { OwnerStamp } from "./types.ts";

/** Start times further apart than this mean the pid was reused. */
export const OWNER_START_TOLERANCE_MS = 2_000;
/** Kernel clock ticks per second of `/proc/<pid>/stat` (USER_HZ, 100 on every Linux ABI). */
const CLOCK_TICKS_PER_SECOND = 100;

/** The part of the owner stamp that is fixed for the whole process. */
export interface OwnerIdentity {
  readonly host: string;
  readonly pid: number;
  /** ISO-8601, whole seconds, or `unknown`. */
  readonly processStart: string;
}

/** What the classification knows about a process. */
export interface ProcessProbe {
  /** `gone` when no such process exists; permission errors count as `running`. */
  state(pid: number): Promise<"running" | "zombie" | "gone">;
  /** ISO-8601 whole seconds, or `unknown`. */
  startOf(pid: number): Promise<string>;
}

/** `alive` instances are never pruned; `orphan` ones are; `unverified` only with `--force`. */
export type OwnerStatus = "alive" | "orphan" | "unverified";

/** Formats epoch ms as ISO-8601 UTC with whole seconds: `2026-11-29T10:00:00Z`. */
export function isoSeconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
}

/** Reads this process's identity once (rule 92); `host` and `pid` come from the caller. */
export async function readOwnerIdentity(
  o: { host: string; pid: number; probe?: ProcessProbe },
): Promise<OwnerIdentity> {
  const probe = o.probe ?? createProcessProbe();
  return { host: o.host, pid: o.pid, processStart: await probe.startOf(o.pid) };
}

/** Classifies an owner stamp by the §7.2 table, checked in order. */
export async function classifyOwner(
  stamp: Partial<OwnerStamp>,
  o: { host: string; probe: ProcessProbe },
): Promise<OwnerStatus> {
  const { host, pid, processStart } = stamp;
  const complete = typeof host === "string" && typeof pid === "number" &&
    Number.isSafeInteger(pid) && pid > 0 && typeof processStart === "string" &&
    typeof stamp.runId === "string" && typeof stamp.provisionToken === "string";
  if (!complete || host !== o.host) return "unverified";
  const state = await o.probe.state(pid);
  if (state !== "running") return "orphan";
  const recorded = Date.parse(processStart);
  if (processStart === "unknown" || Number.isNaN(recorded)) return "unverified";
  const now = await o.probe.startOf(pid);
  const current = Date.parse(now);
  if (now === "unknown" || Number.isNaN(current)) return "unverified";
  return Math.abs(current - recorded) > OWNER_START_TOLERANCE_MS ? "orphan" : "alive";
}

/** Reads text files; injectable so tests can fake `/proc`. */
export type TextReader = (path: string) => Promise<string>;

/** The real probe: `/proc` on Linux, `ps` elsewhere. */
export function createProcessProbe(read: TextReader = (p) => Deno.readTextFile(p)): ProcessProbe {
  return {
    state: async (pid) => {
      try {
        const fields = statFields(await read(`/proc/${pid}/stat`));
        return fields[0] === "Z" || fields[0] === "X" ? "zombie" : "running";
      } catch (error) {
        if (error instanceof Deno.errors.PermissionDenied) return "running";
        if (await hasProc(read)) return "gone";
        const out = await ps(["-o", "stat=", "-p", String(pid)]);
        if (out === undefined) return "gone";
        return out.startsWith("Z") ? "zombie" : "running";
      }
    },
    startOf: async (pid) => {
      try {
        const ticks = Number(statFields(await read(`/proc/${pid}/stat`))[19]);
        const btime = Number(/^btime\s+(\d+)$/m.exec(await read("/proc/stat"))?.[1]);
        if (!Number.isFinite(ticks) || !Number.isFinite(btime)) return "unknown";
        return isoSeconds((btime + ticks / CLOCK_TICKS_PER_SECOND) * 1000);
      } catch {
        if (await hasProc(read)) return "unknown";
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

async function hasProc(read: TextReader): Promise<boolean> {
  try {
    await read("/proc/self/stat");
    return true;
  } catch {
    return false;
  }
}

async function ps(args: string[]): Promise<string | undefined> {
  try {
    const out = await new Deno.Command("ps", { args, stdout: "piped", stderr: "null" }).output();
    const text = new TextDecoder().decode(out.stdout).trim();
    return out.success && text !== "" ? text : undefined;
  } catch {
    return undefined; // no `ps` on this host: the start time is unknown
  }
}
