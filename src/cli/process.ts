/**
 * The only module that reads `Deno.args`, `Deno.env`, signals and calls `Deno.exit` (STYLE.md §8).
 * It builds the real {@link Io} and runs `main`.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { Console } from "node:console";
import { userInfo } from "node:os";
import { Writable } from "node:stream";
import {
  credentialValues,
  realClock,
  Redactor,
  type TimerHandle,
  UsageError,
} from "../_shared/mod.ts";
import { realRandom } from "../_shared/mod.ts";
import { buildImportMap, installApi, type LoaderSelection, selectLoader } from "../loader/mod.ts";
import type { ApiNamespaces, ApiUrls, ImportMap } from "../loader/mod.ts";
import type { ConsoleScope, Io, LogTarget, TextSink } from "./io.ts";
import { main } from "./main.ts";
import { createSignalCounter, type InterruptSignal } from "./signals.ts";
import { ReusableUtf8Encoder } from "./utf8.ts";

/** How often the child of a launcher checks that its launcher still lives (toolchain.md §10.5.1). */
const PARENT_WATCH_MS = 250;

/** Runs the CLI as this process: parses `Deno.args`, wires signals, exits with main's code. */
export async function runProcess(
  options: { api: ApiNamespaces; apiUrls: ApiUrls },
): Promise<never> {
  installApi(options.api);
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
  const processEnv = Deno.env.toObject();
  const redactor = new Redactor(credentialValues(processEnv));
  const stdout = sink(Deno.stdout, redactor);
  const stderr = sink(Deno.stderr, redactor);
  const loader = await chooseLoader(processEnv.NICEEVAL_LOADER, options.apiUrls);
  if (!("kind" in loader)) {
    stderr.write(`error: ${loader.message} [${loader.code}]\nhint: ${loader.hint}\n`);
    return exit(2);
  }
  if (loader.note !== undefined && !jsonRequested(Deno.args)) stderr.write(`${loader.note}\n`);
  const env = Object.freeze(processEnv);
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
    user: userName(),
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
 * Selects the module loader once for the process (toolchain.md §8 rules 1–3): from
 * `NICEEVAL_LOADER`, the compiled-binary flag, and what a `data:` probe module resolves in this
 * process's import map compared with the project's own `deno.json` (docs/loader.md).
 */
async function chooseLoader(
  requested: string | undefined,
  apiUrls: ApiUrls,
): Promise<LoaderSelection | UsageError> {
  const standalone = Deno.build.standalone === true;
  const probe = standalone ? undefined : await import(
    "data:text/javascript,export default (s) => { try { return import.meta.resolve(s); } catch { return undefined; } };"
  ) as { default: (specifier: string) => string | undefined };
  try {
    return selectLoader({
      requested,
      standalone,
      resolve: (specifier) => probe?.default(specifier),
      projectMap: () => projectMap(Deno.cwd(), apiUrls),
    });
  } catch (error) {
    if (error instanceof UsageError) return error;
    throw error;
  }
}

/** The project's import map for the probe; undefined when it cannot be read. */
function projectMap(root: string, apiUrls: ApiUrls): ImportMap | undefined {
  try {
    // Synchronous on purpose: the selection is one decision at start, before any other work.
    return buildImportMap({ root, apiUrls, readText: readIfExists });
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
function userName(): string | undefined {
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

/** The methods of `console` that print; each is routed (docs/console_output.md). */
const CONSOLE_METHODS = [
  "log",
  "info",
  "debug",
  "warn",
  "error",
  "trace",
  "dir",
  "dirxml",
  "table",
  "assert",
  "count",
  "countReset",
  "group",
  "groupCollapsed",
  "groupEnd",
  "time",
  "timeEnd",
  "timeLog",
] as const;

/**
 * Routes `console.*` of user code (authoring.md §7.1 rule 2; docs/console_output.md): output made
 * inside a {@link ConsoleScope} goes to its target (an Attempt's log); other output goes to the
 * redacting process streams, `log`-like methods to stdout (to stderr when the command prints
 * JSON, ERR-4) and `warn`/`error`/`trace` to stderr. A console write is synchronous, so the
 * async context of the call decides where it goes.
 */
function routeConsole(
  streams: { stdout: TextSink; stderr: TextSink },
  options: { json: boolean },
): ConsoleScope {
  const scope = new AsyncLocalStorage<LogTarget>();
  const stream = (sink: TextSink) =>
    new Writable({
      decodeStrings: false,
      write(chunk: unknown, _encoding, done) {
        const text = String(chunk);
        const target = scope.getStore();
        if (target) target.log(text.endsWith("\n") ? text.slice(0, -1) : text);
        else sink.write(text);
        done();
      },
    });
  const routed = new Console({
    stdout: stream(options.json ? streams.stderr : streams.stdout),
    stderr: stream(streams.stderr),
  });
  const global = globalThis.console as unknown as Record<string, unknown>;
  for (const name of CONSOLE_METHODS) global[name] = routed[name].bind(routed);
  reportStrayErrors(routed);
  return scope;
}

/**
 * A promise rejection nobody handles, or an error thrown by a callback nobody catches (a stray
 * timer of an eval), would end the process with the runtime's own, unredacted report and lose the
 * run. Each is reported as `console.error` output instead, so it is attributed like one (the
 * Attempt's log when the runtime reports it in that Attempt's context) and redacted, and the run
 * goes on.
 */
function reportStrayErrors(routed: Console): void {
  globalThis.addEventListener("unhandledrejection", (event) => {
    event.preventDefault();
    routed.error("Unhandled promise rejection:", event.reason);
  });
  globalThis.addEventListener("error", (event) => {
    event.preventDefault();
    routed.error("Uncaught error:", event.error);
  });
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
