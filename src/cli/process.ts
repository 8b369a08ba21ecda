/**
 * The only module that reads `Deno.args`, `Deno.env`, signals and calls `Deno.exit` (STYLE.md §8).
 * It answers `--version` and every help before anything else loads, then builds the real
 * {@link Io} and runs `main`. Its static imports stay light: `--version` needs none of its own, and
 * routing (`main.ts`), signals, the loader, the console routing and the public API arrive through
 * literal dynamic `import()` on the way to a help or a command (docs/start.md).
 */
import { credentialValues, realClock, Redactor, type TimerHandle } from "../_shared/mod.ts";
import { realRandom, UsageError, VERSION } from "../_shared/mod.ts";
import type { ApiNamespaces, ApiUrls, ImportMap, LoaderSelection } from "../loader/mod.ts";
import type { Io, TextSink } from "./io.ts";
import type { InterruptSignal } from "./signals.ts";
import { ReusableUtf8Encoder } from "./utf8.ts";

/** How often the child of a launcher checks that its launcher still lives (toolchain.md §10.5.1). */
const PARENT_WATCH_MS = 250;

/** What the entry hands {@link runProcess}. */
export interface ProcessOptions {
  /**
   * The four public namespaces to install, or how to import them: an entry that imports them
   * only when a command runs keeps `--version` and `--help` from loading them.
   */
  readonly api: ApiNamespaces | (() => Promise<ApiNamespaces>);
  readonly apiUrls: ApiUrls;
}

/** Runs the CLI as this process: parses `Deno.args`, wires signals, exits with main's code. */
export async function runProcess(options: ProcessOptions): Promise<never> {
  const processEnv = Deno.env.toObject();
  const redactor = new Redactor(credentialValues(processEnv));
  const stdout = sink(Deno.stdout, redactor);
  const early = await earlyText(Deno.args);
  if (early !== undefined) {
    stdout.write(early);
    Deno.exit(0);
  }
  const { main } = await import("./main.ts");
  const { createSignalCounter } = await import("./signals.ts");
  const api = typeof options.api === "function" ? await options.api() : options.api;
  const loaderApi = await import("../loader/mod.ts");
  loaderApi.installApi(api);
  const interrupt = new AbortController();
  const force = new AbortController();
  // Set by a launcher that relays signals (toolchain.md §10.5): only then can one Ctrl-C arrive
  // twice, once from the terminal and once relayed.
  const launcher = Deno.env.get("NICEEVAL_PARENT_PID");
  const { atExit, exit } = exitHooks();
  const count = createSignalCounter({
    clock: realClock,
    relayed: launcher !== undefined,
    onInterrupt: (name) => interrupt.abort(name),
    onForce: (name) => force.abort(name),
    onExit: () => exit(130),
  });
  const onSignal = (name: InterruptSignal) => () => count(name);
  const handlers = {
    SIGINT: onSignal("SIGINT"),
    SIGTERM: onSignal("SIGTERM"),
    SIGHUP: onSignal("SIGHUP"),
  };
  for (const [name, handler] of Object.entries(handlers)) {
    Deno.addSignalListener(name as Deno.Signal, handler);
  }
  const watchdog = launcher === undefined ? undefined : watchParent(launcher, handlers.SIGTERM);
  const stderr = sink(Deno.stderr, redactor);
  const loader = await chooseLoader(processEnv.NICEEVAL_LOADER, options.apiUrls, loaderApi);
  if (!("kind" in loader)) {
    stderr.write(`error: ${loader.message} [${loader.code}]\nhint: ${loader.hint}\n`);
    return exit(2);
  }
  if (loader.note !== undefined && !jsonRequested(Deno.args)) stderr.write(`${loader.note}\n`);
  const env = Object.freeze(processEnv);
  const { routeConsole } = await import("./console_route.ts");
  const io: Io = {
    stdout,
    stderr,
    redactor,
    console: routeConsole({ stdout, stderr }, { json: jsonRequested(Deno.args) }),
    env,
    setEnv: (key, value) => {
      if (Deno.env.get(key) === undefined) Deno.env.set(key, value);
    },
    cwd: Deno.cwd(),
    clock: realClock,
    random: realRandom,
    interrupt: interrupt.signal,
    forceInterrupt: force.signal,
    pid: Deno.pid,
    hostname: Deno.hostname(),
    os: Deno.build.os,
    cpus: navigator.hardwareConcurrency,
    uid: Deno.uid(),
    user: await userName(),
    apiUrls: options.apiUrls,
    loader: loader.kind,
    flush: () => Promise.resolve(),
    atExit,
  };
  const code = await main(Deno.args, io);
  watchdog?.();
  for (const [name, handler] of Object.entries(handlers)) {
    Deno.removeSignalListener(name as Deno.Signal, handler);
  }
  return exit(code);
}

/**
 * The text of `--version` or of a help, answered before the API, the loader and signals are set
 * up; undefined for a command, and for a usage error, which `main` reports the usual way. The
 * version, as `helpOrVersion` answers it, comes before `main.ts` loads.
 */
async function earlyText(args: readonly string[]): Promise<string | undefined> {
  if (args[0] === "--version" || args[0] === "-v") return `${VERSION}\n`;
  try {
    const { helpOrVersion } = await import("./main.ts");
    return await helpOrVersion(args);
  } catch {
    return undefined;
  }
}

/**
 * Selects the module loader once for the process (toolchain.md §8 rules 1–3): from
 * `NICEEVAL_LOADER`, the compiled-binary flag, and what a `data:` probe module resolves in this
 * process's import map compared with the project's own `deno.json` (docs/loader.md).
 */
async function chooseLoader(
  requested: string | undefined,
  apiUrls: ApiUrls,
  loaderApi: typeof import("../loader/mod.ts"),
): Promise<LoaderSelection | UsageError> {
  const standalone = Deno.build.standalone === true;
  const probe = standalone ? undefined : await import(
    "data:text/javascript,export default (s) => { try { return import.meta.resolve(s); } catch { return undefined; } };"
  ) as { default: (specifier: string) => string | undefined };
  try {
    return loaderApi.selectLoader({
      requested,
      standalone,
      resolve: (specifier) => probe?.default(specifier),
      projectMap: () => projectMap(Deno.cwd(), apiUrls, loaderApi.buildImportMap),
    });
  } catch (error) {
    if (error instanceof UsageError) return error;
    throw error;
  }
}

/** The project's import map for the probe; undefined when it cannot be read. */
function projectMap(
  root: string,
  apiUrls: ApiUrls,
  build: typeof import("../loader/mod.ts").buildImportMap,
): ImportMap | undefined {
  try {
    // Synchronous on purpose: the selection is one decision at start, before any other work.
    return build({ root, apiUrls, readText: readIfExists });
  } catch {
    return undefined;
  }
}

function readIfExists(path: string): string | undefined {
  try {
    return Deno.readTextFileSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
}

/** The name of the user this process runs as; undefined when the host cannot tell. */
async function userName(): Promise<string | undefined> {
  const { userInfo } = await import("node:os");
  try {
    return userInfo().username || undefined;
  } catch {
    return undefined;
  }
}

/**
 * toolchain.md §10.5.1: once the launcher is gone (this process was re-parented), takes the SIGTERM
 * path, so that an orphan never keeps holding the Record root. The timer does not keep the
 * process alive.
 */
function watchParent(launcher: string, onGone: () => void): () => void {
  let timer: TimerHandle | undefined;
  const check = () => {
    if (String(Deno.ppid) !== launcher) return onGone();
    timer = realClock.setTimeout(check, PARENT_WATCH_MS);
    Deno.unrefTimer(timer as number);
  };
  check();
  return () => {
    if (timer !== undefined) realClock.clearTimeout(timer);
  };
}

/**
 * A blocking text sink over a Deno stream that redacts credential values (CLI-8); a line written
 * allocates no bytes of its own.
 */
function sink(file: typeof Deno.stdout, redactor: Redactor): TextSink {
  const size = () => {
    try {
      return Deno.consoleSize();
    } catch {
      return undefined;
    }
  };
  // A reader that went away (`exp --json | head -1`) is not a failure of the run: it goes on
  // and stores its results; only this stream's output is dropped from then on.
  let closed = false;
  const encoder = new ReusableUtf8Encoder();
  return {
    write: (text) => {
      if (closed) return;
      const bytes = encoder.encode(redactor.redact(text));
      let offset = 0;
      try {
        while (offset < bytes.length) {
          offset += file.writeSync(offset === 0 ? bytes : bytes.subarray(offset));
        }
      } catch (error) {
        if (!(error instanceof Deno.errors.BrokenPipe)) throw error;
        closed = true;
      }
    },
    isTerminal: file.isTerminal(),
    columns: () => size()?.columns,
    rows: () => size()?.rows,
  };
}

/** True when the command prints JSON to stdout (`--json` before any `--`), see ERR-4. */
function jsonRequested(args: readonly string[]): boolean {
  const end = args.indexOf("--");
  return (end < 0 ? args : args.slice(0, end)).includes("--json");
}

/**
 * Terminal restores (the live panel erases itself and shows the cursor) registered through
 * `Io.atExit`; `exit` runs them on every exit path, a third signal included (STYLE.md §5.2).
 */
function exitHooks(): { atExit: NonNullable<Io["atExit"]>; exit: (code: number) => never } {
  const restores = new Set<() => void>();
  return {
    atExit: (restore) => {
      restores.add(restore);
      return () => void restores.delete(restore);
    },
    exit: (code) => {
      for (const restore of [...restores]) {
        try {
          restore();
        } catch {
          // The terminal is gone; nothing is left to restore.
        }
      }
      Deno.exit(code);
    },
  };
}
