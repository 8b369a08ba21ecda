/**
 * A fake {@link SandboxProvider} with in-memory handles, for pool, create-retry, attempt and
 * scheduler tests. Creates take `createLatencyMs` on the injected clock and can fail by script; an
 * `ambiguous` failure may leave an instance behind, stamped with the try's provision token, which
 * `findOwned` and `destroyDetached` see like a real backend would.
 */
import { posix } from "node:path";
import { type Clock, sleep } from "../../src/_shared/clock.ts";
import {
  type CreateContext,
  type CreateErrorClass,
  type ExecCommand,
  type ExecOptions,
  type ExecResult,
  type Lifetime,
  type OwnedInstance,
  type OwnerStamp,
  type ProviderScheduling,
  type SandboxCapabilities,
  SandboxFileNotFoundError,
  type SandboxHandle,
  SandboxPathError,
  type SandboxProvider,
  SandboxRetiredError,
} from "../../src/sandbox/mod.ts";

/** One scripted create failure. */
export interface FakeFailure {
  readonly class: CreateErrorClass;
  /** The instance exists although the create call failed (an ambiguous failure). */
  readonly leak?: boolean;
  readonly message?: string;
}

/** Answers one exec of a fake handle. */
export type FakeExec = (
  command: ExecCommand,
  options: ExecOptions,
  handle: FakeHandle,
) => Partial<ExecResult> | Promise<Partial<ExecResult>>;

/** Options of {@link createFakeProvider}. */
export interface FakeProviderOptions {
  readonly clock: Clock;
  readonly name?: string;
  readonly scheduling?: Partial<ProviderScheduling>;
  /** Time each create takes on the clock. @default {0} */
  readonly createLatencyMs?: number;
  /** Failures of the first tries, in order; later tries succeed. */
  readonly failures?: readonly (FakeFailure | CreateErrorClass)[];
  /** Offer `findOwned`/`destroyDetached`. @default {true} */
  readonly reconcile?: boolean;
  /** `findOwned` rejects. */
  readonly findOwnedFails?: boolean;
  readonly exec?: FakeExec;
  /** `false` removes `ensureLifetime` from handles. @default {() => ({ ready: true })} */
  readonly ensureLifetime?: ((minRemainingMs: number, handle: FakeHandle) => Lifetime) | false;
  /** `stop` rejects with this message. */
  readonly stopError?: string;
  readonly capabilities?: Partial<SandboxCapabilities>;
}

/** The error a scripted failure throws. */
export class FakeCreateError extends Error {
  constructor(readonly cls: CreateErrorClass, message: string) {
    super(message);
    this.name = "FakeCreateError";
  }
}

/** A fake handle: files in a map, execs answered by the provider's `exec`. */
export interface FakeHandle extends SandboxHandle {
  readonly files: Map<string, Uint8Array>;
  readonly execs: { command: ExecCommand; options: ExecOptions }[];
  readonly owner: OwnerStamp;
  readonly stopped: boolean;
  readonly stopCalls: number;
}

/** A fake provider and what happened to it. */
export interface FakeProvider extends SandboxProvider<unknown, string> {
  readonly handles: FakeHandle[];
  /** Provision tokens of every create try, in order. */
  readonly tries: string[];
  /** Clock time of every create try, in order. */
  readonly triedAt: number[];
  /** Instances the backend holds (created, leaked, not destroyed). */
  readonly backend: Map<string, OwnerStamp>;
  readonly findOwnedCalls: Partial<OwnerStamp>[];
  readonly destroyed: string[];
}

/** Creates a fake provider. */
export function createFakeProvider(o: FakeProviderOptions): FakeProvider {
  const name = o.name ?? "fake";
  const failures = [...(o.failures ?? [])].map((f) => typeof f === "string" ? { class: f } : f);
  const handles: FakeHandle[] = [];
  const tries: string[] = [];
  const triedAt: number[] = [];
  const backend = new Map<string, OwnerStamp>();
  const findOwnedCalls: Partial<OwnerStamp>[] = [];
  const destroyed: string[] = [];
  let next = 0;
  const provider: FakeProvider = {
    name,
    scheduling: { recommendedConcurrency: 5, admission: "shared", laneKey: name, ...o.scheduling },
    handles,
    tries,
    triedAt,
    backend,
    findOwnedCalls,
    destroyed,
    plan: () => Promise.resolve({ plan: "fake-plan", identity: "fake-identity", buildKeys: [] }),
    create: async (_plan: string, ctx: CreateContext) => {
      tries.push(ctx.owner.provisionToken);
      triedAt.push(o.clock.now());
      if (o.createLatencyMs) await sleep(o.clock, o.createLatencyMs, { signal: ctx.signal });
      ctx.signal.throwIfAborted();
      const id = `${name}-${++next}`;
      const failure = failures.shift();
      if (failure) {
        if (failure.leak) backend.set(id, ctx.owner);
        throw new FakeCreateError(failure.class, failure.message ?? `fake ${failure.class}`);
      }
      backend.set(id, ctx.owner);
      const handle = fakeHandle(o, name, id, ctx.owner, () => backend.delete(id));
      handles.push(handle);
      return handle;
    },
    classifyCreateError: (error) => error instanceof FakeCreateError ? error.cls : "fatal",
  };
  if (o.reconcile ?? true) {
    provider.findOwned = (filter) => {
      findOwnedCalls.push(filter);
      if (o.findOwnedFails) return Promise.reject(new Error("list failed"));
      const found: OwnedInstance[] = [...backend].filter(([, owner]) =>
        Object.entries(filter).every(([k, v]) => owner[k as keyof OwnerStamp] === v)
      ).map(([id, owner]) => ({ id, owner, state: "running" }));
      return Promise.resolve(found);
    };
    provider.destroyDetached = (id) => {
      destroyed.push(id);
      return Promise.resolve(backend.delete(id) ? "destroyed" : "already-gone");
    };
  }
  return provider;
}

function fakeHandle(
  o: FakeProviderOptions,
  provider: string,
  id: string,
  owner: OwnerStamp,
  onStop: () => void,
): FakeHandle {
  const workdir = "/workspace";
  const files = new Map<string, Uint8Array>();
  const execs: { command: ExecCommand; options: ExecOptions }[] = [];
  let stopped = false;
  let stopCalls = 0;
  const live = () => {
    if (stopped) throw new SandboxRetiredError(`fake sandbox "${id}" was stopped`);
  };
  const abs = (p: string) => posix.normalize(posix.isAbsolute(p) ? p : posix.join(workdir, p));
  const handle: FakeHandle = {
    id,
    provider,
    workdir,
    owner,
    files,
    execs,
    get stopped() {
      return stopped;
    },
    get stopCalls() {
      return stopCalls;
    },
    capabilities: {
      user: "any",
      rootAvailable: false,
      stdin: true,
      liveOutput: true,
      ...o.capabilities,
    },
    exec: async (command, options = {}) => {
      live();
      execs.push({ command, options });
      const r = (await o.exec?.(command, options, handle)) ?? {};
      return {
        exitCode: r.exitCode ?? 0,
        stdout: r.stdout ?? new Uint8Array(),
        stderr: r.stderr ?? new Uint8Array(),
        durationMs: r.durationMs ?? 0,
        ...(r.truncated ? { truncated: r.truncated } : {}),
      };
    },
    readFile: async (path) => {
      await Promise.resolve(live());
      const p = abs(path);
      const data = files.get(p);
      if (data) return data;
      const isDir = [...files.keys()].some((k) => k.startsWith(p + "/"));
      throw isDir
        ? new SandboxPathError(p, `"${p}" is a directory`)
        : new SandboxFileNotFoundError(p, `no such file "${p}"`);
    },
    writeFile: async (path, data) => {
      await Promise.resolve(live());
      files.set(abs(path), data);
    },
    exists: async (path) => {
      await Promise.resolve(live());
      const p = abs(path);
      return files.has(p) || [...files.keys()].some((k) => k.startsWith(p + "/"));
    },
    stop: () => {
      stopCalls++;
      if (o.stopError) return Promise.reject(new Error(o.stopError));
      stopped = true;
      onStop();
      return Promise.resolve();
    },
    [Symbol.asyncDispose]: () => handle.stop(),
  };
  if (o.ensureLifetime !== false) {
    const ensure = o.ensureLifetime ?? (() => ({ ready: true }) as Lifetime);
    handle.ensureLifetime = async (min) => {
      await Promise.resolve(live());
      return ensure(min, handle);
    };
  }
  return handle;
}
