/**
 * The handle of one vercel sandbox (sandboxes.md rules 132–134, 136). Commands run through
 * `runCommand` and their output is read once they ended, so `onOutput` gets one call per non-empty
 * stream after the command; there is no stdin and no user but the default one or `root`. The SDK
 * cannot prove a command's process tree dead, so a timeout or abort deletes the sandbox and rejects
 * with `SandboxRetiredError`.
 */
import { type Clock, errorMessage, onAbort, raceAbort } from "../../../_shared/mod.ts";
import {
  SandboxAbortedError,
  SandboxFileNotFoundError,
  SandboxPathError,
  SandboxRetiredError,
  SandboxTimeoutError,
  SandboxUnsupportedError,
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
import { TailBuffer } from "../_tail.ts";
import {
  destroyVercelSandbox,
  type VercelInstance,
  type VercelPort,
  withCleanupSignal,
} from "./port.ts";
import { OutputQueue } from "../_output_queue.ts";

/** The workdir of every vercel sandbox (rule 131). */
export const VERCEL_WORKDIR = "/vercel/sandbox";

const CAPABILITIES: SandboxCapabilities = Object.freeze({
  user: "root-only",
  rootAvailable: true,
  stdin: false,
  liveOutput: false,
});

/** What a vercel handle is built from. */
export interface VercelHandleInit {
  readonly port: VercelPort;
  readonly instance: VercelInstance;
  readonly shell: "bash" | "sh";
  readonly clock: Clock;
}

/** One vercel sandbox; `id` is the sandbox name. */
export class VercelHandle implements SandboxHandle {
  readonly id: string;
  readonly provider = "vercel";
  readonly workdir = VERCEL_WORKDIR;
  readonly capabilities: SandboxCapabilities = CAPABILITIES;
  readonly shell: "bash" | "sh";
  readonly #init: VercelHandleInit;
  #expiresAt: Date | undefined;
  #retired = false;
  #stopping: Promise<void> | undefined;
  readonly #output = new OutputQueue();

  constructor(init: VercelHandleInit) {
    this.#init = init;
    this.id = init.instance.name;
    this.shell = init.shell;
    this.#expiresAt = init.instance.expiresAt;
  }

  async exec(command: ExecCommand, options: ExecOptions = {}): Promise<ExecResult> {
    this.#checkLive();
    checkOptions(options);
    options.signal?.throwIfAborted();
    const { clock } = this.#init;
    const started = clock.now();
    const [cmd, ...args] = "argv" in command
      ? command.argv
      : [this.shell === "bash" ? "/bin/bash" : "/bin/sh", "-c", command.script];
    const controller = new AbortController();
    let timedOut = false;
    const timer = options.timeoutMs === undefined ? undefined : clock.setTimeout(() => {
      timedOut = true;
      controller.abort(new Error(`timed out after ${options.timeoutMs} ms`));
    }, options.timeoutMs);
    using _relay = onAbort(options.signal, () => controller.abort(options.signal?.reason));
    const signal = controller.signal;
    let exitCode: number;
    let out: string;
    let err: string;
    try {
      const finished = await raceAbort(
        this.#init.instance.runCommand({
          cmd,
          args,
          cwd: options.cwd === undefined ? this.workdir : sandboxPath(this.workdir, options.cwd),
          ...(options.env === undefined ? {} : { env: options.env }),
          sudo: options.user === "root",
          signal,
        }),
        signal,
      );
      exitCode = finished.exitCode;
      out = await raceAbort(finished.stdout({ signal }), signal);
      err = await raceAbort(finished.stderr({ signal }), signal);
    } catch (error) {
      if (!signal.aborted) throw error;
      await this.#retire();
      throw this.#retiredError(timedOut, options, error);
    } finally {
      if (timer !== undefined) clock.clearTimeout(timer);
    }
    const stdout = tail(out);
    const stderr = tail(err);
    if (options.onOutput) {
      const deliver = this.#output.wrap(options.onOutput);
      if (stdout.bytes.length > 0) await deliver({ stream: "stdout", data: stdout.bytes });
      if (stderr.bytes.length > 0) await deliver({ stream: "stderr", data: stderr.bytes });
    }
    const truncated = {
      ...(stdout.truncated ? { stdout: true as const } : {}),
      ...(stderr.truncated ? { stderr: true as const } : {}),
    };
    return {
      exitCode,
      stdout: stdout.bytes,
      stderr: stderr.bytes,
      durationMs: Math.max(0, clock.now() - started),
      ...(stdout.truncated || stderr.truncated ? { truncated } : {}),
    };
  }

  async readFile(path: string, signal?: AbortSignal): Promise<Uint8Array> {
    this.#checkLive();
    const target = sandboxPath(this.workdir, path);
    const data = await this.#init.instance.readFileToBuffer({ path: target }, { signal });
    if (data !== null) return data;
    // The API answers a directory like a missing file; `test -d` tells them apart (rule 17).
    if (await this.#test("-d", target, signal)) {
      throw new SandboxPathError(target, `Cannot read "${target}": a directory`);
    }
    throw new SandboxFileNotFoundError(target, `Cannot read "${target}": no such file`);
  }

  async writeFile(
    path: string,
    data: Uint8Array,
    o: { mode?: number; signal?: AbortSignal } = {},
  ): Promise<void> {
    this.#checkLive();
    const target = sandboxPath(this.workdir, path);
    if (target === "/") throw new SandboxPathError(target, `Cannot write "/": a directory`);
    await this.#init.instance.writeFiles(
      [{ path: target, content: data, mode: o.mode ?? 0o644 }],
      { signal: o.signal },
    );
  }

  async exists(path: string, signal?: AbortSignal): Promise<boolean> {
    this.#checkLive();
    return await this.#test("-e", sandboxPath(this.workdir, path), signal);
  }

  /**
   * Ready when the session has `minRemainingMs` left; otherwise extends the timeout by what is
   * missing, reads the sandbox again and answers from the re-read expiry only (rule 134).
   */
  async ensureLifetime(minRemainingMs: number, signal?: AbortSignal): Promise<Lifetime> {
    this.#checkLive();
    const { clock, instance, port } = this.#init;
    const before = this.#expiresAt;
    if (before !== undefined && before.getTime() - clock.now() >= minRemainingMs) {
      return { ready: true, expiresAt: before };
    }
    if (before === undefined) {
      return { ready: false, reason: "the vercel sandbox has no running session" };
    }
    const missing = Math.ceil(minRemainingMs - (before.getTime() - clock.now()));
    try {
      await instance.extendTimeout(missing, { signal });
    } catch (error) {
      signal?.throwIfAborted();
      return {
        ready: false,
        reason: `the vercel sandbox refused to extend its timeout by ${missing} ms: ${
          errorMessage(error)
        }`,
      };
    }
    this.#expiresAt = (await port.get(this.id, { signal })).expiresAt;
    const after = this.#expiresAt;
    const remaining = after === undefined ? 0 : after.getTime() - clock.now();
    if (after !== undefined && remaining >= minRemainingMs) {
      return { ready: true, expiresAt: after };
    }
    return {
      ready: false,
      reason: `the vercel sandbox has ${Math.max(0, Math.floor(remaining / 1000))} s left after ` +
        `extending its timeout, ${Math.ceil(minRemainingMs / 1000)} s are needed`,
    };
  }

  /** Deletes the sandbox once; an instance already gone is success (rules 19, 133). */
  stop(signal?: AbortSignal): Promise<void> {
    this.#retired = true;
    this.#stopping ??= destroyVercelSandbox(this.#init.port, this.id, { signal }).then(
      () => undefined,
      (error: unknown) => {
        this.#stopping = undefined; // a failed stop may be tried again
        throw error;
      },
    );
    return this.#stopping;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }

  /** `test <flag> <path>` as root: 0 → true, 1 → false, anything else rejects (rule 18). */
  async #test(flag: "-e" | "-d", path: string, signal?: AbortSignal): Promise<boolean> {
    const finished = await this.#init.instance.runCommand({
      cmd: "test",
      args: [flag, path],
      cwd: "/",
      sudo: true,
      signal,
    });
    if (finished.exitCode === 0) return true;
    if (finished.exitCode === 1) return false;
    throw new Error(`Cannot check "${path}": test exited with ${finished.exitCode}`);
  }

  /** Deletes the sandbox after a timeout or abort, bounded like a cleanup entry (rule 14). */
  async #retire(): Promise<void> {
    try {
      await withCleanupSignal(this.#init.clock, (signal) => this.stop(signal));
    } catch {
      // The retirement error is what callers act on; a sandbox left behind keeps its owner stamp
      // for prune.
    }
  }

  #retiredError(timedOut: boolean, options: ExecOptions, error: unknown): SandboxRetiredError {
    const cause = timedOut
      ? new SandboxTimeoutError(
        options.timeoutMs!,
        false,
        `Command timed out after ${options.timeoutMs} ms`,
        { cause: error },
      )
      : new SandboxAbortedError("Command aborted", { cause: options.signal?.reason });
    return new SandboxRetiredError(
      `${cause.message}; vercel sandbox "${this.id}" was retired because a vercel command's ` +
        "processes cannot be proven dead",
      { cause },
    );
  }

  #checkLive(): void {
    if (this.#retired) {
      throw new SandboxRetiredError(`Cannot use vercel sandbox "${this.id}": it was stopped`);
    }
  }
}

/** Rejects the options a vercel sandbox cannot honour (rule 132). */
function checkOptions(options: ExecOptions): void {
  if (options.stdin !== undefined) {
    throw new SandboxUnsupportedError(
      "stdin",
      'Cannot pass stdin: the "vercel" sandbox does not support it',
    );
  }
  if (options.user !== undefined && options.user !== "root") {
    throw new SandboxUnsupportedError(
      "user",
      `Cannot run as user "${options.user}": the "vercel" sandbox runs commands as its default ` +
        'user or "root" only',
    );
  }
}

/** The UTF-8 bytes of `text`, keeping the last 16 MiB (rule 15). */
function tail(text: string): { bytes: Uint8Array; truncated: boolean } {
  const buffer = new TailBuffer();
  buffer.push(new TextEncoder().encode(text));
  return { bytes: buffer.bytes(), truncated: buffer.truncated };
}
