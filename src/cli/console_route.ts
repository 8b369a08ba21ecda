/**
 * Routes `console.*` of user code to the redacting process streams or to the log of the Attempt
 * whose async context made the call (docs/console_output.md). Imported by `process.ts` only for
 * a command that runs, so `--version` and `--help` load none of its Node modules (docs/start.md).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { Console } from "node:console";
import { Writable } from "node:stream";
import type { ConsoleScope, LogTarget, TextSink } from "./io.ts";

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
export function routeConsole(
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
