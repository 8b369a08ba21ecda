/**
 * The handle of one docker sandbox (sandboxes.md §8.2.2): commands run through `docker exec`
 * wrapped so their process group can be killed (rules 107–109); files travel as tar archives and
 * are owned by the default user (rule 110); `stop` stops and removes the container and its own
 * network, tolerating ones already gone (rule 111).
 */
// @ts-types="@types/dockerode"
import type Docker from "dockerode";
import type { Buffer } from "node:buffer";
import { posix } from "node:path";
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
  UploadEntry,
} from "../../types.ts";
import { dockerStatus } from "./client.ts";
import { stopContainer } from "./stop.ts";
import { CONTROL_DIR, type DockerExecRequest, runExec } from "./_exec.ts";
import { firstTarEntry, oneEntryTar, packTar, uploadTarEntries } from "./_tar.ts";
import { OutputQueue } from "../_output_queue.ts";

/** What a docker handle is built from. */
export interface DockerHandleInit {
  readonly docker: Docker;
  readonly container: Docker.Container;
  readonly workdir: string;
  /** The configured user (`undefined`: the image's USER, else root). */
  readonly user: string | undefined;
  /** The default user's ids, probed at create. */
  readonly uid: number;
  readonly gid: number;
  readonly shell: "bash" | "sh";
  /** When PID 1 exits (epoch ms). */
  readonly expiresAt: number;
  /** The sandbox's own network (`network: "own"`), removed by stop. */
  readonly network?: string | undefined;
  /**
   * The own-network gate's permit (rule 118), released once a stop has settled: even a failed stop
   * releases it, so a network left behind makes a later create fail and retry instead of wait.
   */
  readonly networkPermit?: Disposable;
  readonly clock: Clock;
}

const CAPABILITIES: SandboxCapabilities = Object.freeze({
  user: "any",
  rootAvailable: true,
  stdin: true,
  liveOutput: true,
});

/** Hops of symlinks that `readFile` follows. */
const MAX_SYMLINK_HOPS = 8;
/** Creates the missing parents of `$1`, owned by `$2` (`uid:gid`). */
const MKDIR_OWNED_SCRIPT = 'p=$1; o=$2; set --; d=$p; while [ ! -e "$d" ]; do ' +
  'set -- "$d" "$@"; d=$(dirname "$d"); done; mkdir -p "$p" || exit 1; ' +
  '[ $# -eq 0 ] || chown "$o" "$@"';

/** In `$1`, gives the entries `$3…` to `$2` (`uid:gid`), recursively. */
const CHOWN_UPLOAD_SCRIPT = 'cd "$1" && o=$2 && shift 2 && chown -R "$o" -- "$@"';

/** One docker sandbox. */
export class DockerHandle implements SandboxHandle {
  readonly id: string;
  readonly provider = "docker";
  readonly workdir: string;
  readonly capabilities: SandboxCapabilities = CAPABILITIES;
  readonly shell: "bash" | "sh";
  /** When the container's TTL ends (PID 1 exits). */
  readonly expiresAt: Date;
  readonly #init: DockerHandleInit;
  #execs = 0;
  #retired = false;
  #stopping: Promise<void> | undefined;
  readonly #output = new OutputQueue();

  constructor(init: DockerHandleInit) {
    this.#init = init;
    this.id = init.container.id;
    this.workdir = init.workdir;
    this.shell = init.shell;
    this.expiresAt = new Date(init.expiresAt);
  }

  async exec(command: ExecCommand, options: ExecOptions = {}): Promise<ExecResult> {
    this.#checkLive();
    const { clock } = this.#init;
    const started = clock.now();
    const argv = "argv" in command
      ? command.argv
      : [this.shell === "bash" ? "/bin/bash" : "/bin/sh", "-c", command.script];
    const request: DockerExecRequest = {
      argv,
      user: options.user ?? this.#init.user,
      cwd: options.cwd === undefined ? this.workdir : sandboxPath(this.workdir, options.cwd),
      env: options.env,
      stdin: options.stdin,
      onOutput: options.onOutput ? this.#output.wrap(options.onOutput) : undefined,
    };
    this.#execs += 1;
    const outcome = await runExec(this.#init, request, {
      pgidFile: `${CONTROL_DIR}/${this.#execs}.pgid`,
      timeoutMs: options.timeoutMs,
      signal: options.signal,
    });
    if (outcome.ended === "exit") {
      const { exitCode, stdout, stderr, truncated } = outcome;
      const hasTruncation = truncated.stdout || truncated.stderr;
      return {
        exitCode,
        stdout,
        stderr,
        durationMs: Math.max(0, clock.now() - started),
        ...(hasTruncation ? { truncated } : {}),
      };
    }
    if (!outcome.confirmed) {
      await this.stop().catch(() => undefined); // the retirement below is what callers act on
      throw new SandboxRetiredError(
        `Cannot confirm that the command's process group died; docker sandbox "${this.#short()}" ` +
          "was retired",
      );
    }
    if (outcome.ended === "timeout") {
      const ms = options.timeoutMs!;
      throw new SandboxTimeoutError(ms, false, `Command timed out after ${ms} ms`);
    }
    throw new SandboxAbortedError("Command aborted", { cause: options.signal?.reason });
  }

  async readFile(path: string, signal?: AbortSignal): Promise<Uint8Array> {
    this.#checkLive();
    let target = sandboxPath(this.workdir, path);
    for (let hop = 0; hop <= MAX_SYMLINK_HOPS; hop++) {
      signal?.throwIfAborted();
      let archive: NodeJS.ReadableStream;
      try {
        archive = await this.#init.container.getArchive({ path: target });
      } catch (error) {
        if (dockerStatus(error) === 404) {
          throw new SandboxFileNotFoundError(target, `Cannot read "${target}": no such file`, {
            cause: error,
          });
        }
        throw error;
      }
      const entry = await firstTarEntry(archive);
      if (entry === undefined) {
        throw new SandboxFileNotFoundError(target, `Cannot read "${target}": no such file`);
      }
      if (entry.type === "directory") {
        throw new SandboxPathError(target, `Cannot read "${target}": a directory`);
      }
      if (entry.type === "symlink" && entry.linkname !== undefined) {
        target = posix.resolve(posix.dirname(target), entry.linkname);
        continue;
      }
      return entry.data;
    }
    throw new SandboxPathError(target, `Cannot read "${path}": too many levels of symlinks`);
  }

  async writeFile(
    path: string,
    data: Uint8Array,
    o: { mode?: number; signal?: AbortSignal } = {},
  ): Promise<void> {
    this.#checkLive();
    const target = sandboxPath(this.workdir, path);
    if (target === "/") throw new SandboxPathError(target, `Cannot write "/": a directory`);
    const { uid, gid, clock } = this.#init;
    const parent = posix.dirname(target);
    const archive = await oneEntryTar({
      name: posix.basename(target),
      data,
      mode: o.mode ?? 0o644,
      uid,
      gid,
      mtime: new Date(clock.now()),
    });
    await this.#putArchive(archive, parent, target, o.signal);
  }

  /**
   * Sends the whole upload as one archive into `dir` (created, owned by the default user, when
   * missing), then gives everything uploaded to the default user with `chown -R` (rule 110).
   * Entries keep their host modes.
   */
  async uploadEntries(
    dir: string,
    entries: readonly UploadEntry[],
    o: { signal?: AbortSignal } = {},
  ): Promise<void> {
    this.#checkLive();
    const target = sandboxPath(this.workdir, dir);
    const { uid, gid, clock } = this.#init;
    const signal = o.signal;
    const owner = { uid, gid, mtime: new Date(clock.now()) };
    const archive = await packTar(uploadTarEntries(entries, owner, signal));
    await this.#putArchive(archive, target, target, signal);
    const tops = [...new Set(entries.map((e) => e.path.split("/")[0]!))].sort();
    if (tops.length === 0) return;
    signal?.throwIfAborted();
    const r = await this.#control(
      ["sh", "-c", CHOWN_UPLOAD_SCRIPT, "sh", target, `${uid}:${gid}`, ...tops],
      signal,
    );
    if (r.exitCode !== 0) {
      throw new SandboxPathError(
        target,
        `Cannot give the upload in "${target}" to the default user: ${decode(r.stderr).trim()}`,
      );
    }
  }

  async exists(path: string, signal?: AbortSignal): Promise<boolean> {
    this.#checkLive();
    const target = sandboxPath(this.workdir, path);
    const r = await this.#control(["test", "-e", target], signal);
    if (r.exitCode === 0) return true;
    if (r.exitCode === 1) return false;
    throw new Error(`Cannot check "${target}": test exited with ${r.exitCode}`);
  }

  ensureLifetime(minRemainingMs: number): Promise<Lifetime> {
    this.#checkLive();
    const remaining = this.expiresAt.getTime() - this.#init.clock.now();
    if (remaining >= minRemainingMs) {
      return Promise.resolve({ ready: true, expiresAt: this.expiresAt });
    }
    return Promise.resolve({
      ready: false,
      reason: `the container's TTL ends in ${Math.max(0, Math.floor(remaining / 1000))} s, ` +
        `${Math.ceil(minRemainingMs / 1000)} s are needed; a docker TTL cannot be extended`,
    });
  }

  stop(): Promise<void> {
    this.#retired = true;
    this.#stopping ??= stopContainer(this.#init.docker, this.id, { network: this.#init.network })
      .then(
        () => undefined,
        (error: unknown) => {
          this.#stopping = undefined; // a failed stop may be tried again
          throw error;
        },
      )
      .finally(() => this.#init.networkPermit?.[Symbol.dispose]());
    return this.#stopping;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }

  /**
   * `putArchive` into `dir`; a missing `dir` answers 404, so it is created (owned by the default
   * user) and the archive sent again. `target` names the written path in errors.
   */
  async #putArchive(
    archive: Buffer,
    dir: string,
    target: string,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const { uid, gid, container } = this.#init;
    const put = () => container.putArchive(archive, { path: dir, noOverwriteDirNonDir: true });
    try {
      await put();
    } catch (error) {
      if (dockerStatus(error) !== 404) throw this.#writeError(target, error);
      signal?.throwIfAborted();
      const r = await this.#control(["sh", "-c", MKDIR_OWNED_SCRIPT, "sh", dir, `${uid}:${gid}`]);
      if (r.exitCode !== 0) {
        throw new SandboxPathError(
          target,
          `Cannot write "${target}": cannot create "${dir}": ${decode(r.stderr).trim()}`,
        );
      }
      await put().catch((again: unknown) => {
        throw this.#writeError(target, again);
      });
    }
  }

  /** Runs a short command as root without the group wrapper. */
  async #control(argv: string[], signal?: AbortSignal) {
    const outcome = await runExec(this.#init, { argv, user: "root" }, { signal });
    if (outcome.ended !== "exit") throw signal?.reason ?? new Error("Control command stopped");
    return outcome;
  }

  #writeError(target: string, error: unknown): unknown {
    const status = dockerStatus(error);
    if (status === 400 || status === 500) {
      return new SandboxPathError(target, `Cannot write "${target}": ${errorMessage(error)}`, {
        cause: error,
      });
    }
    return error;
  }

  #checkLive(): void {
    if (this.#retired) {
      throw new SandboxRetiredError(`Cannot use docker sandbox "${this.#short()}": it was stopped`);
    }
  }

  #short(): string {
    return this.id.slice(0, 12);
  }
}

function decode(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes);
}
