/** A chat-completions server on 127.0.0.1 for the OpenAI-compatible agent's end-to-end tests. */

// deno-lint-ignore no-explicit-any
type Json = any;

export interface WeatherServer extends AsyncDisposable {
  readonly baseUrl: string;
  /** Message lists of the requests answered with 200, in order. */
  readonly conversations: Json[][];
  /** Requests answered with 429. */
  readonly rejected: () => number;
  /** `Authorization` header of every request (null when absent). */
  readonly authorizations: (string | null)[];
  /** Every request it answered, 429s included. */
  readonly requests: () => number;
}

/**
 * A chat-completions server on 127.0.0.1, port 0: the first `rejections` requests get 429; then
 * a user question gets a get_weather call and a tool result gets the final answer.
 */
export function weatherServer(rejections = 0): WeatherServer {
  const conversations: Json[][] = [];
  const authorizations: (string | null)[] = [];
  let rejected = 0;
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    authorizations.push(req.headers.get("authorization"));
    const body = await req.json();
    if (rejected < rejections) {
      rejected++;
      return new Response("rate limited", { status: 429, headers: { "retry-after": "0" } });
    }
    conversations.push(body.messages);
    const last = body.messages.at(-1);
    const message = last.role === "tool"
      ? { role: "assistant", content: `It is ${JSON.parse(last.content).sky} in Brooklyn.` }
      : {
        role: "assistant",
        content: null,
        tool_calls: [{
          id: "call_1",
          type: "function",
          function: { name: "get_weather", arguments: '{"city":"Brooklyn"}' },
        }],
      };
    return Response.json({
      choices: [{ index: 0, message, finish_reason: last.role === "tool" ? "stop" : "tool_calls" }],
      usage: { prompt_tokens: 12, completion_tokens: 5 },
    });
  });
  return {
    baseUrl: `http://127.0.0.1:${server.addr.port}/v1`,
    conversations,
    rejected: () => rejected,
    requests: () => authorizations.length,
    authorizations,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}
