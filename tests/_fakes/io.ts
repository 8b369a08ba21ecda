/** A fake {@link Io} for `main(args, io)`: captured streams, a fixed env, fake time and randomness. */
import type { Io, TextSink } from "../../src/cli/io.ts";
import { credentialValues, Redactor } from "../../src/_shared/mod.ts";
import { createFakeClock, type FakeClock } from "./clock.ts";
import { createSeededRandom } from "./random.ts";

/** A text sink that keeps everything written to it. */
export interface CapturedSink extends TextSink {
  /** Everything written so far. */
  text(): string;
}

/** The fake Io plus what tests inspect. */
export interface FakeIo extends Io {
  readonly stdout: CapturedSink;
  readonly stderr: CapturedSink;
  readonly clock: FakeClock;
  /** Variables set through `setEnv` (`.env` entries). */
  readonly setVariables: Map<string, string>;
  /** Fires the interrupt signal as a first SIGINT would. */
  interruptNow(): void;
}

/** Options of {@link createFakeIo}. */
export interface FakeIoOptions {
  readonly cwd?: string;
  readonly env?: Record<string, string>;
  readonly isTerminal?: boolean;
  readonly columns?: number;
  /** Logical CPUs of the fake host; defaults to 4. */
  readonly cpus?: number;
  /** The user id of the fake process; defaults to null (no uid). */
  readonly uid?: number | null;
}

/**
 * Creates a captured text sink; with a redactor it redacts every write, as the process's sinks
 * do (CLI-8).
 */
export function createCapturedSink(
  isTerminal = false,
  columns?: number,
  redactor?: Redactor,
): CapturedSink {
  const chunks: string[] = [];
  return {
    write: (text) => void chunks.push(redactor ? redactor.redact(text) : text),
    isTerminal,
    columns: () => columns,
    text: () => chunks.join(""),
  };
}

/** Creates a fake Io; the working directory defaults to a path that does not exist. */
export function createFakeIo(options: FakeIoOptions = {}): FakeIo {
  const interrupt = new AbortController();
  const force = new AbortController();
  const env = Object.freeze({ ...(options.env ?? {}) });
  const setVariables = new Map<string, string>();
  const redactor = new Redactor(credentialValues(env));
  return {
    stdout: createCapturedSink(options.isTerminal ?? false, options.columns, redactor),
    stderr: createCapturedSink(options.isTerminal ?? false, options.columns, redactor),
    redactor,
    env,
    setEnv: (key, value) => {
      if (!Object.hasOwn(env, key) && !setVariables.has(key)) setVariables.set(key, value);
    },
    cwd: options.cwd ?? "/nonexistent/niceeval-project",
    clock: createFakeClock(),
    random: createSeededRandom(),
    interrupt: interrupt.signal,
    forceInterrupt: force.signal,
    pid: 4242,
    hostname: "fake-host",
    cpus: options.cpus ?? 4,
    uid: options.uid ?? null,
    flush: () => Promise.resolve(),
    setVariables,
    interruptNow: () => interrupt.abort("SIGINT"),
  };
}
