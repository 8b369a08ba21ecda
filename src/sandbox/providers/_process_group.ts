/**
 * Host subprocesses in their own process group (sandboxes.md rules 11, 14–16, 101): spawn detached,
 * keep the last 16 MiB of each stream, and on timeout or abort kill the group with every descendant,
 * even one in a new session (docs/local_sandbox.md), and confirm that no live member is left.
 */
import { type Clock, onAbort, sleep } from "../../_shared/mod.ts";
import { statFields } from "../../coordination/mod.ts";
import type { ExecResult, OutputChunk } from "../types.ts";
import { TailBuffer } from "./_tail.ts";
import { killTree } from "./_process_tree.ts";

/** How long a timed-out group may take to die before the sandbox is retired. */
const TREE_KILL_CONFIRM_MS = 2_000;
/** After the command exits, output that stops arriving for this long is no longer awaited. */
const OUTPUT_IDLE_MS = 100;
const KILL_POLL_MS = 20;

/** What {@link runProcessGroup} runs. */
interface GroupCommand {
  readonly program: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  readonly stdin?: Uint8Array;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  /** Serialized by the caller (rule 16). */
  readonly onOutput?: (chunk: OutputChunk) => Promise<void>;
  readonly clock: Clock;
  /** Awaited right after spawn with the group id (the leader's pid). */
  readonly onSpawn: (pgid: number) => Promise<void>;
}

/** How a group run ended. */
type GroupOutcome =
  | { readonly ended: "exit"; readonly result: ExecResult }
  | { readonly ended: "timeout" | "abort"; readonly confirmed: boolean; readonly pgid: number };

/** Spawns the command as a group leader and waits for it (and for its output). */
export async function runProcessGroup(c: GroupCommand): Promise<GroupOutcome> {
  const started = c.clock.now();
  const child = spawn(c);
  if (child === undefined) return { ended: "exit", result: notRunnable(c, started) };
  const pgid = child.pid;
  let ended: "timeout" | "abort" | undefined;
  let killing: Promise<boolean | undefined> | undefined;
  let exited = false;
  const status = child.status.finally(() => void (exited = true));
  const kill = (why: "timeout" | "abort") => {
    ended ??= why;
    killing ??= killTree(pgid);
  };
  const timer = c.timeoutMs === undefined
    ? undefined
    : c.clock.setTimeout(() => kill("timeout"), c.timeoutMs);
  const out = { stdout: new TailBuffer(), stderr: new TailBuffer(), activity: 0, busy: 0 };
  const readers = [child.stdout.getReader(), child.stderr.getReader()];
  const pumps = Promise.all([
    pump(readers[0]!, "stdout", out.stdout, c, out),
    pump(readers[1]!, "stderr", out.stderr, c, out),
    feed(child, c.stdin),
  ]);
  let abortListener: Disposable | undefined;
  try {
    await c.onSpawn(pgid);
    // An abort kills the whole group; the wait below then sees the exit.
    abortListener = onAbort(c.signal, () => kill("abort"));
    if (c.signal?.aborted) kill("abort");
    const { code } = await status;
    if (ended !== undefined) {
      const tree = await killing;
      return { ended, confirmed: tree !== false && await confirmGroupDead(pgid, c.clock), pgid };
    }
    await drain(pumps, c.clock, out);
    const truncated = {
      ...(out.stdout.truncated ? { stdout: true as const } : {}),
      ...(out.stderr.truncated ? { stderr: true as const } : {}),
    };
    const result: ExecResult = {
      exitCode: code,
      stdout: out.stdout.bytes(),
      stderr: out.stderr.bytes(),
      durationMs: c.clock.now() - started,
      ...(Object.keys(truncated).length > 0 ? { truncated } : {}),
    };
    return { ended: "exit", result };
  } finally {
    c.clock.clearTimeout(timer);
    abortListener?.[Symbol.dispose]();
    if (!exited) {
      killGroup(pgid);
      await status;
    }
    for (const reader of readers) await reader.cancel().catch(() => undefined); // already closed
    await pumps;
  }
}

/** Sends `SIGKILL` to every process of group `pgid`; a missing group is fine. */
export function killGroup(pgid: number): void {
  try {
    Deno.kill(-pgid, "SIGKILL");
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}

/**
 * Kills group `pgid` until no live member is left, for at most 2 s. A member that is a zombie
 * counts as dead. Without `/proc` a successful `kill` counts as alive.
 */
async function confirmGroupDead(pgid: number, clock: Clock): Promise<boolean> {
  const deadline = clock.now() + TREE_KILL_CONFIRM_MS;
  for (;;) {
    if (!(await groupAlive(pgid))) return true;
    if (clock.now() >= deadline) return false;
    await sleep(clock, KILL_POLL_MS);
  }
}

async function groupAlive(pgid: number): Promise<boolean> {
  try {
    Deno.kill(-pgid, "SIGKILL");
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    return true; // EPERM: a member exists that we may not signal
  }
  const members = await liveGroupMembers();
  return members === undefined || (members.get(pgid)?.length ?? 0) > 0;
}

function spawn(c: GroupCommand): Deno.ChildProcess | undefined {
  try {
    return new Deno.Command(c.program, {
      args: [...c.args],
      cwd: c.cwd,
      env: { ...c.env },
      clearEnv: true,
      stdin: c.stdin === undefined ? "null" : "piped",
      stdout: "piped",
      stderr: "piped",
      detached: true,
    }).spawn();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.PermissionDenied) {
      return undefined;
    }
    throw error;
  }
}

/** The result of a program that could not start: 127 (not found) like a shell reports it. */
function notRunnable(c: GroupCommand, started: number): ExecResult {
  const stderr = new TextEncoder().encode(`${c.program}: command not found or not executable\n`);
  return { exitCode: 127, stdout: new Uint8Array(), stderr, durationMs: c.clock.now() - started };
}

async function pump(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  name: "stdout" | "stderr",
  buffer: TailBuffer,
  c: GroupCommand,
  state: { activity: number; busy: number },
): Promise<void> {
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer.push(value);
      state.activity++;
      state.busy++;
      try {
        await c.onOutput?.({ stream: name, data: value });
      } finally {
        state.busy--;
      }
    }
  } catch (error) {
    // A cancelled stream ends the pump; any other read error is a transport failure.
    if (
      !(error instanceof Deno.errors.BadResource) && !(error instanceof Deno.errors.Interrupted)
    ) {
      throw error;
    }
  }
}

async function feed(child: Deno.ChildProcess, stdin: Uint8Array | undefined): Promise<void> {
  if (stdin === undefined) return;
  const writer = child.stdin.getWriter();
  try {
    await writer.write(stdin);
    await writer.close();
  } catch (error) {
    // The program exited without reading all of its input: not an error of the command.
    if (!(error instanceof Deno.errors.BrokenPipe) && !(error instanceof Deno.errors.BadResource)) {
      throw error;
    }
  }
}

/** Waits for the streams to end, or until no output arrived for 100 ms (a background holder). */
async function drain(
  pumps: Promise<unknown>,
  clock: Clock,
  state: { activity: number; busy: number },
): Promise<void> {
  let done = false;
  const finished = pumps.then(() => void (done = true), () => void (done = true));
  for (;;) {
    const seen = state.activity;
    let timer: unknown;
    const idle = new Promise<void>((
      resolve,
    ) => (timer = clock.setTimeout(resolve, OUTPUT_IDLE_MS)));
    await Promise.race([finished, idle]);
    clock.clearTimeout(timer);
    if (done || (state.activity === seen && state.busy === 0)) return;
  }
}

/**
 * Live (non-zombie) members of every process group, from `/proc`; `undefined` without `/proc`.
 */
export async function liveGroupMembers(): Promise<Map<number, number[]> | undefined> {
  const groups = new Map<number, number[]>();
  try {
    for await (const entry of Deno.readDir("/proc")) {
      if (!/^\d+$/.test(entry.name)) continue;
      const fields = await Deno.readTextFile(`/proc/${entry.name}/stat`).then(statFields, () => []);
      if (fields.length < 3 || fields[0] === "Z" || fields[0] === "X") continue;
      const pgid = Number(fields[2]);
      groups.set(pgid, [...(groups.get(pgid) ?? []), Number(entry.name)]);
    }
  } catch {
    return undefined; // no /proc on this host
  }
  return groups;
}
