/**
 * The facade over a {@link SandboxHandle} (sandboxes.md §2.3): one implementation for every
 * provider, built per Attempt and per pool lease, bound to that Attempt's deadline, signal and
 * evidence log. Commands live here; file operations and transfers in `_facade_files.ts`.
 */
import type { Clock, Random } from "../_shared/mod.ts";
import {
  isSandboxError,
  SandboxRetiredError,
  SandboxTimeoutError,
  SandboxUnsupportedError,
} from "./errors.ts";
import { createFileOps } from "./_facade_files.ts";
import { sandboxPath } from "./paths.ts";
import { commandError, commandSummary } from "./_summary.ts";
import type {
  CommandOptions,
  CommandResult,
  EvalSandbox,
  ExecCommand,
  ExecOptions,
  OutputChunk,
  SandboxDiagnostic,
  SandboxHandle,
} from "./types.ts";

/** One facade command as the Attempt's timeline keeps it (rule 31). */
export interface CommandEvidence {
  readonly kind: "argv" | "script";
  /** ≤ 200 characters, sensitive values replaced with `***`. */
  readonly summary: string;
  readonly exitCode?: number;
  /** Code of the error the command rejected with. */
  readonly error?: string;
  readonly durationMs: number;
  readonly phase: string;
  /** The limit passed to the provider, if any, and whether the caller gave it. */
  readonly timeoutMs?: number;
  readonly explicitTimeout?: boolean;
  /** Names of the variables set by the caller; values are never kept. */
  readonly envNames?: readonly string[];
}

/** Ends a lease: every later call on facades bound to it throws `SandboxRetiredError` (rule 80). */
export interface FacadeLease {
  readonly retired: boolean;
  retire(): void;
}

/** Creates a lease that facades can be bound to. */
export function createFacadeLease(): FacadeLease {
  let retired = false;
  return {
    get retired() {
      return retired;
    },
    retire() {
      retired = true;
    },
  };
}

/** What {@link createFacade} needs. */
export interface FacadeOptions {
  readonly handle: SandboxHandle;
  /** Probed once per physical sandbox (rule 12). */
  readonly shell: "bash" | "sh";
  readonly clock: Clock;
  readonly random: Random;
  /** The Attempt's signal. */
  readonly signal: AbortSignal;
  /** Epoch ms of the Attempt deadline; read at each command (rule 27). */
  readonly deadlineAt?: () => number | undefined;
  /** Directory for relative host paths (rule 26). */
  readonly hostDir: string;
  /** The current phase, for evidence. */
  readonly phase: () => string;
  readonly onEvidence: (e: CommandEvidence) => void;
  readonly onDiagnostic: (d: SandboxDiagnostic) => void;
  /** Redacted in every command (e.g. the agent's `passEnv` values). */
  readonly sensitiveValues?: readonly string[];
  readonly lease?: FacadeLease;
}

/** Builds the facade (`t.sandbox`, hook argument) over a handle. */
export function createFacade(o: FacadeOptions): EvalSandbox {
  const { handle } = o;
  const guard = () => {
    if (o.lease?.retired) {
      throw new SandboxRetiredError("Cannot use sandbox: its lease ended");
    }
  };
  const run = async (command: ExecCommand, c: CommandOptions = {}) => {
    guard();
    return await runCommand(o, command, c);
  };
  const orThrow = async (command: ExecCommand, c: CommandOptions = {}) => {
    const result = await run(command, c);
    if (result.exitCode !== 0) {
      throw commandError(result, { command, sensitiveValues: sensitive(o, c) });
    }
    return result as CommandResult & { exitCode: 0 };
  };
  const argv = (cmd: string, args: readonly string[] = []) => ({
    argv: [cmd, ...args] as [string, ...string[]],
  });
  return Object.freeze({
    id: handle.id,
    provider: handle.provider,
    workdir: handle.workdir,
    shell: o.shell,
    runCommand: (cmd: string, args?: readonly string[], c?: CommandOptions) =>
      run(argv(cmd, args), c),
    runShell: (script: string, c?: CommandOptions) => run({ script }, c),
    runCommandOrThrow: (cmd: string, args?: readonly string[], c?: CommandOptions) =>
      orThrow(argv(cmd, args), c),
    runShellOrThrow: (script: string, c?: CommandOptions) => orThrow({ script }, c),
    ...createFileOps({
      handle,
      clock: o.clock,
      random: o.random,
      signal: o.signal,
      hostDir: o.hostDir,
      guard,
      exec: (command, c) => run(command, c),
    }),
  });
}

/** The timeout of one command (rule 27): explicit, else the remaining Attempt time, else none. */
export function commandTimeout(
  explicitMs: number | undefined,
  options: { deadlineAt: number | undefined; now: number },
): { timeoutMs?: number; explicit: boolean } {
  const { deadlineAt, now } = options;
  if (explicitMs !== undefined) return { timeoutMs: explicitMs, explicit: true };
  if (deadlineAt !== undefined) {
    return { timeoutMs: Math.max(1, deadlineAt - now), explicit: false };
  }
  return { explicit: false };
}

function sensitive(o: FacadeOptions, c: CommandOptions): readonly string[] {
  return [...(o.sensitiveValues ?? []), ...(c.sensitiveValues ?? [])];
}

async function runCommand(
  o: FacadeOptions,
  command: ExecCommand,
  c: CommandOptions,
): Promise<CommandResult> {
  checkCapabilities(o.handle, c);
  const limit = commandTimeout(c.timeoutMs, { deadlineAt: o.deadlineAt?.(), now: o.clock.now() });
  const signal = c.signal ? AbortSignal.any([o.signal, c.signal]) : o.signal;
  const output = c.onStdout || c.onStderr ? liveOutput(o, c) : undefined;
  const options: ExecOptions = {
    signal,
    ...(c.cwd !== undefined ? { cwd: sandboxPath(o.handle.workdir, c.cwd) } : {}),
    ...(c.env !== undefined ? { env: { ...c.env } } : {}),
    ...(c.user !== undefined ? { user: c.user } : {}),
    ...(c.stdin !== undefined ? { stdin: bytesOf(c.stdin) } : {}),
    ...(limit.timeoutMs !== undefined ? { timeoutMs: limit.timeoutMs } : {}),
    ...(output ? { onOutput: output.onOutput } : {}),
  };
  const base = {
    kind: "argv" in command ? "argv" as const : "script" as const,
    summary: commandSummary(command, sensitive(o, c)),
    phase: o.phase(),
    ...(limit.timeoutMs !== undefined
      ? { timeoutMs: limit.timeoutMs, explicitTimeout: limit.explicit }
      : {}),
    ...(c.env !== undefined ? { envNames: Object.keys(c.env).sort() } : {}),
  };
  const started = o.clock.now();
  try {
    const r = await o.handle.exec(command, options);
    await output?.flush();
    const decoder = new TextDecoder();
    const result: CommandResult = {
      exitCode: r.exitCode,
      stdout: decoder.decode(r.stdout),
      stderr: decoder.decode(r.stderr),
      durationMs: r.durationMs,
      ...(r.truncated ? { truncated: { ...r.truncated } } : {}),
    };
    o.onEvidence({ ...base, exitCode: r.exitCode, durationMs: r.durationMs });
    return result;
  } catch (error) {
    const code = isSandboxError(error) ? error.code : "sandbox-exec-failed";
    o.onEvidence({ ...base, error: code, durationMs: o.clock.now() - started });
    if (code === "sandbox-command-timeout" && limit.timeoutMs !== undefined) {
      // The provider knows the limit, the facade knows whether the caller chose it.
      const what = limit.explicit ? "its timeoutMs" : "the remaining Attempt time";
      throw new SandboxTimeoutError(
        limit.timeoutMs,
        limit.explicit,
        `Command timed out after ${limit.timeoutMs} ms (${what}): ${base.summary}`,
        { cause: error },
      );
    }
    throw error;
  }
}

function checkCapabilities(handle: SandboxHandle, c: CommandOptions): void {
  const { user, stdin } = handle.capabilities;
  if (c.user !== undefined && (user === "none" || (user === "root-only" && c.user !== "root"))) {
    throw new SandboxUnsupportedError(
      "user",
      `Cannot run as user "${c.user}": the "${handle.provider}" sandbox does not support it`,
    );
  }
  if (c.stdin !== undefined && !stdin) {
    throw new SandboxUnsupportedError(
      "stdin",
      `Cannot pass stdin: the "${handle.provider}" sandbox does not support it`,
    );
  }
}

function bytesOf(data: string | Uint8Array): Uint8Array {
  return typeof data === "string" ? new TextEncoder().encode(data) : data;
}

/**
 * Streaming UTF-8 decoding of live output (rule 29). A throwing callback yields one
 * `sandbox-output-callback-failed` warning per command; the command continues (rule 16).
 */
function liveOutput(o: FacadeOptions, c: CommandOptions) {
  const decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };
  let warned = false;
  const deliver = async (stream: "stdout" | "stderr", text: string) => {
    const callback = stream === "stdout" ? c.onStdout : c.onStderr;
    if (text === "" || !callback) return;
    try {
      await callback(text);
    } catch (error) {
      if (warned) return;
      warned = true;
      o.onDiagnostic({
        code: "sandbox-output-callback-failed",
        level: "warning",
        message: `The ${stream} callback threw: ${error instanceof Error ? error.message : error}`,
      });
    }
  };
  return {
    onOutput: (chunk: OutputChunk) =>
      deliver(chunk.stream, decoders[chunk.stream].decode(chunk.data, { stream: true })),
    flush: async () => {
      await deliver("stdout", decoders.stdout.decode());
      await deliver("stderr", decoders.stderr.decode());
    },
  };
}
