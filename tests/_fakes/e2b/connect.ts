/**
 * The Connect protocol as envd speaks it to the `e2b` SDK, JSON codec only (the SDK builds its
 * transport with `useBinaryFormat: false`). Unary calls: `POST /<service>/<Method>` with
 * `application/json` in both directions; an error is a non-200 status with
 * `{ "code", "message" }`. Server streams: `application/connect+json`, every message framed as
 * 1 flag byte + 4-byte big-endian length + JSON, closed by an end-of-stream frame (flag `0x02`)
 * carrying `{}` or `{ "error": { code, message } }`.
 */

/** Connect error codes the fake answers with. */
export type ConnectCode =
  | "invalid_argument"
  | "not_found"
  | "already_exists"
  | "permission_denied"
  | "failed_precondition"
  | "unimplemented"
  | "internal"
  | "unavailable"
  | "deadline_exceeded"
  | "unauthenticated";

const HTTP_STATUS: Record<ConnectCode, number> = {
  invalid_argument: 400,
  not_found: 404,
  already_exists: 409,
  permission_denied: 403,
  failed_precondition: 400,
  unimplemented: 501,
  internal: 500,
  unavailable: 503,
  deadline_exceeded: 504,
  unauthenticated: 401,
};

/** A Connect error a handler throws; the router turns it into the protocol's error shape. */
export class ConnectFault extends Error {
  constructor(readonly code: ConnectCode, message: string) {
    super(message);
    this.name = "ConnectFault";
  }
}

/** Content type of unary JSON calls. */
export const UNARY_JSON = "application/json";
/** Content type of streaming JSON calls. */
export const STREAM_JSON = "application/connect+json";

/** A unary success answer. */
export function unaryOk(message: unknown): Response {
  return new Response(JSON.stringify(message), {
    status: 200,
    headers: { "content-type": UNARY_JSON },
  });
}

/** A unary error answer. */
export function unaryError(fault: ConnectFault): Response {
  return new Response(JSON.stringify({ code: fault.code, message: fault.message }), {
    status: HTTP_STATUS[fault.code],
    headers: { "content-type": UNARY_JSON },
  });
}

const END_STREAM_FLAG = 0b10;

function frame(flags: number, json: unknown): Uint8Array<ArrayBuffer> {
  const data = new TextEncoder().encode(JSON.stringify(json));
  const out = new Uint8Array(5 + data.length);
  out[0] = flags;
  new DataView(out.buffer).setUint32(1, data.length);
  out.set(data, 5);
  return out;
}

/** One message frame of a server stream. */
export function messageFrame(message: unknown): Uint8Array<ArrayBuffer> {
  return frame(0, message);
}

/** The closing frame of a server stream, with the error that ended it if any. */
export function endStreamFrame(fault?: ConnectFault): Uint8Array<ArrayBuffer> {
  return frame(
    END_STREAM_FLAG,
    fault === undefined ? {} : { error: { code: fault.code, message: fault.message } },
  );
}

/** The single request message of a server-streaming call (one enveloped JSON message). */
export function parseRequestEnvelope(body: Uint8Array): unknown {
  if (body.length < 5) throw new ConnectFault("invalid_argument", "missing request envelope");
  const flags = body[0]!;
  const length = new DataView(body.buffer, body.byteOffset).getUint32(1);
  if (flags !== 0 || body.length !== 5 + length) {
    throw new ConnectFault("invalid_argument", `malformed request envelope (flags ${flags})`);
  }
  return JSON.parse(new TextDecoder().decode(body.subarray(5)));
}

/** Protobuf JSON `bytes`: standard base64. */
export function decodeBytes(base64: string | undefined): Uint8Array {
  if (!base64) return new Uint8Array(0);
  const bin = atob(base64.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

/** Protobuf JSON `bytes` of a chunk. */
export function encodeBytes(data: Uint8Array): string {
  let bin = "";
  for (let i = 0; i < data.length; i += 0x8000) {
    bin += String.fromCharCode(...data.subarray(i, i + 0x8000));
  }
  return btoa(bin);
}

/** The envd user of a call: `Authorization: Basic base64("<user>:")`, else the default user. */
export function userOf(req: Request, fallback = "user"): string {
  const auth = req.headers.get("authorization");
  if (auth === null || !auth.startsWith("Basic ")) return fallback;
  const decoded = atob(auth.slice("Basic ".length));
  return decoded.split(":")[0] || fallback;
}
