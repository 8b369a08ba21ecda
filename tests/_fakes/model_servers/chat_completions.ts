/**
 * A Chat Completions server (SSE) on 127.0.0.1, port 0, as OpenCode's bundled OpenAI-compatible
 * provider talks to it. Each reply is decided from the request (see `_directives.ts`): a request
 * without tools (OpenCode's title request) gets a short title; tools offered and no tool result
 * after the last user text → one call of the shell tool running the `RUN:` command (else the `run`
 * option); otherwise the final text. Every request is logged.
 */
import {
  type Fault,
  FaultBook,
  faultResponse,
  hangingResponse,
  type LoggedRequest,
  readDirectives,
  sse,
} from "./_directives.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

/** The usage every answered request with tools reports. */
export const CHAT_USAGE = {
  prompt_tokens: 200,
  completion_tokens: 40,
  total_tokens: 240,
  prompt_tokens_details: { cached_tokens: 50 },
  completion_tokens_details: { reasoning_tokens: 10 },
} as const;

/** The usage of a title request. */
export const TITLE_USAGE = { prompt_tokens: 30, completion_tokens: 4, total_tokens: 34 } as const;

/** A running fake. */
export interface ChatCompletionsServer extends AsyncDisposable {
  /** The base URL to configure (`…/v1`). */
  readonly baseUrl: string;
  /** Every request, in arrival order. */
  readonly requests: LoggedRequest[];
}

/** Options of {@link chatCompletionsServer}. */
export interface ChatCompletionsServerOptions {
  /** Answers every request with tools with that fault (overrides directives). */
  readonly fault?: Fault;
  /** The shell call's command when the user text carries no `RUN:` directive. */
  readonly run?: string;
}

/** Starts the fake. */
export function chatCompletionsServer(
  options: ChatCompletionsServerOptions = {},
): ChatCompletionsServer {
  const requests: LoggedRequest[] = [];
  const faults = new FaultBook();
  const stop = new AbortController();
  let n = 0;
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    const path = new URL(req.url).pathname;
    const text = req.method === "POST" ? await req.text() : "";
    const body = parse(text);
    const log = (answer: string) =>
      requests.push({
        method: req.method,
        path,
        authorization: req.headers.get("authorization"),
        body,
        answer,
      });
    if (req.method !== "POST" || !path.endsWith("/chat/completions")) {
      log("404");
      return Response.json({ error: { message: "not found" } }, { status: 404 });
    }
    n++;
    const tools = Array.isArray(body?.tools) ? body.tools : [];
    if (tools.length === 0) {
      log("title");
      return sse([
        ...chunks(n, { role: "assistant", content: "Fake title" }, "stop", TITLE_USAGE),
        "[DONE]",
      ], false);
    }
    const directives = readDirectives(lastUserText(body?.messages));
    const fault = options.fault ?? faults.take(directives);
    if (fault) {
      log(fault);
      return fault === "hang"
        ? hangingResponse(AbortSignal.any([req.signal, stop.signal]))
        : faultResponse(fault);
    }
    const shell = pickShell(tools);
    const run = directives.run ?? options.run;
    if (run !== undefined && shell && !answeredAfterUser(body?.messages)) {
      log("tool");
      const call = {
        index: 0,
        id: `call_${n}`,
        type: "function",
        function: { name: shell.name, arguments: JSON.stringify(shell.args(run)) },
      };
      return sse([
        ...chunks(n, { role: "assistant", tool_calls: [call] }, "tool_calls", CHAT_USAGE),
        "[DONE]",
      ], false);
    }
    log("text");
    return sse([
      ...chunks(n, { role: "assistant", content: directives.reply }, "stop", CHAT_USAGE),
      "[DONE]",
    ], false);
  });
  return {
    baseUrl: `http://127.0.0.1:${server.addr.port}/v1`,
    requests,
    [Symbol.asyncDispose]: async () => {
      stop.abort();
      await server.shutdown();
    },
  };
}

function parse(text: string): Json {
  try {
    return text === "" ? undefined : JSON.parse(text);
  } catch {
    return text;
  }
}

function lastUserText(messages: Json): string {
  if (!Array.isArray(messages)) return "";
  const last = messages.findLast((m: Json) => m?.role === "user");
  if (!last) return "";
  if (typeof last.content === "string") return last.content;
  if (!Array.isArray(last.content)) return "";
  return last.content.map((p: Json) => typeof p?.text === "string" ? p.text : "").join("\n");
}

function answeredAfterUser(messages: Json): boolean {
  if (!Array.isArray(messages)) return false;
  const at = messages.findLastIndex((m: Json) => m?.role === "user");
  return messages.slice(at + 1).some((m: Json) => m?.role === "tool");
}

interface Shell {
  readonly name: string;
  readonly args: (command: string) => Json;
}

function pickShell(tools: Json[]): Shell | undefined {
  const names = new Set(tools.map((t: Json) => t?.function?.name).filter(Boolean));
  if (names.has("bash")) {
    return { name: "bash", args: (command) => ({ command, description: "Runs the command" }) };
  }
  return undefined;
}

/** The chunks of one streamed reply: the delta, then the finish reason with the usage. */
function chunks(n: number, delta: Json, finish: string, usage: Json): Json[] {
  const base = { id: `chatcmpl-${n}`, object: "chat.completion.chunk", created: 0, model: "fake" };
  return [
    { ...base, choices: [{ index: 0, delta, finish_reason: null }] },
    { ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }] },
    { ...base, choices: [], usage },
  ];
}
