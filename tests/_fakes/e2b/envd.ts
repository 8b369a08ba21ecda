/**
 * The sandbox side (envd behind the E2B proxy). With `E2B_SANDBOX_URL` set the SDK sends every
 * sandbox's calls to that one URL and names the target in the `E2b-Sandbox-Id` and
 * `E2b-Sandbox-Port` headers (port 49983 is envd), with the `X-Access-Token` the create answer
 * carried. An unknown or killed sandbox gets the proxy's 502.
 */
import type { SandboxStore } from "./state.ts";
import { ConnectFault, STREAM_JSON, UNARY_JSON, unaryError, unaryOk, userOf } from "./connect.ts";
import { filesystemUnary, readFile, writeFiles } from "./files.ts";
import { processUnary, startProcess } from "./process.ts";

/** envd's port, as the SDK addresses it. */
export const ENVD_PORT = "49983";

/** Answers one request to the sandbox URL. */
export async function handleEnvd(req: Request, store: SandboxStore): Promise<Response> {
  const id = req.headers.get("e2b-sandbox-id") ?? "";
  const record = store.get(id);
  if (record === undefined || req.headers.get("e2b-sandbox-port") !== ENVD_PORT) {
    return Response.json(
      { sandboxId: id, message: "The sandbox was not found", code: 502 },
      { status: 502 },
    );
  }
  if (req.headers.get("x-access-token") !== record.accessToken) {
    return Response.json({ code: 401, message: "invalid access token" }, { status: 401 });
  }
  const url = new URL(req.url);
  if (url.pathname === "/health") return new Response(null, { status: 204 });
  if (url.pathname === "/files") {
    if (req.method === "GET") return await readFile(url, record, req);
    if (req.method === "POST") return await writeFiles(url, record, req);
  }
  const rpc = /^\/(filesystem\.Filesystem|process\.Process)\/([A-Za-z]+)$/.exec(url.pathname);
  if (rpc === null || req.method !== "POST") {
    return Response.json({ code: 404, message: `no route ${url.pathname}` }, { status: 404 });
  }
  const [, service, method] = rpc as unknown as [string, string, string];
  const contentType = req.headers.get("content-type") ?? "";
  if (service === "process.Process" && method === "Start") {
    if (contentType !== STREAM_JSON) return unsupported(contentType);
    return await startProcess(req, record);
  }
  if (contentType !== UNARY_JSON) return unsupported(contentType);
  try {
    const message = await req.json() as Record<string, unknown>;
    const answer = service === "process.Process"
      ? await processUnary(method, message, record)
      : await filesystemUnary(method, message, record, userOf(req));
    return unaryOk(answer);
  } catch (e) {
    if (e instanceof ConnectFault) return unaryError(e);
    return unaryError(new ConnectFault("internal", (e as Error).message));
  }
}

/** The fake speaks only the JSON codec, which is what the pinned SDK sends. */
function unsupported(contentType: string): Response {
  return new Response(`unsupported content type ${contentType}`, { status: 415 });
}
