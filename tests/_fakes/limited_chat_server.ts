/**
 * A rate-limited chat-completions server on 127.0.0.1, port 0: it admits at most `capacity`
 * requests at once, each answered after `latencyMs` by echoing the last user message; a request
 * beyond that is answered at once with 429 and `Retry-After: <retryAfterS>`.
 */

/** What the server counted. */
export interface LimitedServer extends AsyncDisposable {
  readonly baseUrl: string;
  /** Requests answered with 200. */
  admitted(): number;
  /** Requests answered with 429. */
  rejected(): number;
  /** Most requests in flight at once among admitted ones. */
  peak(): number;
}

/** Starts the server; `latencyMs` is real time (the CLI child has no fake clock). */
export function limitedServer(
  options: { capacity: number; latencyMs: number; retryAfterS?: number },
): LimitedServer {
  let inFlight = 0;
  let admitted = 0;
  let rejected = 0;
  let peak = 0;
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    const body = await req.json();
    if (inFlight >= options.capacity) {
      rejected++;
      return new Response("rate limited", {
        status: 429,
        headers: { "retry-after": String(options.retryAfterS ?? 1) },
      });
    }
    inFlight++;
    peak = Math.max(peak, inFlight);
    try {
      await new Promise((resolve) => setTimeout(resolve, options.latencyMs));
      admitted++;
      const last = body.messages.at(-1);
      return Response.json({
        choices: [{
          index: 0,
          message: { role: "assistant", content: String(last.content) },
          finish_reason: "stop",
        }],
        usage: { prompt_tokens: 3, completion_tokens: 3 },
      });
    } finally {
      inFlight--;
    }
  });
  return {
    baseUrl: `http://127.0.0.1:${server.addr.port}/v1`,
    admitted: () => admitted,
    rejected: () => rejected,
    peak: () => peak,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}
