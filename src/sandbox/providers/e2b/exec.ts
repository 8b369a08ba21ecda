/**
 * One wrapped command in an E2B sandbox (sandboxes.md rules 123–124): a single background
 * `run` whose control frames are stripped from the output; the exit frame ends the command (the
 * process is then disconnected, so background children holding the pipes cannot keep it open).
 * On timeout or abort the command's process group is killed through a second command as root and
 * its death confirmed within 2 s; when that cannot be shown the caller retires the sandbox.
 */
import { type Clock, onAbort, sleep } from "../../../_shared/mod.ts";
import type { OutputChunk } from "../../types.ts";
import { TailBuffer } from "../_tail.ts";
import { FrameParser, FrameProtocolError, wrapCommand } from "./frames.ts";
import type { E2BInstance, E2BProcess } from "./port.ts";

/** How long a killed group may take to die before the sandbox is retired (rule 124 → 109). */
const TREE_KILL_CONFIRM_MS = 2_000;
const KILL_POLL_MS = 50;

/** What one wrapped command runs. */
export interface E2BExecRequest {
  /** The shell command line (argv already quoted). */
  readonly command: string;
  readonly marker: string;
  readonly user: string;
  readonly cwd: string;
  readonly env?: Readonly<Record<string, string>> | undefined;
  readonly stdin?: Uint8Array | undefined;
  readonly timeoutMs?: number | undefined;
  readonly signal?: AbortSignal | undefined;
  /** Serialized by the caller (rule 16). */
  readonly onOutput?: ((chunk: OutputChunk) => Promise<void>) | undefined;
}

/** How a wrapped command ended. */
export type E2BExecOutcome =
  | {
    readonly ended: "exit";
    readonly exitCode: number;
    readonly stdout: Uint8Array;
    readonly stderr: Uint8Array;
    readonly truncated: { stdout?: true; stderr?: true };
  }
  | { readonly ended: "timeout" | "abort"; readonly confirmed: boolean }
  | { readonly ended: "broken"; readonly error: unknown };

type Stream = "stdout" | "stderr";

/** Runs one command through the wrapper; never rejects for the command's own failures. */
export async function runWrapped(
  instance: E2BInstance,
  request: E2BExecRequest,
  clock: Clock,
): Promise<E2BExecOutcome> {
  request.signal?.throwIfAborted();
  const state = new WrapperState(request);
  const proc = await instance.run(wrapCommand(request.command, request.marker), {
    cwd: request.cwd,
    user: request.user,
    ...(request.env ? { envs: request.env } : {}),
    ...(request.stdin ? { stdin: request.stdin } : {}),
    onStdout: (text) => state.feed("stdout", text),
    onStderr: (text) => state.feed("stderr", text),
  });
  const ended = proc.wait().then(
    (r) => state.streamEnded(r.exitCode),
    (error: unknown) => state.fail(error),
  );
  let timer: unknown;
  let abortListener: Disposable | undefined;
  const limits = new Promise<"timeout" | "abort">((resolve) => {
    if (request.timeoutMs !== undefined) {
      timer = clock.setTimeout(() => resolve("timeout"), request.timeoutMs);
    }
    abortListener = onAbort(request.signal, () => resolve("abort"));
    if (request.signal?.aborted) resolve("abort");
  });
  try {
    const first = await Promise.race([state.done, limits]);
    if (first === "exit") {
      await proc.disconnect().catch(() => undefined); // the exit frame already holds the result
      await Promise.all(state.pending);
      return state.result();
    }
    if (first === "broken") {
      await proc.disconnect().catch(() => undefined); // the sandbox is retired by the caller
      return { ended: "broken", error: state.error };
    }
    const confirmed = await killGroup(instance, state, clock);
    await proc.kill().catch(() => false); // the wrapper itself; the group is what counted
    await proc.disconnect().catch(() => undefined);
    return { ended: first, confirmed };
  } finally {
    if (timer !== undefined) clock.clearTimeout(timer as never);
    abortListener?.[Symbol.dispose]();
    void ended;
    await Promise.allSettled(state.pending);
  }
}

/** Parses both streams and tracks the frames of one command. */
class WrapperState {
  readonly pending: Promise<void>[] = [];
  readonly done: Promise<"exit" | "broken">;
  error: unknown;
  pgid: number | undefined;
  readonly pgidKnown: Promise<void>;
  readonly #request: E2BExecRequest;
  readonly #parsers: Record<Stream, FrameParser>;
  readonly #tails: Record<Stream, TailBuffer> = {
    stdout: new TailBuffer(),
    stderr: new TailBuffer(),
  };
  readonly #exit: Record<Stream, number | undefined> = { stdout: undefined, stderr: undefined };
  readonly #encoder = new TextEncoder();
  #settle!: (how: "exit" | "broken") => void;
  #pgidSeen!: () => void;
  #settled = false;

  constructor(request: E2BExecRequest) {
    this.#request = request;
    this.#parsers = {
      stdout: new FrameParser(request.marker),
      stderr: new FrameParser(request.marker),
    };
    this.done = new Promise((resolve) => this.#settle = resolve);
    this.pgidKnown = new Promise((resolve) => this.#pgidSeen = resolve);
  }

  get exited(): boolean {
    return this.#exit.stdout !== undefined || this.#exit.stderr !== undefined;
  }

  feed(stream: Stream, text: string): void {
    if (this.#settled || this.#exit[stream] !== undefined) return; // after the frame: leftovers
    try {
      for (const event of this.#parsers[stream].feed(text)) this.#apply(stream, event);
    } catch (error) {
      this.fail(error);
    }
  }

  /** The event stream ended, with the wrapper's own exit code when the SDK reported one. */
  streamEnded(_exitCode: number | undefined): void {
    if (this.#settled) return;
    try {
      for (const stream of ["stdout", "stderr"] as const) {
        if (this.#exit[stream] !== undefined) continue;
        for (const event of this.#parsers[stream].end()) this.#apply(stream, event);
      }
    } catch (error) {
      this.fail(error);
      return;
    }
    if (this.exited) this.#finish("exit");
    else {
      this.fail(new FrameProtocolError("Cannot read the command's exit status: no exit frame"));
    }
  }

  fail(error: unknown): void {
    if (this.#settled) return;
    this.error = error;
    this.#finish("broken");
  }

  result(): E2BExecOutcome {
    const exitCode = this.#exit.stdout ?? this.#exit.stderr!;
    const { stdout, stderr } = this.#tails;
    return {
      ended: "exit",
      exitCode,
      stdout: stdout.bytes(),
      stderr: stderr.bytes(),
      truncated: {
        ...(stdout.truncated ? { stdout: true as const } : {}),
        ...(stderr.truncated ? { stderr: true as const } : {}),
      },
    };
  }

  #apply(stream: Stream, event: ReturnType<FrameParser["feed"]>[number]): void {
    if (this.#exit[stream] !== undefined) return;
    if (event.kind === "data") {
      const data = this.#encoder.encode(event.text);
      this.#tails[stream].push(data);
      const onOutput = this.#request.onOutput;
      if (onOutput) this.pending.push(onOutput({ stream, data }));
      return;
    }
    if (event.kind === "pgid") {
      if (stream !== "stdout" || this.pgid !== undefined || event.value <= 1) {
        throw new FrameProtocolError(`Cannot accept a pgid frame on ${stream}`);
      }
      this.pgid = event.value;
      this.#pgidSeen();
      return;
    }
    this.#exit[stream] = event.value;
    if (this.#exit.stdout !== undefined && this.#exit.stderr !== undefined) this.#finish("exit");
  }

  #finish(how: "exit" | "broken"): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#settle(how);
  }
}

/**
 * Kills the command's process group as root and confirms within 2 s that no member is left
 * (rule 124). Resolves false when that cannot be shown.
 */
async function killGroup(
  instance: E2BInstance,
  state: WrapperState,
  clock: Clock,
): Promise<boolean> {
  const deadline = clock.now() + TREE_KILL_CONFIRM_MS;
  if (state.pgid === undefined) {
    // The pgid frame may still be on its way; the command may also have ended meanwhile.
    const stop = new AbortController();
    const late = sleep(clock, TREE_KILL_CONFIRM_MS, { signal: stop.signal }).catch(() => undefined);
    await Promise.race([state.pgidKnown, state.done, late]).finally(() => stop.abort());
  }
  if (state.exited) return true;
  const pgid = state.pgid;
  if (pgid === undefined) return false;
  while (clock.now() < deadline) {
    await control(instance, `kill -KILL -${pgid}`, clock, deadline);
    const probe = await control(instance, `kill -0 -${pgid} 2>/dev/null`, clock, deadline);
    if (probe !== undefined && probe !== 0) return true;
    if (clock.now() >= deadline) break;
    await sleep(clock, KILL_POLL_MS);
  }
  return false;
}

/** Runs a short command as root; its exit code, or undefined when it failed or ran past deadline. */
async function control(
  instance: E2BInstance,
  cmd: string,
  clock: Clock,
  deadline: number,
): Promise<number | undefined> {
  let proc: E2BProcess;
  try {
    proc = await instance.run(cmd, { user: "root", cwd: "/" });
  } catch {
    return undefined; // counted as "not shown"; the caller retires the sandbox
  }
  let timer: unknown;
  const late = new Promise<undefined>((resolve) => {
    timer = clock.setTimeout(() => resolve(undefined), Math.max(0, deadline - clock.now()));
  });
  try {
    const r = await Promise.race([proc.wait().catch(() => undefined), late]);
    if (r === undefined) await proc.disconnect().catch(() => undefined);
    return r?.exitCode;
  } finally {
    clock.clearTimeout(timer as never);
  }
}

/** Runs a short command without the wrapper and collects its stdout (create-time probes). */
export async function runCollect(
  instance: E2BInstance,
  cmd: string,
  o: { user: string; cwd?: string },
): Promise<{ exitCode: number | undefined; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const proc = await instance.run(cmd, {
    user: o.user,
    cwd: o.cwd ?? "/",
    onStdout: (text) => void (stdout += text),
    onStderr: (text) => void (stderr += text),
  });
  const { exitCode } = await proc.wait();
  return { exitCode, stdout, stderr };
}
