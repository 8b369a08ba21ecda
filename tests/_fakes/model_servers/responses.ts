/**
 * An OpenAI Responses API server (SSE) on 127.0.0.1, port 0, as the Codex CLI talks to it with
 * `wire_api = "responses"`. Each reply is decided from the request (see `_directives.ts`): tools
 * offered and no tool result after the last user text → one shell call running the `RUN:` command
 * (else the `run` option); otherwise the final text. Every request is logged.
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

/** The usage every answered request reports. */
export const RESPONSES_USAGE = {
  input_tokens: 120,
  input_tokens_details: { cached_tokens: 20 },
  output_tokens: 30,
  output_tokens_details: { reasoning_tokens: 8 },
  total_tokens: 150,
} as const;

/** A running fake. */
export interface ResponsesServer extends AsyncDisposable {
  /** The base URL to configure (`…/v1`). */
  readonly baseUrl: string;
  /** Every request, in arrival order. */
  readonly requests: LoggedRequest[];
}

/** Options of {@link responsesServer}. */
export interface ResponsesServerOptions {
  /** Answers every model request with that fault (overrides directives). */
  readonly fault?: Fault;
  /** The shell call's command when the user text carries no `RUN:` directive. */
  readonly run?: string;
}

/** Starts the fake. */
export function responsesServer(options: ResponsesServerOptions = {}): ResponsesServer {
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
    if (req.method !== "POST" || !path.endsWith("/responses")) {
      log("404");
      return Response.json({ error: { message: "not found" } }, { status: 404 });
    }
    const directives = readDirectives(lastUserText(body?.input));
    const fault = options.fault ?? faults.take(directives);
    if (fault) {
      log(fault);
      return fault === "hang"
        ? hangingResponse(AbortSignal.any([req.signal, stop.signal]))
        : faultResponse(fault);
    }
    n++;
    const shell = pickShell(body?.tools);
    const run = directives.run ?? options.run;
    if (run !== undefined && shell && !answeredAfterUser(body?.input)) {
      log("tool");
      return sse(toolCall(n, shell, run), true);
    }
    log("text");
    return sse(message(n, directives.reply), true);
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

function contentText(content: Json): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part: Json) => typeof part?.text === "string" ? part.text : "").join("\n");
}

function lastUserText(input: Json): string {
  if (typeof input === "string") return input;
  if (!Array.isArray(input)) return "";
  const last = input.findLast((item: Json) => item?.role === "user");
  return last ? contentText(last.content) : "";
}

/** Whether a tool result follows the last user message of the input. */
function answeredAfterUser(input: Json): boolean {
  if (!Array.isArray(input)) return false;
  const at = input.findLastIndex((item: Json) => item?.role === "user");
  return input.slice(at + 1).some((item: Json) =>
    item?.type === "function_call_output" || item?.type === "custom_tool_call_output"
  );
}

/** The shell tool the CLI offers, with how its arguments are shaped. */
interface Shell {
  readonly name: string;
  readonly args: (command: string) => Json;
}

function pickShell(tools: Json): Shell | undefined {
  if (!Array.isArray(tools)) return undefined;
  const names = new Set(tools.map((t: Json) => t?.name).filter(Boolean));
  if (names.has("exec_command")) {
    // A long yield keeps a slow command in one call (the CLI would otherwise poll it).
    return { name: "exec_command", args: (cmd) => ({ cmd, yield_time_ms: 600000 }) };
  }
  if (names.has("shell_command")) {
    return { name: "shell_command", args: (command) => ({ command }) };
  }
  if (names.has("shell")) {
    return { name: "shell", args: (c) => ({ command: ["bash", "-lc", c] }) };
  }
  return undefined;
}

function created(n: number): Json {
  return { type: "response.created", response: { id: `resp_${n}` } };
}

function completed(n: number): Json {
  return { type: "response.completed", response: { id: `resp_${n}`, usage: RESPONSES_USAGE } };
}

function toolCall(n: number, shell: Shell, command: string): Json[] {
  const item = {
    type: "function_call",
    id: `fc_${n}`,
    call_id: `call_${n}`,
    name: shell.name,
    arguments: JSON.stringify(shell.args(command)),
  };
  return [
    created(n),
    { type: "response.output_item.added", output_index: 0, item },
    { type: "response.output_item.done", output_index: 0, item },
    completed(n),
  ];
}

function message(n: number, text: string): Json[] {
  const item = {
    type: "message",
    id: `msg_${n}`,
    role: "assistant",
    content: [{ type: "output_text", text, annotations: [] }],
  };
  return [
    created(n),
    {
      type: "response.output_item.added",
      output_index: 0,
      item: { ...item, content: [] },
    },
    {
      type: "response.output_text.delta",
      item_id: item.id,
      output_index: 0,
      content_index: 0,
      delta: text,
    },
    { type: "response.output_item.done", output_index: 0, item },
    completed(n),
  ];
}
