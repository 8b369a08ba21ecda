/**
 * The handle of one E2B sandbox (sandboxes.md rules 123–127, 129): commands run through the
 * wrapper of `frames.ts`; files go through the SDK's files API as the default user; the lifetime
 * is read with `getInfo` and extended with `setTimeout`; `stop` kills the sandbox and counts
 * "not found" as done.
 */
import { type Clock, errorMessage } from "../../../_shared/mod.ts";
import {
  SandboxAbortedError,
  SandboxFileNotFoundError,
  SandboxPathError,
  SandboxRetiredError,
  SandboxTimeoutError,
} from "../../errors.ts";
import { sandboxPath } from "../../paths.ts";
import type {
  ExecCommand,
  ExecOptions,
  ExecResult,
  Lifetime,
  SandboxCapabilities,
  SandboxHandle,
} from "../../types.ts";
import { commandLine, shellQuote } from "./frames.ts";
import { type E2BExecOutcome, runWrapped } from "./exec.ts";
import { isNotFound } from "./owned.ts";
import type { E2BInstance } from "./port.ts";
import { OutputQueue } from "../_output_queue.ts";

/** Rule 129. */
const CAPABILITIES: SandboxCapabilities = Object.freeze({
  user: "any",
  rootAvailable: true,
  stdin: true,
  liveOutput: true,
});

/** Asked for beyond the minimum when extending, so the re-read clears it despite rounding. */
const EXTEND_SLACK_MS = 10_000;

/** What an E2B handle is built from. */
export interface E2BHandleInit {
  readonly instance: E2BInstance;
  readonly workdir: string;
  /** The default user of every command and file operation. */
  readonly user: string;
  readonly shell: "bash" | "sh";
  readonly clock: Clock;
  /** 16 random hex characters, new for every command (rule 123). */
  readonly marker: () => string;
}

/** One E2B sandbox. */
export class E2BHandle implements SandboxHandle {
  readonly id: string;
  readonly provider = "e2b";
  readonly workdir: string;
  readonly capabilities: SandboxCapabilities = CAPABILITIES;
  readonly shell: "bash" | "sh";
  readonly #init: E2BHandleInit;
  #retired: string | undefined;
  #stopping: Promise<void> | undefined;
  readonly #output = new OutputQueue();

  constructor(init: E2BHandleInit) {
    this.#init = init;
    this.id = init.instance.id;
    this.workdir = init.workdir;
    this.shell = init.shell;
  }

  async exec(command: ExecCommand, options: ExecOptions = {}): Promise<ExecResult> {
    this.#checkLive();
    const { clock } = this.#init;
    const started = clock.now();
    const outcome = await runWrapped(this.#init.instance, {
      command: commandLine(command, this.shell),
      marker: this.#init.marker(),
      user: options.user ?? this.#init.user,
      cwd: options.cwd === undefined ? this.workdir : sandboxPath(this.workdir, options.cwd),
      env: options.env,
      stdin: options.stdin,
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      onOutput: options.onOutput ? this.#output.wrap(options.onOutput) : undefined,
    }, clock);
    return await this.#settle(outcome, options, started);
  }

  async readFile(path: string, signal?: AbortSignal): Promise<Uint8Array> {
    this.#checkLive();
    const target = sandboxPath(this.workdir, path);
    try {
      return await this.#init.instance.read(target, { user: this.#init.user, signal });
    } catch (error) {
      if (isNotFound(error)) {
        throw new SandboxFileNotFoundError(target, `Cannot read "${target}": no such file`, {
          cause: error,
        });
      }
      if (await this.#isDirectory(target)) {
        throw new SandboxPathError(target, `Cannot read "${target}": a directory`, {
          cause: error,
        });
      }
      throw error;
    }
  }

  async writeFile(
    path: string,
    data: Uint8Array,
    o: { mode?: number; signal?: AbortSignal } = {},
  ): Promise<void> {
    this.#checkLive();
    const target = sandboxPath(this.workdir, path);
    if (target === "/") throw new SandboxPathError(target, `Cannot write "/": a directory`);
    const { instance, user } = this.#init;
    await instance.write(target, data, { user, signal: o.signal });
    if (o.mode === undefined) return;
    const mode = (o.mode & 0o7777).toString(8);
    const r = await this.#control(`chmod ${mode} ${shellQuote(target)}`, user);
    if (r !== 0) {
      throw new SandboxPathError(target, `Cannot set mode ${mode} on "${target}": exit ${r}`);
    }
  }

  exists(path: string, signal?: AbortSignal): Promise<boolean> {
    this.#checkLive();
    const target = sandboxPath(this.workdir, path);
    return this.#init.instance.exists(target, { user: this.#init.user, signal });
  }

  /** Rule 127: reads `endAt`; when short, extends by `min` from now and answers from a re-read. */
  async ensureLifetime(minRemainingMs: number, signal?: AbortSignal): Promise<Lifetime> {
    this.#checkLive();
    const { instance, clock } = this.#init;
    const before = await instance.info(signal);
    if (before.endAt.getTime() - clock.now() >= minRemainingMs) {
      return { ready: true, expiresAt: before.endAt };
    }
    try {
      await instance.setTimeout(minRemainingMs + EXTEND_SLACK_MS, signal);
    } catch (error) {
      signal?.throwIfAborted();
      return { ready: false, reason: `cannot extend the sandbox: ${errorMessage(error)}` };
    }
    const after = await instance.info(signal);
    const remaining = after.endAt.getTime() - clock.now();
    if (remaining >= minRemainingMs) return { ready: true, expiresAt: after.endAt };
    return {
      ready: false,
      reason: `the sandbox ends in ${Math.max(0, Math.floor(remaining / 1000))} s after ` +
        `extending it, ${Math.ceil(minRemainingMs / 1000)} s are needed`,
    };
  }

  stop(signal?: AbortSignal): Promise<void> {
    this.#retired ??= "it was stopped";
    this.#stopping ??= this.#init.instance.kill(signal).then(
      () => undefined,
      (error: unknown) => {
        if (isNotFound(error)) return;
        this.#stopping = undefined; // a failed stop may be tried again
        throw error;
      },
    );
    return this.#stopping;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }

  async #settle(
    outcome: E2BExecOutcome,
    options: ExecOptions,
    started: number,
  ): Promise<ExecResult> {
    if (outcome.ended === "exit") {
      const { exitCode, stdout, stderr, truncated } = outcome;
      const hasTruncation = truncated.stdout || truncated.stderr;
      return {
        exitCode,
        stdout,
        stderr,
        durationMs: Math.max(0, this.#init.clock.now() - started),
        ...(hasTruncation ? { truncated } : {}),
      };
    }
    if (outcome.ended === "broken") {
      await this.#retire();
      throw new SandboxRetiredError(
        `Cannot follow the command: ${errorMessage(outcome.error)}; e2b sandbox "${this.id}" ` +
          "was retired",
        { cause: outcome.error },
      );
    }
    if (!outcome.confirmed) {
      await this.#retire();
      throw new SandboxRetiredError(
        `Cannot confirm that the command's process group died; e2b sandbox "${this.id}" was ` +
          "retired",
      );
    }
    if (outcome.ended === "timeout") {
      const ms = options.timeoutMs!;
      throw new SandboxTimeoutError(ms, false, `Command timed out after ${ms} ms`);
    }
    throw new SandboxAbortedError("Command aborted", { cause: options.signal?.reason });
  }

  /** Rule 14: kills the sandbox; every later call rejects with `SandboxRetiredError`. */
  async #retire(): Promise<void> {
    this.#retired = "it was retired";
    await this.stop().catch(() => undefined); // the retirement is what callers act on
  }

  async #isDirectory(target: string): Promise<boolean> {
    const r = await this.#control(`test -d ${shellQuote(target)}`, this.#init.user)
      .catch(() => undefined);
    return r === 0;
  }

  /** A short command without the wrapper; its exit code. */
  async #control(cmd: string, user: string): Promise<number | undefined> {
    const proc = await this.#init.instance.run(cmd, { user, cwd: "/" });
    return (await proc.wait()).exitCode;
  }

  #checkLive(): void {
    if (this.#retired !== undefined) {
      throw new SandboxRetiredError(`Cannot use e2b sandbox "${this.id}": ${this.#retired}`);
    }
  }
}
