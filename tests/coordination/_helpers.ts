/** Shared pieces of the coordination tests: temp projects, fake probes, child processes. */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { ProcessIdentity, ProcessProbe } from "../../src/coordination/mod.ts";

/** The coordination surface, for child-process scripts. */
export const COORDINATION_MODULE = new URL("../../src/coordination/mod.ts", import.meta.url).href;
/** The shared surface, for child-process scripts. */
export const SHARED_MODULE = new URL("../../src/_shared/mod.ts", import.meta.url).href;

/** A temporary project directory, removed on dispose. */
export async function tempProject(): Promise<{ root: string } & AsyncDisposable> {
  const root = await Deno.makeTempDir({ prefix: "niceeval-coord-" });
  return {
    root,
    [Symbol.asyncDispose]: () => Deno.remove(root, { recursive: true }),
  };
}

/** An identity on this test's host with an arbitrary pid and start. */
export function identity(overrides: Partial<ProcessIdentity> = {}): ProcessIdentity {
  return { host: "host-a", pid: 4242, processStartedAt: "2026-11-29T09:00:00Z", ...overrides };
}

/** A probe answering from tables; pids missing from `alive` are dead. */
export function fakeProbe(
  alive: Record<number, boolean | undefined> = {},
  starts: Record<number, string> = {},
): ProcessProbe & { calls: number } {
  const probe = {
    calls: 0,
    isAlive: (pid: number) => {
      probe.calls++;
      return Promise.resolve(pid in alive ? alive[pid] : false);
    },
    startTimeOf: (pid: number) => {
      probe.calls++;
      return Promise.resolve(starts[pid] ?? "unknown");
    },
  };
  return probe;
}

/** Every file under `dir` (relative path → content), to prove that nothing changed. */
export async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  async function walk(path: string, rel: string): Promise<void> {
    let entries: Deno.DirEntry[];
    try {
      entries = await Array.fromAsync(Deno.readDir(path));
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return;
      throw error;
    }
    for (const entry of entries) {
      const childRel = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory) await walk(join(path, entry.name), childRel);
      else out[childRel] = await Deno.readTextFile(join(path, entry.name));
    }
  }
  await walk(dir, "");
  return out;
}

/** Sorted names in `dir`, or [] when it does not exist. */
export async function names(dir: string): Promise<string[]> {
  try {
    return (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name).sort();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
}

/** A `deno eval` child that reports on stdout, one line at a time, until its stdin closes. */
export interface Child extends AsyncDisposable {
  readonly process: Deno.ChildProcess;
  readonly pid: number;
  /** The next stdout line (rejects when stdout ends first). */
  nextLine(): Promise<string>;
  /** Writes one line to the child's stdin. */
  send(line: string): Promise<void>;
  /** SIGKILLs the child and waits until it is reaped. */
  kill(): Promise<void>;
}

/** Spawns `deno eval script`; the script ends when its stdin closes or it is killed. */
export function spawnChild(script: string): Child {
  const process = new Deno.Command(Deno.execPath(), {
    args: ["eval", script],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = process.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const writer = process.stdin.getWriter();
  let buffer = "";
  let killed = false;
  const kill = async () => {
    if (!killed) {
      killed = true;
      try {
        process.kill("SIGKILL");
      } catch {
        // It already exited.
      }
    }
    await process.status;
  };
  return {
    process,
    pid: process.pid,
    nextLine: async () => {
      for (;;) {
        const end = buffer.indexOf("\n");
        if (end >= 0) {
          const line = buffer.slice(0, end);
          buffer = buffer.slice(end + 1);
          return line;
        }
        const { value, done } = await withinHangBound(
          reader.read(),
          `child ${process.pid} prints its next line (pending: ${JSON.stringify(buffer)})`,
        );
        if (done) throw new Error(`child ${process.pid} closed stdout; pending: ${buffer}`);
        buffer += value;
      }
    },
    send: (line) => writer.write(new TextEncoder().encode(line + "\n")),
    kill,
    [Symbol.asyncDispose]: async () => {
      await writer.close().catch(() => undefined);
      await kill();
      await reader.cancel().catch(() => undefined);
    },
  };
}

/** Waits for the next line and checks that it is `expected`. */
export async function expectLine(child: Child, expected: string | RegExp): Promise<string> {
  const line = await child.nextLine();
  if (typeof expected === "string") assert.equal(line, expected);
  else assert.match(line, expected);
  return line;
}

/**
 * How long a wait on a lock, a lease or a child may take before the test fails: 2 minutes of real
 * time, a bound that only turns a hang (a missing release) into a failure on a loaded machine and
 * is never what a test asserts.
 */
export const HANG_MS = 120_000;

/**
 * Settles like `promise`, or rejects with an error naming `what` never happened once `ms` of real
 * time passed. The timer is unref'd: a wait on nothing at all still fails at once with Deno's own
 * "event loop" error; the bound catches the waits that real I/O or polling keeps alive.
 */
export async function withinHangBound<T>(
  promise: Promise<T>,
  what: string,
  ms = HANG_MS,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<never>((_, reject) => {
    const id = setTimeout(
      () => reject(new Error(`Timed out after ${ms / 1000} s waiting until ${what}`)),
      ms,
    );
    Deno.unrefTimer(id);
    timer = id;
  });
  try {
    return await Promise.race([promise, hang]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Polls `condition` in real time (2 ms steps) until it holds; fails after {@link HANG_MS}, a bound
 * that only turns a hang into a failure on a loaded machine.
 */
export async function eventually(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + HANG_MS;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** A promise whose settlement can be read synchronously. */
export interface Watched<T> {
  readonly promise: Promise<T>;
  readonly settled: boolean;
  readonly value: T | undefined;
  readonly error: unknown;
}

/** Starts watching `promise` (its rejection is handled here and readable as `error`). */
export function watch<T>(promise: Promise<T>): Watched<T> {
  const state = { settled: false, value: undefined as T | undefined, error: undefined as unknown };
  const tracked = promise.then(
    (value) => {
      Object.assign(state, { settled: true, value });
      return value;
    },
    (error: unknown) => {
      Object.assign(state, { settled: true, error });
      throw error;
    },
  );
  tracked.catch(() => undefined);
  return {
    promise: tracked,
    get settled() {
      return state.settled;
    },
    get value() {
      return state.value;
    },
    get error() {
      return state.error;
    },
  };
}
