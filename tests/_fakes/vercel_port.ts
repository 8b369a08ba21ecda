/**
 * An in-memory {@link VercelPort} (sandboxes.md rule 143): sandboxes with tags, a session expiry,
 * files and a scriptable command runner. Instances returned by `create` and `get` hold the expiry
 * read at that moment, like the SDK's objects, so only a new `get` sees an extension. Errors carry
 * their HTTP status on `response.status`, the SDK's API-error shape.
 */
import { posix } from "node:path";
import type { Clock } from "../../src/_shared/clock.ts";
import type { OwnerStamp, SandboxDiagnostic, SandboxProvider } from "../../src/sandbox/mod.ts";
import {
  createVercelProvider,
  type VercelCreateParams,
  type VercelFinishedCommand,
  type VercelHandle,
  type VercelInstance,
  type VercelPlan,
  type VercelPort,
  type VercelRunParams,
  type VercelSpec,
  type VercelSummary,
} from "../../src/sandbox/providers/vercel.ts";
import { createFakeClock, type FakeClock } from "./clock.ts";

/** An error shaped like the SDK's `APIError`. */
export function vercelApiError(status: number, message = `HTTP ${status}`): Error {
  return Object.assign(new Error(message), {
    name: "APIError",
    response: new Response(null, { status }),
  });
}

/** What a scripted command answers. */
export interface FakeCommandResult {
  readonly exitCode: number;
  readonly stdout?: string;
  readonly stderr?: string;
}

/**
 * Answers one command, or returns undefined to leave it to the built-in answers: the shell probe
 * prints `bash`, `test -e`/`test -d` look at the fake's files, anything else exits 0.
 */
export type FakeCommandRunner = (
  params: VercelRunParams,
  sandbox: FakeVercelSandbox,
) => FakeCommandResult | undefined | Promise<FakeCommandResult>;

/** One sandbox held by the fake. */
export interface FakeVercelSandbox {
  readonly name: string;
  readonly params: VercelCreateParams;
  readonly tags: Record<string, string>;
  status: string;
  readonly createdAt: number;
  /** Epoch ms when the session times out. */
  expiresAt: number;
  readonly files: Map<string, { data: Uint8Array; mode: number | undefined }>;
  readonly dirs: Set<string>;
}

/** One call made through the port, in order. */
export type FakeVercelCall =
  | { readonly op: "create"; readonly name: string }
  | { readonly op: "get"; readonly name: string }
  | { readonly op: "delete"; readonly name: string }
  | { readonly op: "list"; readonly tag?: readonly [string, string]; readonly namePrefix?: string }
  | { readonly op: "runCommand"; readonly name: string; readonly params: VercelRunParams }
  | { readonly op: "writeFiles"; readonly name: string; readonly paths: readonly string[] }
  | { readonly op: "readFileToBuffer"; readonly name: string; readonly path: string }
  | { readonly op: "extendTimeout"; readonly name: string; readonly durationMs: number };

/** The fake port plus what tests inspect and script. */
export interface FakeVercelPort extends VercelPort {
  readonly sandboxes: Map<string, FakeVercelSandbox>;
  readonly calls: FakeVercelCall[];
  /** Errors the next `create` calls reject with, in order (after the sandbox was made if `made`). */
  readonly createFailures: { error: unknown; made?: boolean }[];
  /** Answers commands before the built-in answers. */
  runner: FakeCommandRunner | undefined;
  /** The longest session the account allows from creation; longer extensions are refused. */
  maxSessionMs: number;
  /** Adds a sandbox made outside this process (for findOwned and destroyDetached). */
  seed(name: string, tags: Record<string, string>, o?: { status?: string }): FakeVercelSandbox;
}

const SHELL_PROBE_REGEXP = /^if \[ -x \/bin\/bash \]/;

/** Creates an empty fake port over `clock`. */
export function createFakeVercelPort(clock: Clock): FakeVercelPort {
  const sandboxes = new Map<string, FakeVercelSandbox>();
  const calls: FakeVercelCall[] = [];
  const createFailures: { error: unknown; made?: boolean }[] = [];
  const lookup = (name: string) => {
    const found = sandboxes.get(name);
    if (found === undefined) throw vercelApiError(404, `Sandbox "${name}" not found`);
    return found;
  };
  const make = (params: VercelCreateParams): FakeVercelSandbox => {
    const sandbox: FakeVercelSandbox = {
      name: params.name,
      params,
      tags: { ...params.tags },
      status: "running",
      createdAt: clock.now(),
      expiresAt: clock.now() + params.timeout,
      files: new Map(),
      dirs: new Set(["/", "/vercel", "/vercel/sandbox"]),
    };
    sandboxes.set(params.name, sandbox);
    return sandbox;
  };
  const port: FakeVercelPort = {
    sandboxes,
    calls,
    createFailures,
    runner: undefined,
    maxSessionMs: 5 * 3_600_000,
    seed: (name, tags, o = {}) => {
      const sandbox = make({
        name,
        source: { type: "runtime", runtime: "node24" },
        timeout: 2_700_000,
        tags,
        signal: new AbortController().signal,
      });
      sandbox.status = o.status ?? "running";
      return sandbox;
    },
    create: (params) => {
      calls.push({ op: "create", name: params.name });
      params.signal.throwIfAborted();
      const failure = createFailures.shift();
      if (failure !== undefined) {
        if (failure.made) make(params);
        return Promise.reject(failure.error);
      }
      return Promise.resolve(instanceOf(make(params)));
    },
    get: (name, o) => {
      calls.push({ op: "get", name });
      o.signal?.throwIfAborted();
      return Promise.resolve().then(() => instanceOf(lookup(name)));
    },
    list: (query, o) => {
      calls.push({ op: "list", ...query });
      o.signal.throwIfAborted();
      const matching: VercelSummary[] = [...sandboxes.values()]
        .filter((s) => query.tag === undefined ? true : s.tags[query.tag[0]] === query.tag[1])
        .filter((s) => query.namePrefix === undefined || s.name.startsWith(query.namePrefix))
        .map((s) => ({ name: s.name, status: s.status, createdAt: s.createdAt, tags: s.tags }));
      return (async function* () {
        yield* matching;
      })();
    },
  };

  function instanceOf(sandbox: FakeVercelSandbox): VercelInstance {
    const { name } = sandbox;
    const expiresAt = new Date(sandbox.expiresAt);
    return {
      name,
      expiresAt,
      runCommand: async (params) => {
        calls.push({ op: "runCommand", name, params });
        const live = lookup(name);
        const result = await runCommand(params, live);
        return finished(result);
      },
      writeFiles: (files, o) => {
        calls.push({ op: "writeFiles", name, paths: files.map((f) => f.path) });
        o.signal?.throwIfAborted();
        const live = lookup(name);
        for (const f of files) {
          live.files.set(f.path, { data: f.content, mode: f.mode });
          for (let d = posix.dirname(f.path); d !== "/"; d = posix.dirname(d)) live.dirs.add(d);
        }
        return Promise.resolve();
      },
      readFileToBuffer: (file, o) => {
        calls.push({ op: "readFileToBuffer", name, path: file.path });
        o.signal?.throwIfAborted();
        return Promise.resolve(lookup(name).files.get(file.path)?.data ?? null);
      },
      extendTimeout: (durationMs, o) => {
        calls.push({ op: "extendTimeout", name, durationMs });
        o.signal?.throwIfAborted();
        const live = lookup(name);
        const wanted = live.expiresAt + durationMs;
        if (wanted - live.createdAt > port.maxSessionMs) {
          return Promise.reject(
            vercelApiError(400, "Timeout exceeds the maximum session duration of your plan"),
          );
        }
        live.expiresAt = wanted;
        return Promise.resolve();
      },
      delete: (o) => {
        calls.push({ op: "delete", name });
        o.signal?.throwIfAborted();
        lookup(name);
        sandboxes.delete(name);
        return Promise.resolve();
      },
    };
  }

  async function runCommand(
    params: VercelRunParams,
    sandbox: FakeVercelSandbox,
  ): Promise<FakeCommandResult> {
    const scripted = await port.runner?.(params, sandbox);
    if (scripted !== undefined) return scripted;
    const [flag, path] = params.args;
    if (params.cmd === "sh" && SHELL_PROBE_REGEXP.test(params.args[1] ?? "")) {
      return { exitCode: 0, stdout: "bash\n" };
    }
    if (params.cmd === "test" && (flag === "-e" || flag === "-d") && path !== undefined) {
      const exists = sandbox.dirs.has(path) || (flag === "-e" && sandbox.files.has(path));
      return { exitCode: exists ? 0 : 1 };
    }
    return { exitCode: 0 };
  }

  return port;
}

function finished(result: FakeCommandResult): VercelFinishedCommand {
  return {
    exitCode: result.exitCode,
    stdout: () => Promise.resolve(result.stdout ?? ""),
    stderr: () => Promise.resolve(result.stderr ?? ""),
  };
}

/** The provision token every {@link newVercelBed} create uses. */
export const TOKEN = "0123456789abcdef0123456789abcdef";
/** The owner stamp every {@link newVercelBed} create uses. */
export const OWNER: OwnerStamp = {
  host: "test-host",
  pid: 4242,
  processStart: "2026-11-29T09:00:00Z",
  runId: "run-test",
  provisionToken: TOKEN,
};

/** A vercel provider over a fresh fake port and fake clock, plus what its creates reported. */
export interface VercelBed {
  readonly clock: FakeClock;
  readonly port: FakeVercelPort;
  readonly provider: SandboxProvider<VercelSpec, VercelPlan>;
  readonly diagnostics: SandboxDiagnostic[];
  create(
    plan: VercelPlan,
    o?: { lifetimeMs?: number; signal?: AbortSignal },
  ): Promise<VercelHandle>;
}

/** Creates a {@link VercelBed}. */
export function newVercelBed(): VercelBed {
  const clock = createFakeClock();
  const port = createFakeVercelPort(clock);
  const provider = createVercelProvider({ hostEnv: {}, clock, port });
  const diagnostics: SandboxDiagnostic[] = [];
  return {
    clock,
    port,
    provider,
    diagnostics,
    create: async (plan, o = {}) =>
      await provider.create(plan, {
        owner: OWNER,
        lifetimeMs: o.lifetimeMs ?? 2_700_000,
        signal: o.signal ?? new AbortController().signal,
        progress: () => {},
        diagnostic: (d) => diagnostics.push(d),
      }) as VercelHandle,
  };
}
