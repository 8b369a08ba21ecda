/**
 * The handle of one `local` sandbox (sandboxes.md §8.1): commands run as host subprocesses, each
 * leading its own process group recorded in `<root>/pgids`; file operations stay inside the root
 * by real path (rule 102); `stop` kills every process carrying the root's marker, whatever its
 * group or session (docs/local_sandbox.md), and removes the root.
 */
import { dirname, join, posix } from "node:path";
import type { Clock } from "../../_shared/mod.ts";
import {
  SandboxAbortedError,
  SandboxFileNotFoundError,
  SandboxPathError,
  SandboxRetiredError,
  SandboxTimeoutError,
  SandboxUnsupportedError,
} from "../errors.ts";
import { isInside } from "../layer.ts";
import { sandboxPath } from "../paths.ts";
import type {
  ExecCommand,
  ExecOptions,
  ExecResult,
  Lifetime,
  SandboxCapabilities,
  SandboxHandle,
} from "../types.ts";
import { killGroup, runProcessGroup } from "./_process_group.ts";
import { killMarked } from "./_process_tree.ts";
import { removeTree } from "./_local_fs.ts";
import { OutputQueue } from "./_output_queue.ts";

/** What a local handle is built from. */
interface LocalHandleInit {
  /** Real path of the root. */
  readonly root: string;
  /** The environment every command starts from (rule 100). */
  readonly env: Readonly<Record<string, string>>;
  readonly shell: "bash" | "sh";
  readonly clock: Clock;
}

const CAPABILITIES: SandboxCapabilities = Object.freeze({
  user: "none",
  rootAvailable: false,
  stdin: true,
  liveOutput: true,
});

/** One local sandbox. */
export class LocalHandle implements SandboxHandle {
  readonly id: string;
  readonly provider = "local";
  readonly workdir: string;
  readonly capabilities: SandboxCapabilities = CAPABILITIES;
  /** The ledger's `GIT_DIR` (rule 82), outside the workdir. */
  readonly ledgerDir: string;
  readonly root: string;
  readonly shell: "bash" | "sh";
  readonly #init: LocalHandleInit;
  readonly #groups = new Set<number>();
  #retired = false;
  #stopping: Promise<void> | undefined;
  readonly #output = new OutputQueue();

  constructor(init: LocalHandleInit) {
    this.#init = init;
    this.root = init.root;
    this.id = posix.basename(init.root);
    this.workdir = join(init.root, "work");
    this.ledgerDir = join(init.root, "ledger");
    this.shell = init.shell;
  }

  async exec(command: ExecCommand, options: ExecOptions = {}): Promise<ExecResult> {
    this.#checkLive();
    if (options.user !== undefined) {
      throw new SandboxUnsupportedError("user", "Cannot run as another user in a local sandbox");
    }
    const cwd = options.cwd === undefined ? this.workdir : sandboxPath(this.workdir, options.cwd);
    const info = await Deno.stat(cwd).catch(() => undefined);
    if (!info?.isDirectory) {
      throw new SandboxPathError(cwd, `Cannot run command: cwd "${cwd}" is not a directory`);
    }
    const [program, ...args] = "argv" in command
      ? command.argv
      : [this.shell === "bash" ? "/bin/bash" : "/bin/sh", "-c", command.script];
    const outcome = await runProcessGroup({
      program,
      args,
      cwd,
      env: { ...this.#init.env, ...options.env },
      ...(options.stdin !== undefined ? { stdin: options.stdin } : {}),
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
      ...(options.onOutput ? { onOutput: this.#output.wrap(options.onOutput) } : {}),
      clock: this.#init.clock,
      onSpawn: (pgid) => this.#record(pgid),
    });
    if (outcome.ended === "exit") {
      this.#checkLive();
      return outcome.result;
    }
    if (!outcome.confirmed) {
      await this.stop();
      throw new SandboxRetiredError(
        `Cannot confirm that process group ${outcome.pgid} died; the sandbox was retired`,
      );
    }
    this.#checkLive();
    if (outcome.ended === "timeout") {
      const ms = options.timeoutMs!;
      throw new SandboxTimeoutError(ms, false, `Command timed out after ${ms} ms`);
    }
    throw new SandboxAbortedError("Command aborted", { cause: options.signal?.reason });
  }

  async readFile(path: string): Promise<Uint8Array> {
    this.#checkLive();
    const target = await this.#inside(path, false);
    const info = await Deno.stat(target).catch(notFound(target));
    if (info.isDirectory) {
      throw new SandboxPathError(target, `Cannot read "${target}": a directory`);
    }
    return await Deno.readFile(target).catch(notFound(target));
  }

  async writeFile(path: string, data: Uint8Array, o: { mode?: number } = {}): Promise<void> {
    this.#checkLive();
    const target = await this.#inside(path, true);
    const info = await Deno.stat(target).catch(() => undefined);
    if (info?.isDirectory) {
      throw new SandboxPathError(target, `Cannot write "${target}": a directory`);
    }
    await Deno.mkdir(dirname(target), { recursive: true });
    await Deno.writeFile(target, data);
    await Deno.chmod(target, o.mode ?? 0o644);
  }

  async exists(path: string): Promise<boolean> {
    this.#checkLive();
    const target = await this.#inside(path, false);
    try {
      await Deno.stat(target);
      return true;
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return false;
      throw error;
    }
  }

  ensureLifetime(): Promise<Lifetime> {
    this.#checkLive();
    return Promise.resolve({ ready: true });
  }

  stop(): Promise<void> {
    this.#retired = true;
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }

  async #stop(): Promise<void> {
    const recorded = await Deno.readTextFile(join(this.root, "pgids")).catch(() => "");
    for (const line of recorded.split("\n")) {
      if (/^\d+$/.test(line)) this.#groups.add(Number(line));
    }
    await killMarkedGroups(this.#groups, this.root, { unverifiable: "kill" });
    await removeTree(this.root);
  }

  #checkLive(): void {
    if (this.#retired) {
      throw new SandboxRetiredError(`Cannot use local sandbox "${this.id}": it was stopped`);
    }
  }

  async #record(pgid: number): Promise<void> {
    this.#groups.add(pgid);
    await Deno.writeTextFile(join(this.root, "pgids"), `${pgid}\n`, { append: true });
  }

  /**
   * The normalized path when its real path, or that of its nearest existing ancestor, is inside
   * the root (rule 102). A dangling symlink cannot be written through.
   */
  async #inside(path: string, forWrite: boolean): Promise<string> {
    const target = sandboxPath(this.workdir, path);
    for (let p = target;; p = dirname(p)) {
      let real: string | undefined;
      try {
        real = await Deno.realPath(p);
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
        const link = await Deno.lstat(p).catch(() => undefined);
        if (link?.isSymlink && forWrite) {
          throw new SandboxPathError(path, `Cannot write "${target}": a dangling symlink`);
        }
      }
      if (real !== undefined) {
        if (isInside(this.root, real)) return target;
        throw new SandboxPathError(path, `Cannot use "${target}": outside the sandbox root`);
      }
      if (p === dirname(p)) {
        throw new SandboxPathError(path, `Cannot use "${target}": outside the sandbox root`);
      }
    }
  }
}

function notFound(path: string): (error: unknown) => never {
  return (error) => {
    if (error instanceof Deno.errors.NotFound) {
      throw new SandboxFileNotFoundError(path, `Cannot read "${path}": no such file`, {
        cause: error,
      });
    }
    throw error;
  };
}

/** The variable that marks every process of a local sandbox (rule 100). */
export const ROOT_MARKER = "NICEEVAL_SANDBOX_ROOT";

/**
 * Kills every process that carries this root's marker, its descendants and their groups, scan after
 * scan until a scan finds none (docs/local_sandbox.md): a tool run in a new session has left its
 * command's group but still carries the marker. Without `/proc` the marker cannot be read:
 * `unverifiable` decides whether the recorded groups are killed (a live handle kills, detached
 * cleanup does not, rule 101).
 */
export async function killMarkedGroups(
  pgids: Iterable<number>,
  root: string,
  options: { unverifiable: "kill" | "skip" },
): Promise<void> {
  const gone = await killMarked(`${ROOT_MARKER}=${root}`);
  if (gone === undefined && options.unverifiable === "kill") {
    for (const pgid of pgids) killGroup(pgid);
  }
}
