/**
 * envd's `process.Process` service backed by real host subprocesses. `Start` is a server stream:
 * a `start` event with the pid, `data` events with stdout/stderr chunks as they arrive, an `end`
 * event once the process has exited and both output pipes are drained (as envd waits for its
 * output readers), then the end-of-stream frame. A client that disconnects stops receiving
 * events; the process keeps running, as in envd. `SendInput`, `CloseStdin`, `SendSignal` and
 * `List` are unary calls addressing a process by pid (or tag).
 */
import type { SandboxProcess, SandboxRecord } from "./state.ts";
import {
  ConnectFault,
  decodeBytes,
  encodeBytes,
  endStreamFrame,
  messageFrame,
  parseRequestEnvelope,
  STREAM_JSON,
  userOf,
} from "./connect.ts";

/** `ProcessConfig` of a `StartRequest`, in protobuf JSON. */
interface ProcessConfig {
  readonly cmd?: string;
  readonly args?: string[];
  readonly envs?: Record<string, string>;
  readonly cwd?: string;
}

/** The PATH of a fresh sandbox user. */
const SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** Go's `ProcessState.String()` names of the signals a test meets. */
const SIGNAL_TEXT: Partial<Record<string, string>> = {
  SIGKILL: "killed",
  SIGTERM: "terminated",
  SIGINT: "interrupt",
  SIGHUP: "hangup",
  SIGPIPE: "broken pipe",
};

class RunningProcess implements SandboxProcess {
  stdin: WritableStreamDefaultWriter<Uint8Array> | undefined;
  done: Promise<void> = Promise.resolve();

  constructor(
    readonly child: Deno.ChildProcess,
    readonly config: ProcessConfig,
    readonly tag: string | undefined,
  ) {
    this.stdin = undefined;
  }

  get pid(): number {
    return this.child.pid;
  }

  kill(signal: Deno.Signal): void {
    try {
      this.child.kill(signal);
    } catch {
      // Already exited: nothing to signal.
    }
  }
}

/**
 * envd's end event: Go's `ProcessState` (exit code -1 after a signal, `String()` as status) plus
 * `cmd.Wait()`'s error text, which is the same string for a non-zero exit or a signal.
 */
function endEvent(status: Deno.CommandStatus): Record<string, unknown> {
  if (status.signal !== null) {
    const text = `signal: ${SIGNAL_TEXT[status.signal] ?? status.signal.toLowerCase()}`;
    return { exitCode: -1, status: text, error: text };
  }
  // Protobuf JSON leaves out zero values: exit code 0 is an absent `exitCode`.
  if (status.code === 0) return { exited: true, status: "exit status 0" };
  const text = `exit status ${status.code}`;
  return { exitCode: status.code, exited: true, status: text, error: text };
}

async function spawn(record: SandboxRecord, user: string, config: ProcessConfig, stdin: boolean) {
  const { paths } = record;
  const home = paths.resolve(paths.home(user), user).host;
  const cwd = paths.resolve(config.cwd || paths.home(user), user);
  const stat = await Deno.stat(cwd.host).catch(() => undefined);
  if (stat?.isDirectory !== true) {
    throw new ConnectFault("invalid_argument", `cwd '${cwd.sandbox}' does not exist`);
  }
  const rewrite = (env: Readonly<Record<string, string>>) =>
    Object.fromEntries(Object.entries(env).map(([k, v]) => [k, paths.rewrite(v)]));
  const [markerName, markerValue] = record.marker.split("=") as [string, string];
  const env = {
    PATH: SANDBOX_PATH,
    HOME: home,
    USER: user,
    LOGNAME: user,
    TMPDIR: paths.resolve("/tmp", user).host,
    E2B_SANDBOX: "true",
    E2B_SANDBOX_ID: record.id,
    ...rewrite(record.envVars),
    ...rewrite(config.envs ?? {}),
    [markerName]: markerValue,
  };
  try {
    return new Deno.Command(paths.rewrite(config.cmd ?? "/bin/bash"), {
      args: (config.args ?? []).map((a) => paths.rewrite(a)),
      cwd: cwd.host,
      env,
      clearEnv: true,
      stdin: stdin ? "piped" : "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (e) {
    throw new ConnectFault("internal", `error starting process: ${(e as Error).message}`);
  }
}

/** Answers `process.Process/Start`: spawns the process and streams its events. */
export async function startProcess(req: Request, record: SandboxRecord): Promise<Response> {
  const headers = { "content-type": STREAM_JSON };
  const fail = (fault: ConnectFault) => new Response(endStreamFrame(fault), { headers });
  let proc: RunningProcess;
  try {
    const message = parseRequestEnvelope(new Uint8Array(await req.arrayBuffer())) as {
      process?: ProcessConfig;
      pty?: unknown;
      tag?: string;
      stdin?: boolean;
    };
    if (message.pty !== undefined) throw new ConnectFault("unimplemented", "pty is not faked");
    const config = message.process ?? {};
    const child = await spawn(record, userOf(req), config, message.stdin === true);
    proc = new RunningProcess(child, config, message.tag);
    if (message.stdin === true) proc.stdin = child.stdin.getWriter();
  } catch (e) {
    if (e instanceof ConnectFault) return fail(e);
    throw e;
  }
  record.processes.set(proc.pid, proc);

  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let open = true;
  const send = (chunk: Uint8Array, last = false) => {
    if (!open) return;
    controller.enqueue(chunk);
    if (last) {
      open = false;
      controller.close();
    }
  };
  const body = new ReadableStream<Uint8Array>({
    start: (c) => void (controller = c),
    cancel: () => void (open = false),
  });
  send(messageFrame({ event: { start: { pid: proc.pid } } }));
  const pump = async (stream: ReadableStream<Uint8Array>, name: "stdout" | "stderr") => {
    for await (const chunk of stream) {
      send(messageFrame({ event: { data: { [name]: encodeBytes(chunk) } } }));
    }
  };
  // Connect-Timeout-Ms bounds the call; the fake then ends the stream and kills the process.
  const timeoutMs = Number(req.headers.get("connect-timeout-ms") ?? NaN);
  const timer = Number.isFinite(timeoutMs) && timeoutMs > 0
    ? setTimeout(() => {
      send(
        endStreamFrame(new ConnectFault("deadline_exceeded", "context deadline exceeded")),
        true,
      );
      proc.kill("SIGKILL");
    }, timeoutMs)
    : undefined;
  proc.done = (async () => {
    const [status] = await Promise.all([
      proc.child.status,
      pump(proc.child.stdout, "stdout"),
      pump(proc.child.stderr, "stderr"),
    ]);
    clearTimeout(timer);
    record.processes.delete(proc.pid);
    await proc.stdin?.close().catch(() => undefined);
    send(messageFrame({ event: { end: endEvent(status) } }));
    send(endStreamFrame(), true);
  })();
  return new Response(body, { headers });
}

function findProcess(record: SandboxRecord, selector: unknown): RunningProcess {
  const { pid, tag } = (selector ?? {}) as { pid?: number; tag?: string };
  for (const p of record.processes.values()) {
    const proc = p as RunningProcess;
    if ((pid !== undefined && proc.pid === pid) || (tag !== undefined && proc.tag === tag)) {
      return proc;
    }
  }
  throw new ConnectFault("not_found", `process with ${pid ?? `tag ${tag}`} not found`);
}

const SIGNALS: Record<string, Deno.Signal> = {
  SIGNAL_SIGKILL: "SIGKILL",
  SIGNAL_SIGTERM: "SIGTERM",
  "9": "SIGKILL",
  "15": "SIGTERM",
};

/** Answers a unary `process.Process` call. */
export async function processUnary(
  method: string,
  message: Record<string, unknown>,
  record: SandboxRecord,
): Promise<unknown> {
  switch (method) {
    case "SendInput": {
      const proc = findProcess(record, message.process);
      const input = (message.input ?? {}) as { stdin?: string; pty?: string };
      if (input.pty !== undefined) throw new ConnectFault("unimplemented", "pty is not faked");
      if (proc.stdin === undefined) throw new ConnectFault("failed_precondition", "stdin closed");
      await proc.stdin.write(decodeBytes(input.stdin)).catch((e: Error) => {
        throw new ConnectFault("failed_precondition", `error writing stdin: ${e.message}`);
      });
      return {};
    }
    case "CloseStdin": {
      const proc = findProcess(record, message.process);
      const writer = proc.stdin;
      proc.stdin = undefined;
      await writer?.close().catch(() => undefined);
      return {};
    }
    case "SendSignal": {
      const proc = findProcess(record, message.process);
      const signal = SIGNALS[String(message.signal)];
      if (signal === undefined) {
        throw new ConnectFault("invalid_argument", `invalid signal ${message.signal}`);
      }
      proc.kill(signal);
      return {};
    }
    case "List":
      return {
        processes: [...record.processes.values()].map((p) => {
          const proc = p as RunningProcess;
          return { config: proc.config, pid: proc.pid, ...(proc.tag ? { tag: proc.tag } : {}) };
        }),
      };
    default:
      throw new ConnectFault("unimplemented", `process.Process/${method} is not faked`);
  }
}
