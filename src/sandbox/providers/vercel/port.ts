/**
 * The narrow port between the `vercel` provider and the `@vercel/sandbox` SDK (sandboxes.md rule
 * 143): create, get, list by tag, and per instance runCommand, writeFiles, readFileToBuffer,
 * extendTimeout and delete. Each member maps one to one onto an SDK call; errors pass through
 * unchanged, so an API error keeps its HTTP status on `response.status`.
 */
import { type Clock, raceAbort } from "../../../_shared/mod.ts";

/** What `Sandbox.create` receives (rule 131). */
export interface VercelCreateParams {
  /** `niceeval-<token[0..12)>` (rule 91). */
  readonly name: string;
  readonly source:
    | { readonly type: "snapshot"; readonly snapshotId: string }
    | { readonly type: "runtime"; readonly runtime: string };
  /** The instance lifetime in ms. */
  readonly timeout: number;
  readonly vcpus?: number;
  /** The owner stamp as tags (§7.1). */
  readonly tags: Readonly<Record<string, string>>;
  readonly signal: AbortSignal;
}

/** What `runCommand` receives (rule 132). */
export interface VercelRunParams {
  readonly cmd: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly sudo: boolean;
  readonly signal?: AbortSignal | undefined;
}

/** A finished command; its output is read only after it ended. */
export interface VercelFinishedCommand {
  readonly exitCode: number;
  stdout(o: { signal: AbortSignal }): Promise<string>;
  stderr(o: { signal: AbortSignal }): Promise<string>;
}

/** One sandbox as the SDK returns it from `create` or `get`. */
export interface VercelInstance {
  readonly name: string;
  /** When the running session times out, as last read; undefined without a running session. */
  readonly expiresAt: Date | undefined;
  runCommand(params: VercelRunParams): Promise<VercelFinishedCommand>;
  writeFiles(
    files: readonly { path: string; content: Uint8Array; mode?: number }[],
    o: { signal?: AbortSignal | undefined },
  ): Promise<void>;
  /** `null` when the path does not exist. */
  readFileToBuffer(
    file: { path: string },
    o: { signal?: AbortSignal | undefined },
  ): Promise<Uint8Array | null>;
  /** Extends the running session's timeout by `durationMs`. */
  extendTimeout(durationMs: number, o: { signal?: AbortSignal | undefined }): Promise<void>;
  delete(o: { signal?: AbortSignal | undefined }): Promise<void>;
}

/** One entry of `Sandbox.list`. */
export interface VercelSummary {
  readonly name: string;
  readonly status: string;
  /** Epoch ms. */
  readonly createdAt: number;
  readonly tags?: Readonly<Record<string, string>> | undefined;
}

/** The SDK calls the provider makes. */
export interface VercelPort {
  create(params: VercelCreateParams): Promise<VercelInstance>;
  /** `Sandbox.get({ name, resume: false })`; an unknown name rejects with HTTP 404. */
  get(name: string, o: { signal?: AbortSignal | undefined }): Promise<VercelInstance>;
  /** `Sandbox.list` with one tag filter or a name prefix, all pages. */
  list(
    query: { readonly tag?: readonly [string, string]; readonly namePrefix?: string },
    o: { signal: AbortSignal },
  ): AsyncIterable<VercelSummary>;
}

/** The HTTP status of an SDK API error (`response.status`), else `status`/`statusCode`. */
export function vercelStatus(error: unknown): number | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const e = error as { response?: { status?: unknown }; status?: unknown; statusCode?: unknown };
  for (const value of [e.response?.status, e.status, e.statusCode]) {
    if (typeof value === "number") return value;
  }
  return undefined;
}

/** True for the API's "no such sandbox" answers. */
export function isVercelGone(error: unknown): boolean {
  const status = vercelStatus(error);
  return status === 404 || status === 410;
}

/**
 * Deletes a sandbox by name: `get` then `delete` (rule 133); a sandbox that is already gone is
 * success.
 */
export async function destroyVercelSandbox(
  port: VercelPort,
  name: string,
  { signal }: { signal?: AbortSignal | undefined } = {},
): Promise<"destroyed" | "already-gone"> {
  try {
    const instance = await port.get(name, { signal });
    await instance.delete({ signal });
    return "destroyed";
  } catch (error) {
    if (isVercelGone(error)) return "already-gone";
    throw error;
  }
}

/** How long a cleanup call may take (the cleanup entry bound, rule 36). */
const CLEANUP_TIMEOUT_MS = 30_000;

/**
 * Runs a cleanup call with a fresh signal that aborts after 30 s on `clock`; the wait ends then
 * even if the call ignores its signal.
 */
export async function withCleanupSignal<T>(
  clock: Clock,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  const timer = clock.setTimeout(
    () => controller.abort(new Error(`Cleanup took longer than ${CLEANUP_TIMEOUT_MS} ms`)),
    CLEANUP_TIMEOUT_MS,
  );
  try {
    return await raceAbort(fn(controller.signal), controller.signal);
  } finally {
    clock.clearTimeout(timer);
  }
}
