/** The process seam as every command sees it (STYLE.md §8): streams, env, cwd, time, signals. */
import type { Clock } from "../_shared/mod.ts";
import type { Random } from "../_shared/mod.ts";
import type { Redactor } from "../_shared/mod.ts";
import type { ApiUrls, LoaderKind } from "../loader/mod.ts";

/** A writable text stream. */
export interface TextSink {
  write(text: string): void;
  /** True when the stream is a terminal. */
  readonly isTerminal: boolean;
  /** Terminal width in columns, when known. */
  columns(): number | undefined;
  /** Terminal height in rows, when known (caps the panel's ACTIVE rows, OUT-H7). */
  rows?(): number | undefined;
}

/**
 * Runs work with `console.*` output attributed to a log target (an Attempt's log). The console
 * router of the process consults it; outside `run`, output goes to the process streams.
 */
export interface ConsoleScope {
  run<T>(target: LogTarget, work: () => T): T;
}

/** Where attributed `console.*` output goes: one call per console call, without a final newline. */
export interface LogTarget {
  log(text: string): void;
}

/** Everything a command may touch of its process. */
export interface Io {
  /** Redacts every write (CLI-8). */
  readonly stdout: TextSink;
  /** Redacts every write (CLI-8). */
  readonly stderr: TextSink;
  /**
   * The credential values of the environment; `.env` adds its own when the project loads. The
   * streams apply it; every writer of files niceeval owns (Record, JUnit) applies it too (CLI-8).
   */
  readonly redactor: Redactor;
  /**
   * Attributes `console.*` output made during an Attempt to that Attempt (authoring.md §7.1
   * rule 2). Absent where nothing routes the console (tests calling `main` in-process).
   */
  readonly console?: ConsoleScope;
  /** Read-only snapshot of the environment at start. */
  readonly env: Readonly<Record<string, string>>;
  /** Sets a variable for user code (`.env` entries); never overrides. */
  setEnv(key: string, value: string): void;
  readonly cwd: string;
  readonly clock: Clock;
  readonly random: Random;
  /** Aborts on the first SIGINT/SIGTERM; its reason names the signal. */
  readonly interrupt: AbortSignal;
  /** Aborts on a second interrupt signal: stop waiting and exit. */
  readonly forceInterrupt: AbortSignal;
  /** This process's id (owner records). */
  readonly pid: number;
  /** Host name (owner records). */
  readonly hostname: string;
  /** Logical CPUs of the host (machine sandbox budgets, MSB-1). */
  readonly cpus: number;
  /** The user id of this process, or null where the platform has none (local sandbox sweep). */
  readonly uid: number | null;
  /** The name of the user this process runs as, when the host knows it (sandbox `USER`). */
  readonly user?: string | undefined;
  /** The operating system (`Deno.build.os`); absent means linux (tests calling `main`). */
  readonly os?: string;
  /**
   * The URLs of the running niceeval's public entries (`init` writes them into the project's
   * import map). Absent in tests that call `main` in-process without a process entry.
   */
  readonly apiUrls?: ApiUrls;
  /**
   * The module loader the process selected for user files (toolchain.md §8). Absent means
   * `native` (tests calling `main` in-process).
   */
  readonly loader?: LoaderKind;
  /** Flushes the streams; resolves when written. */
  flush(): Promise<void>;
  /**
   * Registers `restore` (for example: show the cursor again) to run before the process exits,
   * also on a hard exit after a third signal; returns a function that unregisters it. Optional:
   * an Io without a process (tests) has nothing to restore.
   */
  atExit?(restore: () => void): () => void;
}
