/**
 * A local fake of the E2B cloud for the real `e2b` SDK: the REST control plane and the envd
 * sandbox side on two `Deno.serve` listeners on 127.0.0.1 (ephemeral ports), reached through
 * `E2B_API_URL` and `E2B_SANDBOX_URL`. Each sandbox is a temp directory (see `paths.ts` for how
 * sandbox paths map onto it) and its commands are real host subprocesses. The wire format is that
 * of the SDK version in `version.ts`.
 */
import { SandboxStore } from "./state.ts";
import { handleRest } from "./rest.ts";
import { handleEnvd } from "./envd.ts";
import { DEFAULT_MAPPED_PREFIXES } from "./paths.ts";

export { E2B_SDK_VERSION, lockedE2bVersion } from "./version.ts";

/** The API key the fake accepts unless told otherwise. */
export const FAKE_E2B_API_KEY = "e2b_00";

/** Options of {@link startFakeE2B}. */
export interface FakeE2BOptions {
  /** The only `X-API-KEY` accepted. @default "e2b_00" */
  readonly apiKey?: string;
  /** Known templates; creating another answers 404. @default any template */
  readonly templates?: readonly string[];
  /** The envd version create answers with. @default "0.5.7" */
  readonly envdVersion?: string;
  /** Largest list page (the SDK's `limit` may ask for less). @default 100 */
  readonly pageSize?: number;
  /** Longest sandbox timeout; more answers 400. @default 86_400 */
  readonly maxTimeoutSeconds?: number;
  /** The clock of `startedAt`/`endAt` and expiry. @default Date.now */
  readonly now?: () => number;
  /** Statuses for the next creates, consumed in order (e.g. `[429]`). */
  readonly createFailures?: readonly number[];
  /** Sandbox path prefixes that live in the sandbox's temp directory. */
  readonly mappedPrefixes?: readonly string[];
}

/** One request the fake answered. */
export interface FakeRequest {
  readonly seq: number;
  readonly side: "api" | "envd";
  readonly method: string;
  /** Path plus query. */
  readonly path: string;
  readonly status: number;
  /** `E2b-Sandbox-Id` of an envd call, or the id in a REST path. */
  readonly sandboxId?: string;
  /** The `metadata` a create asked for (also when the create was refused). */
  readonly metadata?: Readonly<Record<string, string>>;
}

/** A live sandbox as tests see it. */
export interface FakeSandbox {
  readonly id: string;
  readonly templateId: string;
  readonly metadata: Readonly<Record<string, string>>;
  readonly startedAt: Date;
  readonly endAt: Date;
  /** Host directory of the sandbox root. */
  readonly root: string;
  /** Pids of its running processes. */
  readonly processes: readonly number[];
  /** The host path of a sandbox path (as the default user). */
  hostPath(sandboxPath: string): string;
}

/** A running fake. */
export interface FakeE2B extends AsyncDisposable {
  readonly apiUrl: string;
  readonly sandboxUrl: string;
  /** `E2B_API_URL`, `E2B_SANDBOX_URL` and `E2B_API_KEY` for the SDK or a CLI child. */
  readonly env: {
    readonly E2B_API_URL: string;
    readonly E2B_SANDBOX_URL: string;
    readonly E2B_API_KEY: string;
  };
  /** Live sandboxes, oldest first. */
  sandboxes(): FakeSandbox[];
  /** Every answered request, in order. */
  readonly requests: readonly FakeRequest[];
  /** Faults still to inject; tests may push more. */
  readonly faults: { readonly createFailures: number[] };
  /** Kills a sandbox as the cloud would (expiry, console); answers whether it was live. */
  kill(id: string): Promise<boolean>;
}

function parseMetadata(body: string): Record<string, string> | undefined {
  try {
    return (JSON.parse(body) as { metadata?: Record<string, string> }).metadata ?? {};
  } catch {
    return undefined;
  }
}

/** Starts the fake; dispose it to kill every sandbox and close both listeners. */
export async function startFakeE2B(options: FakeE2BOptions = {}): Promise<FakeE2B> {
  const baseDir = await Deno.makeTempDir({ prefix: "niceeval-fake-e2b-" });
  const store = new SandboxStore({
    baseDir,
    now: options.now ?? Date.now,
    prefixes: options.mappedPrefixes ?? DEFAULT_MAPPED_PREFIXES,
  });
  const apiKey = options.apiKey ?? FAKE_E2B_API_KEY;
  const faults = { createFailures: [...(options.createFailures ?? [])] };
  const requests: FakeRequest[] = [];
  const log = (
    side: FakeRequest["side"],
    req: Request,
    res: Response,
    extra: { sandboxId?: string | undefined; metadata?: Record<string, string> | undefined },
  ) => {
    const url = new URL(req.url);
    requests.push({
      seq: requests.length,
      side,
      method: req.method,
      path: url.pathname + url.search,
      status: res.status,
      ...(extra.sandboxId ? { sandboxId: extra.sandboxId } : {}),
      ...(extra.metadata ? { metadata: extra.metadata } : {}),
    });
    return res;
  };
  const rest = {
    store,
    apiKey,
    envdVersion: options.envdVersion ?? "0.5.7",
    templates: options.templates,
    pageSize: options.pageSize ?? 100,
    maxTimeoutSeconds: options.maxTimeoutSeconds ?? 86_400,
    createFailures: faults.createFailures,
  };
  const listen = { port: 0, hostname: "127.0.0.1", onListen() {} };
  const api = Deno.serve(listen, async (req) => {
    const path = new URL(req.url).pathname;
    const sandboxId = /^\/sandboxes\/([^/]+)/.exec(path)?.[1];
    if (path !== "/v2/sandboxes" || req.method !== "POST") {
      return log("api", req, await handleRest(req, rest), { sandboxId });
    }
    // The create body is read once for the log and handed on (`clone()` would touch the signal).
    const body = await req.text();
    const metadata = parseMetadata(body);
    const replay = new Request(req.url, { method: req.method, headers: req.headers, body });
    return log("api", req, await handleRest(replay, rest), { metadata });
  });
  const envd = Deno.serve(listen, async (req) => {
    const sandboxId = req.headers.get("e2b-sandbox-id") ?? undefined;
    return log("envd", req, await handleEnvd(req, store), { sandboxId });
  });
  const apiUrl = `http://127.0.0.1:${api.addr.port}`;
  const sandboxUrl = `http://127.0.0.1:${envd.addr.port}`;
  return {
    apiUrl,
    sandboxUrl,
    env: { E2B_API_URL: apiUrl, E2B_SANDBOX_URL: sandboxUrl, E2B_API_KEY: apiKey },
    requests,
    faults,
    sandboxes: () =>
      store.list().map((r) => ({
        id: r.id,
        templateId: r.templateId,
        metadata: r.metadata,
        startedAt: r.startedAt,
        endAt: r.endAt,
        root: r.paths.root,
        processes: [...r.processes.keys()],
        hostPath: (p: string) => r.paths.resolve(p, "user").host,
      })),
    kill: (id) => store.kill(id),
    [Symbol.asyncDispose]: async () => {
      await store.close();
      await Promise.all([api.shutdown(), envd.shutdown()]);
      await Deno.remove(baseDir, { recursive: true }).catch(() => undefined);
    },
  };
}
