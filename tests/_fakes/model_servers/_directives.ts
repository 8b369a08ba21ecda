/**
 * What a fake model server does for one request, decided from the request itself: the last user
 * text carries directives, one per line, so one fixture project can hold evals that each need a
 * different reply while one CLI invocation runs them all.
 *
 * - `RUN: <shell command>` — when tools are offered and no tool result follows the user text,
 *   reply with one call of the CLI's shell tool running the command.
 * - `REPLY: <text>` — the final assistant text (default `All done.`).
 * - `FAULT: <429|500|hang> <key> [n]` — the first `n` (default 1) requests carrying `key` get the
 *   fault; later ones are answered normally. `hang` never answers (until the client leaves).
 */

/** One fault a request can be answered with. */
export type Fault = "429" | "500" | "hang";

/** The directives found in a user text. */
export interface Directives {
  readonly run: string | undefined;
  readonly reply: string;
  readonly fault:
    | { readonly kind: Fault; readonly key: string; readonly times: number }
    | undefined;
}

const FAULT_REGEXP = /^FAULT:\s*(429|500|hang)\s+(\S+)(?:\s+(\d+))?\s*$/;

/** Reads the directives of `text`. */
export function readDirectives(text: string): Directives {
  let run: string | undefined;
  let reply = "All done.";
  let fault: Directives["fault"];
  for (const raw of text.split("\n")) {
    // A CLI may wrap the whole input in quotes; a directive line ignores them.
    const line = raw.trim().replace(/^"/, "").replace(/"$/, "");
    if (line.startsWith("RUN:")) run = line.slice(4).trim();
    else if (line.startsWith("REPLY:")) reply = line.slice(6).trim();
    else {
      const m = FAULT_REGEXP.exec(line);
      if (m) fault = { kind: m[1] as Fault, key: m[2] ?? "", times: m[3] ? Number(m[3]) : 1 };
    }
  }
  return { run, reply, fault };
}

/** Counts faults per key; `take` says whether this request gets the fault. */
export class FaultBook {
  readonly #used = new Map<string, number>();

  /** Returns the fault to answer with, counting it, or `undefined` to answer normally. */
  take(directives: Directives): Fault | undefined {
    const fault = directives.fault;
    if (!fault) return undefined;
    const used = this.#used.get(fault.key) ?? 0;
    if (used >= fault.times) return undefined;
    this.#used.set(fault.key, used + 1);
    return fault.kind;
  }
}

/** The response of a 429 or 500 fault, in the OpenAI error shape. */
export function faultResponse(kind: "429" | "500"): Response {
  const status = Number(kind);
  const error = status === 429
    ? { message: "Rate limit reached for requests", type: "rate_limit_error", code: "rate_limit" }
    : { message: "The server had an error", type: "server_error", code: null };
  return Response.json({ error }, {
    status,
    headers: status === 429 ? { "retry-after": "0" } : {},
  });
}

/** A response that never sends its body; it ends when the client goes away or the server stops. */
export function hangingResponse(signal: AbortSignal): Response {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const close = () => {
        try {
          controller.close();
        } catch {
          // Already closed by a cancel: nothing left to end.
        }
      };
      if (signal.aborted) close();
      else signal.addEventListener("abort", close, { once: true });
    },
  });
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}

/** Encodes server-sent events; `named` adds an `event:` line carrying the payload's type. */
export function sse(payloads: readonly unknown[], named: boolean): Response {
  const text = payloads.map((p) => {
    const data = typeof p === "string" ? p : JSON.stringify(p);
    const type = (p as { type?: unknown })?.type;
    return named && typeof type === "string"
      ? `event: ${type}\ndata: ${data}\n\n`
      : `data: ${data}\n\n`;
  }).join("");
  return new Response(text, {
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
  });
}

/** One request as a fake logged it. */
export interface LoggedRequest {
  readonly method: string;
  readonly path: string;
  readonly authorization: string | null;
  // deno-lint-ignore no-explicit-any
  readonly body: any;
  /** What the fake answered: `tool`, `text`, `title`, `429`, `500`, `hang` or `404`. */
  readonly answer: string;
}
