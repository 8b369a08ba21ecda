/**
 * Spawns the real CLI on a fixture project (toolchain.md §5.7): the project is copied into a
 * temporary directory and the child gets an explicit environment, inheriting nothing else.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cp } from "node:fs/promises";

/** The repository root. */
export const REPO = fileURLToPath(new URL("../../", import.meta.url));
/** The CLI entry. */
export const MOD = join(REPO, "mod.ts");

/** A temporary copy of a fixture project plus its private state directory. */
export interface TempProject extends AsyncDisposable {
  readonly dir: string;
  readonly stateDir: string;
  /** Runs `niceeval <args>` in the project. */
  run(args: readonly string[], options?: RunOptions): Promise<CliResult>;
  /** Starts `niceeval <args>` without waiting (for signals and concurrency tests). */
  spawn(args: readonly string[], options?: RunOptions): Deno.ChildProcess;
  /** Reads a project file as text. */
  read(path: string): Promise<string>;
  /** Writes a project file. */
  write(path: string, text: string): Promise<void>;
}

/** Options of one CLI run. */
export interface RunOptions {
  readonly env?: Record<string, string>;
  readonly stdin?: string;
  readonly cwd?: string;
}

/** What a finished CLI run produced. */
export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Copies `tests/fixtures/<name>` (or an absolute directory) into a temporary project. */
export async function tempProject(name: string | null): Promise<TempProject> {
  const dir = await Deno.makeTempDir({ prefix: "niceeval-project-" });
  const stateDir = await Deno.makeTempDir({ prefix: "niceeval-state-" });
  if (name !== null) {
    const source = name.startsWith("/") ? name : join(REPO, "tests", "fixtures", name);
    await cp(source, dir, { recursive: true });
  }
  const envOf = (extra: Record<string, string> = {}) => childEnv(stateDir, extra);
  const command = (args: readonly string[], options: RunOptions = {}) =>
    new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--frozen", MOD, ...args],
      cwd: options.cwd ? join(dir, options.cwd) : dir,
      env: envOf(options.env),
      clearEnv: true,
      stdin: options.stdin === undefined ? "null" : "piped",
      stdout: "piped",
      stderr: "piped",
    });
  return {
    dir,
    stateDir,
    run: async (args, options = {}) => {
      const child = command(args, options).spawn();
      if (options.stdin !== undefined) {
        const writer = child.stdin.getWriter();
        await writer.write(new TextEncoder().encode(options.stdin));
        await writer.close();
      }
      const out = await child.output();
      const decoder = new TextDecoder();
      return {
        code: out.code,
        stdout: decoder.decode(out.stdout),
        stderr: decoder.decode(out.stderr),
      };
    },
    spawn: (args, options = {}) => command(args, options).spawn(),
    read: (path) => Deno.readTextFile(join(dir, path)),
    write: async (path, text) => {
      await Deno.mkdir(join(dir, path, ".."), { recursive: true });
      await Deno.writeTextFile(join(dir, path), text);
    },
    [Symbol.asyncDispose]: async () => {
      await Deno.remove(dir, { recursive: true }).catch(() => undefined);
      await Deno.remove(stateDir, { recursive: true }).catch(() => undefined);
    },
  };
}

let cacheHome: string | undefined;

/**
 * One cache directory (`XDG_CACHE_HOME`) for the CLI children of this test module, so that the
 * embedded loader's transform cache never writes below the real home; removed when the module
 * unloads.
 */
function testCacheHome(): string {
  if (cacheHome !== undefined) return cacheHome;
  const dir = Deno.makeTempDirSync({ prefix: "niceeval-cache-" });
  globalThis.addEventListener("unload", () => {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch {
      // Already gone.
    }
  });
  cacheHome = dir;
  return dir;
}

/**
 * The explicit environment of a CLI child. `NICEEVAL_LOADER` passes through, so that the suite
 * can run every CLI child under the embedded loader (deno.json "test" task).
 */
export function childEnv(
  stateDir: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  const home = Deno.env.get("HOME") ?? "/tmp";
  const loader = Deno.env.get("NICEEVAL_LOADER");
  return {
    ...(loader === undefined ? {} : { NICEEVAL_LOADER: loader }),
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: home,
    DENO_DIR: Deno.env.get("DENO_DIR") ?? join(home, ".cache", "deno"),
    DENO_NO_UPDATE_CHECK: "1",
    NO_COLOR: "1",
    NICEEVAL_STATE_DIR: stateDir,
    XDG_CACHE_HOME: testCacheHome(),
    ...extra,
  };
}

/** Parses NDJSON output into objects. */
export function ndjson(text: string): Record<string, unknown>[] {
  return text.split("\n").filter((line) => line.trim() !== "").map((line) => JSON.parse(line));
}

/**
 * Reads a child's stdout line by line until `until(line)` is true; returns every line read. The
 * timeout (default 2 minutes) only turns a hang into a failure.
 */
export async function readUntil(
  child: Deno.ChildProcess,
  until: (line: string) => boolean,
  options: { timeoutMs?: number } = {},
): Promise<{ lines: string[]; rest: ReadableStreamDefaultReader<string> }> {
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const lines: string[] = [];
  let buffer = "";
  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  while (Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let nl: number;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      lines.push(line);
      if (until(line)) return { lines, rest: reader };
    }
  }
  throw new Error(`readUntil: condition not met; read:\n${lines.join("\n")}${buffer}`);
}

/** Reads the rest of a stream to its end. */
export async function drain(reader: ReadableStreamDefaultReader<string>): Promise<string> {
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return text;
    text += value;
  }
}
