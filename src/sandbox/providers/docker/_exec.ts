/**
 * One `docker exec` (sandboxes.md rules 107–109): attach with hijack, split the multiplexed stream
 * with the modem's demuxer (frames may straddle chunks), keep the last 16 MiB per stream, finish
 * when the stream ends or inspect reports the process gone, and on timeout or abort kill the
 * command's process group from a second exec.
 */
// @ts-types="@types/dockerode"
import type Docker from "dockerode";
import { Writable } from "node:stream";
import { type Clock, onAbort, sleep } from "../../../_shared/mod.ts";
import type { OutputChunk } from "../../types.ts";
import { TailBuffer } from "../_tail.ts";

/** How often a running exec is inspected (rule 108). */
export const INSPECT_POLL_MS = 250;
/** How long trailing frames may take after inspect saw the process gone (rule 108). */
const TRAILING_FRAMES_MS = 100;
/** How long a killed group may take to die before the container is retired (rule 109). */
const TREE_KILL_CONFIRM_MS = 2_000;
const KILL_POLL_MS = 50;
/** Until the exit code is published after the stream ended. */
const EXIT_CODE_POLL_MS = 10;
/** After the stream ended: inspect quickly for this long, then at the normal poll interval. */
const EXIT_CODE_WAIT_MS = 2_000;

/** Where each command's process group id is written (created by create, mode 1777). */
export const CONTROL_DIR = "/tmp/.niceeval-ctl";
/** The wrapper of rule 107: records `$$` (the group leader) and execs the command. */
const PGID_WRAPPER = 'echo $$ > "$0"; exec "$@"';

/** What one exec runs. */
export interface DockerExecRequest {
  readonly argv: readonly string[];
  readonly user?: string | undefined;
  readonly cwd?: string | undefined;
  readonly env?: Readonly<Record<string, string>> | undefined;
  readonly stdin?: Uint8Array | undefined;
  /** Serialized by the caller (rule 16). */
  readonly onOutput?: ((chunk: OutputChunk) => Promise<void>) | undefined;
}

/** How an exec ended. */
export type DockerExecOutcome =
  | {
    readonly ended: "exit";
    readonly exitCode: number;
    readonly stdout: Uint8Array;
    readonly stderr: Uint8Array;
    readonly truncated: { stdout?: true; stderr?: true };
  }
  | { readonly ended: "timeout" | "abort"; readonly confirmed: boolean };

/** The container a command runs in, with the client that reaches it. */
export interface ExecTarget {
  readonly docker: Docker;
  readonly container: Docker.Container;
  readonly clock: Clock;
}

/** Limits of one command; see {@link runExec}. */
export interface ExecLimits {
  /** Where the wrapper records the process group; absent for control commands. */
  readonly pgidFile?: string;
  readonly timeoutMs?: number | undefined;
  readonly signal?: AbortSignal | undefined;
}

/** Runs a control command (no wrapper, no limit); resolves with its exit status and output. */
export async function execCollect(
  target: ExecTarget,
  request: DockerExecRequest,
): Promise<{ exitCode: number; stdout: Uint8Array; stderr: Uint8Array }> {
  const outcome = await runExec(target, request);
  if (outcome.ended !== "exit") throw new Error("Cannot run a control command: it was stopped");
  return outcome;
}

/**
 * Runs one command. With `pgidFile`, the command is wrapped so that its process group can be
 * killed on timeout or abort (rule 109); without it (control commands) there is no limit.
 */
export async function runExec(
  target: ExecTarget,
  request: DockerExecRequest,
  o: ExecLimits = {},
): Promise<DockerExecOutcome> {
  o.signal?.throwIfAborted();
  const hasStdin = request.stdin !== undefined;
  const exec = await target.container.exec({
    Cmd: o.pgidFile === undefined
      ? [...request.argv]
      : ["sh", "-c", PGID_WRAPPER, o.pgidFile, ...request.argv],
    AttachStdout: true,
    AttachStderr: true,
    AttachStdin: hasStdin,
    Tty: false,
    ...(request.env ? { Env: Object.entries(request.env).map(([k, v]) => `${k}=${v}`) } : {}),
    ...(request.cwd ? { WorkingDir: request.cwd } : {}),
    ...(request.user ? { User: request.user } : {}),
  });
  const stream = await exec.start({ hijack: true, stdin: hasStdin });
  const output = attachOutput(target.docker, stream, request.onOutput);
  if (hasStdin) {
    stream.write(request.stdin);
    stream.end();
  }
  const stop = new AbortController();
  try {
    const ended = await waitForEnd(exec, output.ended, {
      ...o,
      clock: target.clock,
      stop: stop.signal,
    });
    if (ended !== "exit") {
      const confirmed = o.pgidFile !== undefined && await killGroup(target, exec, o.pgidFile);
      return { ended, confirmed };
    }
    const exitCode = await exitCodeOf(exec, target.clock);
    if (exitCode === undefined) {
      // The daemon never published an exit status: a transport failure (rule 11).
      if (o.pgidFile !== undefined) await killGroup(target, exec, o.pgidFile);
      throw new Error("Cannot read the command's exit status from the daemon");
    }
    await Promise.all(output.pending);
    return { ended: "exit", exitCode, ...output.result() };
  } finally {
    stop.abort();
    stream.destroy();
    await Promise.allSettled(output.pending);
  }
}

/**
 * Splits the multiplexed stream into the two tails and the live callback; `ended` resolves when
 * the stream ends, closes or fails.
 */
function attachOutput(
  docker: Docker,
  stream: NodeJS.ReadWriteStream,
  onOutput: DockerExecRequest["onOutput"],
) {
  const stdout = new TailBuffer();
  const stderr = new TailBuffer();
  const pending: Promise<void>[] = [];
  const sink = (buffer: TailBuffer, name: "stdout" | "stderr") =>
    new Writable({
      write(chunk: Uint8Array, _encoding, callback) {
        const data = new Uint8Array(chunk);
        buffer.push(data);
        if (onOutput) pending.push(onOutput({ stream: name, data }));
        callback();
      },
    });
  docker.modem.demuxStream(stream, sink(stdout, "stdout"), sink(stderr, "stderr"));
  const ended = new Promise<void>((resolve) => {
    stream.once("end", () => resolve());
    stream.once("close", () => resolve());
    stream.once("error", () => resolve());
  });
  const result = () => ({
    stdout: stdout.bytes(),
    stderr: stderr.bytes(),
    truncated: {
      ...(stdout.truncated ? { stdout: true as const } : {}),
      ...(stderr.truncated ? { stderr: true as const } : {}),
    },
  });
  return { ended, pending, result };
}

/** Resolves with how the command ended: its stream or inspect (rule 108), timeout or abort. */
async function waitForEnd(
  exec: Docker.Exec,
  streamEnded: Promise<void>,
  o: {
    clock: Clock;
    timeoutMs?: number | undefined;
    signal?: AbortSignal | undefined;
    stop: AbortSignal;
  },
): Promise<"exit" | "timeout" | "abort"> {
  let timer: unknown;
  let abortListener: Disposable | undefined;
  const limits = new Promise<"timeout" | "abort">((resolve) => {
    if (o.timeoutMs !== undefined) {
      timer = o.clock.setTimeout(() => resolve("timeout"), o.timeoutMs);
    }
    abortListener = onAbort(o.signal, () => resolve("abort"));
  });
  const polled = (async (): Promise<"exit"> => {
    while (!o.stop.aborted) {
      await sleep(o.clock, INSPECT_POLL_MS, { signal: o.stop }).catch(() => undefined);
      if (o.stop.aborted) break;
      const info = await exec.inspect().catch(() => undefined);
      if (info !== undefined && !info.Running) {
        // Give frames still in flight a moment before the stream is torn down.
        await Promise.race([streamEnded, sleep(o.clock, TRAILING_FRAMES_MS)]);
        return "exit";
      }
    }
    return "exit";
  })();
  // A stream can end before the process does (it closed its output): inspect decides.
  const byStream = streamEnded.then(async (): Promise<"exit"> => {
    const since = o.clock.now();
    while (!o.stop.aborted) {
      const info = await exec.inspect().catch(() => undefined);
      if (info !== undefined && !info.Running) return "exit";
      const wait = o.clock.now() - since < EXIT_CODE_WAIT_MS ? EXIT_CODE_POLL_MS : INSPECT_POLL_MS;
      await sleep(o.clock, wait, { signal: o.stop }).catch(() => undefined);
    }
    return "exit";
  });
  try {
    return await Promise.race([byStream, polled, limits]);
  } finally {
    if (timer !== undefined) o.clock.clearTimeout(timer as never);
    abortListener?.[Symbol.dispose]();
  }
}

/**
 * The exit code once inspect publishes it; `undefined` when it is still missing after
 * EXIT_CODE_WAIT_MS (the process was seen gone, so this only guards a daemon that never says).
 */
async function exitCodeOf(exec: Docker.Exec, clock: Clock): Promise<number | undefined> {
  const deadline = clock.now() + EXIT_CODE_WAIT_MS;
  for (;;) {
    const info = await exec.inspect();
    if (!info.Running && typeof info.ExitCode === "number") return info.ExitCode;
    if (clock.now() >= deadline) return undefined;
    await sleep(clock, EXIT_CODE_POLL_MS);
  }
}

/**
 * Kills the process group recorded in `pgidFile` as root and confirms within 2 s that no member
 * is left (rule 109). Resolves false when that cannot be shown.
 */
async function killGroup(
  target: ExecTarget,
  exec: Docker.Exec,
  pgidFile: string,
): Promise<boolean> {
  const { clock } = target;
  const deadline = clock.now() + TREE_KILL_CONFIRM_MS;
  const control = (argv: string[]) =>
    execCollect(target, { argv, user: "root" }).catch(() => undefined);
  let pgid: number | undefined;
  while (clock.now() < deadline) {
    const read = await control(["cat", pgidFile]);
    const text = read?.exitCode === 0 ? new TextDecoder().decode(read.stdout).trim() : "";
    if (/^\d+$/.test(text)) {
      pgid = Number(text);
      break;
    }
    // The wrapper has not written its group yet; the command may also be gone already.
    const info = await exec.inspect().catch(() => undefined);
    if (info !== undefined && !info.Running) return true;
    await sleep(clock, KILL_POLL_MS);
  }
  if (pgid === undefined || pgid <= 1) return false;
  while (clock.now() < deadline) {
    await control(["kill", "-KILL", `-${pgid}`]);
    const probe = await control(["kill", "-0", `-${pgid}`]);
    if (probe !== undefined && probe.exitCode !== 0) return true;
    await sleep(clock, KILL_POLL_MS);
  }
  return false;
}
