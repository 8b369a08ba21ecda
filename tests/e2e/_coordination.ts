/**
 * Real-process helpers for the coordination scenarios (J, K, L, R, V): a temporary copy of
 * `tests/fixtures/coord_project` whose hooks and Evals append marks to `$COORD_DIR/log` and block
 * on barrier files there, children whose output is drained while they run, and polling for events
 * (no fixed sleeps; deadlines only turn a hang into a failure).
 */
import { join } from "node:path";
import { tryAcquireLock } from "../../src/coordination/mod.ts";
import { ndjson, type TempProject, tempProject } from "../_helpers/cli.ts";

/** One line of the fixture's log: `<tag> <pid> <event> <json>`. */
export interface Mark {
  readonly tag: string;
  readonly pid: number;
  readonly event: string;
  readonly detail: Record<string, unknown> | null;
}

/** A copy of the coordination fixture with its barrier directory. */
export interface CoordProject extends TempProject {
  /** `$COORD_DIR`: the log and the barrier files. */
  readonly coordDir: string;
  /** `$TMPDIR` of every child: where local sandboxes live while they exist. */
  readonly sandboxDir: string;
  /** Starts `niceeval <args>` as process `tag`. */
  start(args: readonly string[], tag: string, env?: Record<string, string>): Running;
  /** Runs `niceeval <args>` as process `tag` to its end. */
  exec(args: readonly string[], tag: string, env?: Record<string, string>): Promise<Finished>;
  /** Creates a barrier or failure file (`hold-setup`, `hold-attempt-A`, `fail-teardown` …). */
  set(name: string): Promise<void>;
  /** Removes it. */
  clear(name: string): Promise<void>;
  /** Every mark so far, in log order. */
  marks(): Promise<Mark[]>;
  /** Polls the log until a mark matches; returns it. */
  waitForMark(match: (mark: Mark) => boolean, what: string, timeoutMs?: number): Promise<Mark>;
}

/** A finished child. */
export interface Finished {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** A child whose stdout and stderr are drained while it runs. */
export interface Running extends AsyncDisposable {
  readonly child: Deno.ChildProcess;
  readonly pid: number;
  /** True once the child exited. */
  readonly exited: boolean;
  /** Stdout so far. */
  stdout(): string;
  /** Parsed NDJSON lines so far (complete lines only). */
  events(): Record<string, unknown>[];
  /** Polls stdout until an NDJSON event matches; returns it. */
  waitForEvent(
    match: (event: Record<string, unknown>) => boolean,
    what: string,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  /** Waits for the exit and the end of both streams. */
  finished(): Promise<Finished>;
}

/** Copies the fixture and creates its barrier directory. */
export async function coordProject(): Promise<CoordProject> {
  const project = await tempProject("coord_project");
  const coordDir = await Deno.makeTempDir({ prefix: "niceeval-coord-barriers-" });
  const sandboxDir = await Deno.makeTempDir({ prefix: "niceeval-coord-sandboxes-" });
  const envOf = (tag: string, env: Record<string, string> = {}) => ({
    COORD_DIR: coordDir,
    COORD_TAG: tag,
    TMPDIR: sandboxDir,
    ...env,
  });
  const marks = async () => parseMarks(await readOrEmpty(join(coordDir, "log")));
  return {
    ...project,
    coordDir,
    sandboxDir,
    start: (args, tag, env) => running(project.spawn(args, { env: envOf(tag, env) })),
    exec: (args, tag, env) => running(project.spawn(args, { env: envOf(tag, env) })).finished(),
    set: (name) => Deno.writeTextFile(join(coordDir, name), ""),
    clear: (name) => Deno.remove(join(coordDir, name)),
    marks,
    waitForMark: async (match, what, timeoutMs = HANG_MS) => {
      let found: Mark | undefined;
      await pollUntil(async () => (found = (await marks()).find(match)) !== undefined, what, {
        timeoutMs,
      });
      return found!;
    },
    [Symbol.asyncDispose]: async () => {
      await project[Symbol.asyncDispose]();
      await Deno.remove(coordDir, { recursive: true }).catch(() => undefined);
      await Deno.remove(sandboxDir, { recursive: true }).catch(() => undefined);
    },
  };
}

/**
 * How long a wait for an event may take before the test fails: a safety bound that turns a hang
 * into a failure on a loaded machine, never something a test asserts.
 */
export const HANG_MS = 120_000;

/** Polls `condition` every `stepMs` until it holds; throws after `timeoutMs`. */
export async function pollUntil(
  condition: () => boolean | Promise<boolean>,
  what: string,
  options: { timeoutMs?: number; stepMs?: number } = {},
): Promise<void> {
  const { timeoutMs = HANG_MS, stepMs = 25 } = options;
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, stepMs));
  }
}

function running(child: Deno.ChildProcess): Running {
  let stdout = "";
  let stderr = "";
  let exited = false;
  const drain = async (stream: ReadableStream<Uint8Array>, add: (text: string) => void) => {
    for await (const text of stream.pipeThrough(new TextDecoderStream())) add(text);
  };
  const out = drain(child.stdout, (text) => stdout += text);
  const err = drain(child.stderr, (text) => stderr += text);
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });
  const finished = async () => {
    const s = await status;
    await Promise.all([out, err]);
    return { code: s.code, stdout, stderr };
  };
  const events = () => ndjson(stdout.slice(0, stdout.lastIndexOf("\n") + 1));
  return {
    child,
    pid: child.pid,
    get exited() {
      return exited;
    },
    stdout: () => stdout,
    events,
    waitForEvent: async (match, what, timeoutMs = HANG_MS) => {
      let found: Record<string, unknown> | undefined;
      await pollUntil(() => (found = events().find(match)) !== undefined || exited, what, {
        timeoutMs,
      });
      if (!found) throw new Error(`exited before ${what}:\n${stdout}\n${stderr}`);
      return found;
    },
    finished,
    [Symbol.asyncDispose]: async () => {
      if (!exited) {
        try {
          child.kill("SIGKILL");
        } catch {
          // It exited meanwhile.
        }
      }
      await finished();
    },
  };
}

function parseMarks(text: string): Mark[] {
  return text.split("\n").filter((line) => line.trim() !== "").map((line) => {
    const [tag, pid, event, ...json] = line.split(" ");
    return { tag: tag!, pid: Number(pid), event: event!, detail: JSON.parse(json.join(" ")) };
  });
}

async function readOrEmpty(path: string): Promise<string> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return "";
    throw error;
  }
}

/** Every file and directory under `dir`, relative, sorted (empty when it does not exist). */
export async function tree(dir: string): Promise<string[]> {
  const out: string[] = [];
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
      out.push(entry.isDirectory ? `${childRel}/` : childRel);
      if (entry.isDirectory) await walk(join(path, entry.name), childRel);
    }
  }
  await walk(dir, "");
  return out.sort();
}

/** Marks of one event, optionally of one tag. */
export function marksOf(marks: readonly Mark[], event: string, tag?: string): Mark[] {
  return marks.filter((m) => m.event === event && (tag === undefined || m.tag === tag));
}

/** True when this process can take the flock on the existing file `path` (then drops it). */
export async function flockFree(path: string): Promise<boolean> {
  const lock = await tryAcquireLock(path, { create: false });
  lock?.release();
  return lock !== null;
}

/** True when process `pid` exists and is not a zombie (Linux `/proc`). */
export function alive(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

/**
 * {@link tree} once the writers under `dir` are quiet: no temporary file and the same listing
 * twice in a row (a blocked process may still be finishing an atomic write it began before).
 */
export async function quietTree(dir: string): Promise<string[]> {
  let last: string[] = [];
  await pollUntil(
    async () => {
      const now = await tree(dir);
      const quiet = JSON.stringify(now) === JSON.stringify(last) &&
        !now.some((p) => p.includes(".tmp"));
      last = now;
      return quiet;
    },
    `${dir} is quiet`,
    { stepMs: 100 },
  );
  return last;
}
