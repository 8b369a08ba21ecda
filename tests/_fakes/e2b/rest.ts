/**
 * The E2B control-plane REST API, as far as the `e2b` SDK's `Sandbox` class uses it: create
 * (`POST /v2/sandboxes`), list (`GET /v2/sandboxes`: `metadata` query, `limit`/`nextToken`
 * pagination with the `x-next-token` response header), info (`GET /sandboxes/{id}`), kill
 * (`DELETE /sandboxes/{id}`) and timeout (`POST /sandboxes/{id}/timeout`). Every call needs the
 * `X-API-KEY` header; errors are `{ code, message }` with the HTTP status as code.
 */
import type { SandboxRecord, SandboxStore } from "./state.ts";

/** What the REST side needs from the fake. */
export interface RestContext {
  readonly store: SandboxStore;
  readonly apiKey: string;
  readonly envdVersion: string;
  readonly templates: readonly string[] | undefined;
  readonly pageSize: number;
  readonly maxTimeoutSeconds: number;
  /** Statuses to answer the next creates with, consumed from the front. */
  readonly createFailures: number[];
}

const DEFAULT_TIMEOUT_SECONDS = 300;

function apiError(status: number, message: string): Response {
  return Response.json({ code: status, message }, { status });
}

function info(record: SandboxRecord, envdVersion: string): Record<string, unknown> {
  return {
    sandboxID: record.id,
    templateID: record.templateId,
    alias: record.templateId,
    clientID: "6532622b",
    startedAt: record.startedAt.toISOString(),
    endAt: record.endAt.toISOString(),
    cpuCount: 2,
    memoryMB: 512,
    diskSizeMB: 1024,
    metadata: record.metadata,
    state: "running",
    envdVersion,
    volumeMounts: [],
  };
}

function stringMap(value: unknown, field: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) throw new TypeError(`${field}: object`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== "string") throw new TypeError(`${field}.${k}: string`);
    out[k] = v;
  }
  return out;
}

async function create(req: Request, ctx: RestContext): Promise<Response> {
  const failure = ctx.createFailures.shift();
  if (failure !== undefined) return apiError(failure, `injected create failure ${failure}`);
  const body = await req.json() as Record<string, unknown>;
  const templateId = body.templateID;
  if (typeof templateId !== "string" || templateId === "") {
    return apiError(400, "templateID is required");
  }
  if (ctx.templates !== undefined && !ctx.templates.includes(templateId)) {
    return apiError(404, `template '${templateId}' not found`);
  }
  const timeout = body.timeout ?? DEFAULT_TIMEOUT_SECONDS;
  if (typeof timeout !== "number" || !Number.isInteger(timeout) || timeout < 0) {
    return apiError(400, "timeout must be a non-negative integer of seconds");
  }
  if (timeout > ctx.maxTimeoutSeconds) {
    return apiError(400, `Timeout cannot be greater than ${ctx.maxTimeoutSeconds} seconds`);
  }
  let metadata: Record<string, string>, envVars: Record<string, string>;
  try {
    metadata = stringMap(body.metadata, "metadata");
    envVars = stringMap(body.envVars, "envVars");
  } catch (e) {
    return apiError(400, `invalid body: ${(e as Error).message}`);
  }
  const record = await ctx.store.create({ templateId, metadata, envVars, timeoutSeconds: timeout });
  return Response.json({
    sandboxID: record.id,
    templateID: record.templateId,
    alias: record.templateId,
    clientID: "6532622b",
    envdVersion: ctx.envdVersion,
    envdAccessToken: record.accessToken,
  }, { status: 201 });
}

/**
 * The SDK sends `metadata` as a query string of its own: `encodeURIComponent(key)=…` pairs joined
 * by `URLSearchParams`, so after the URL's own decoding one more `URLSearchParams` pass plus
 * `decodeURIComponent` yields the pairs.
 */
function metadataFilter(query: string | null): [string, string][] {
  if (query === null || query === "") return [];
  return [...new URLSearchParams(query)].map(([k, v]) => [
    decodeURIComponent(k),
    decodeURIComponent(v),
  ]);
}

function list(url: URL, ctx: RestContext): Response {
  const filter = metadataFilter(url.searchParams.get("metadata"));
  const states = url.searchParams.get("state")?.split(",") ?? ["running", "paused"];
  const limitParam = Number(url.searchParams.get("limit") ?? ctx.pageSize);
  const limit = Math.max(1, Math.min(ctx.pageSize, limitParam || ctx.pageSize));
  const token = url.searchParams.get("nextToken");
  const start = token === null ? 0 : Number(atob(token));
  if (!Number.isInteger(start) || start < 0) return apiError(400, "invalid nextToken");
  // Fake sandboxes are never paused.
  const live = states.includes("running") ? ctx.store.list() : [];
  const matching = live
    .filter((r) => filter.every(([k, v]) => r.metadata[k] === v))
    .sort((a, b) => a.startedAt.getTime() - b.startedAt.getTime() || a.id.localeCompare(b.id));
  const page = matching.slice(start, start + limit);
  const headers = new Headers();
  if (start + limit < matching.length) headers.set("x-next-token", btoa(String(start + limit)));
  return Response.json(page.map((r) => info(r, ctx.envdVersion)), { headers });
}

/** Answers one REST request. */
export async function handleRest(req: Request, ctx: RestContext): Promise<Response> {
  if (req.headers.get("x-api-key") !== ctx.apiKey) return apiError(401, "Invalid API key");
  const url = new URL(req.url);
  if (url.pathname === "/v2/sandboxes") {
    if (req.method === "POST") return await create(req, ctx);
    if (req.method === "GET") return list(url, ctx);
  }
  const match = /^\/sandboxes\/([^/]+)(\/timeout)?$/.exec(url.pathname);
  if (match === null) return apiError(404, `no route ${req.method} ${url.pathname}`);
  const id = decodeURIComponent(match[1]!);
  const record = ctx.store.get(id);
  if (record === undefined) return apiError(404, `sandbox "${id}" not found`);
  if (match[2] !== undefined && req.method === "POST") {
    const { timeout } = await req.json() as { timeout?: unknown };
    if (typeof timeout !== "number" || !Number.isInteger(timeout) || timeout < 0) {
      return apiError(400, "timeout must be a non-negative integer of seconds");
    }
    if (timeout > ctx.maxTimeoutSeconds) {
      return apiError(400, `Timeout cannot be greater than ${ctx.maxTimeoutSeconds} seconds`);
    }
    record.endAt = new Date(ctx.store.options.now() + timeout * 1000);
    return new Response(null, { status: 204 });
  }
  if (match[2] === undefined && req.method === "GET") {
    return Response.json(info(record, ctx.envdVersion));
  }
  if (match[2] === undefined && req.method === "DELETE") {
    await ctx.store.kill(id);
    return new Response(null, { status: 204 });
  }
  return apiError(405, `method ${req.method} not allowed on ${url.pathname}`);
}
