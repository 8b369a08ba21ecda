/**
 * The only module that reads `Deno.args`, `Deno.env`, signals and calls `Deno.exit` (STYLE.md §8).
 * It builds the real {@link Io} and runs `main`.
 */
import { realClock } from "../_shared/mod.ts";
import { realRandom } from "../_shared/mod.ts";
import { installApi } from "../loader/mod.ts";
import type { ApiNamespaces } from "../loader/mod.ts";
import type { Io, TextSink } from "./io.ts";
import { main } from "./main.ts";

/** De-duplication window of a relayed signal (toolchain.md §10.5.2). */
const SIGNAL_DEDUPE_MS = 250;

/** Runs the CLI as this process: parses `Deno.args`, wires signals, exits with main's code. */
export async function runProcess(options: { api: ApiNamespaces }): Promise<never> {
  installApi(options.api);
  const interrupt = new AbortController();
  const force = new AbortController();
  let lastSignal = { name: "", at: 0 };
  let count = 0;
  const { atExit, exit } = exitHooks();
  const onSignal = (name: "SIGINT" | "SIGTERM") => () => {
    const now = realClock.now();
    if (name === lastSignal.name && now - lastSignal.at < SIGNAL_DEDUPE_MS) return;
    lastSignal = { name, at: now };
    count++;
    if (count === 1) interrupt.abort(name);
    else if (count === 2) force.abort(name);
    else exit(130);
  };
  const handlers = { SIGINT: onSignal("SIGINT"), SIGTERM: onSignal("SIGTERM") };
  for (const [name, handler] of Object.entries(handlers)) {
    Deno.addSignalListener(name as Deno.Signal, handler);
  }
  const io: Io = {
    stdout: sink(Deno.stdout),
    stderr: sink(Deno.stderr),
    env: Object.freeze(Deno.env.toObject()),
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
    flush: () => Promise.resolve(),
    atExit,
  };
  const code = await main(Deno.args, io);
  for (const [name, handler] of Object.entries(handlers)) {
    Deno.removeSignalListener(name as Deno.Signal, handler);
  }
  return exit(code);
}

const encoder = new TextEncoder();

/** A blocking text sink over a Deno stream. */
function sink(file: typeof Deno.stdout): TextSink {
  const size = () => {
    try {
      return Deno.consoleSize();
    } catch {
      return undefined;
    }
  };
  return {
    write: (text) => {
      const bytes = encoder.encode(text);
      let offset = 0;
      while (offset < bytes.length) offset += file.writeSync(bytes.subarray(offset));
    },
    isTerminal: file.isTerminal(),
    columns: () => size()?.columns,
    rows: () => size()?.rows,
  };
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
