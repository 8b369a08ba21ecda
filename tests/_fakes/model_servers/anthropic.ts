/**
 * A fake Anthropic Messages server on 127.0.0.1 (port 0) for the coding-agent tests. It decides
 * each reply from the request and logs every request.
 *
 * Directives in the latest user text (never in a tool result):
 * - `[[bash: <command>]]` — when tools are offered, the first reply is a `Bash` tool call running
 *   `<command>`; once the tool result is present the reply is text quoting that result.
 * - `[[429:<n>]]` — the first `n` requests carrying this directive get HTTP 429 (rate limit).
 * - Without a directive, the `bash` option (when given) plays the part of `[[bash: …]]`.
 * Anything else gets the text reply `ok: <first line of the prompt>`. Every successful reply
 * reports {@link FAKE_USAGE}.
 */

// deno-lint-ignore no-explicit-any
type Json = any;

/** The usage every successful reply reports. */
export const FAKE_USAGE = Object.freeze({
  input_tokens: 100,
  output_tokens: 20,
  cache_read_input_tokens: 10,
  cache_creation_input_tokens: 5,
});

/** One logged request. */
export interface LoggedRequest {
  readonly method: string;
  readonly path: string;
  readonly model: string | null;
  readonly stream: boolean;
  readonly tools: number;
  /** Messages in the request (the conversation so far). */
  readonly messages: number;
  /** What the fake answered. */
  readonly reply: "tool_use" | "text" | "429" | "404";
  /** The directive-bearing prompt (first line), when one was found. */
  readonly prompt: string | null;
}

/** A running fake. */
export interface AnthropicFake extends AsyncDisposable {
  readonly baseUrl: string;
  readonly requests: LoggedRequest[];
}

const BASH = /\[\[bash: ([^\]]+)\]\]/;
const REJECT = /\[\[429:(\d+)\]\]/;

/** Options of {@link anthropicFake}. */
export interface AnthropicFakeOptions {
  /** The command of the first reply's `Bash` call when the prompt carries no directive. */
  readonly bash?: string;
  /** Sees each log entry as it is made. */
  readonly onRequest?: (r: LoggedRequest) => void;
}

/** Starts the fake. */
export function anthropicFake(options: AnthropicFakeOptions = {}): AnthropicFake {
  const { onRequest } = options;
  const requests: LoggedRequest[] = [];
  const rejected = new Map<string, number>();
  let ids = 0;
  const log = (r: LoggedRequest) => {
    requests.push(r);
    onRequest?.(r);
  };
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    const url = new URL(req.url);
    if (req.method !== "POST" || url.pathname !== "/v1/messages") {
      await req.body?.cancel();
      const entry = { method: req.method, path: url.pathname, model: null, stream: false };
      log({ ...entry, tools: 0, messages: 0, reply: "404", prompt: null });
      return Response.json({ type: "error", error: { type: "not_found_error" } }, {
        status: 404,
      });
    }
    const body: Json = await req.json();
    const tools = Array.isArray(body.tools) ? body.tools.length : 0;
    const entry = { method: "POST", path: url.pathname, model: body.model ?? null };
    const last = body.messages?.at(-1);
    const result = toolResultOf(last);
    const prompt = result === undefined ? promptOf(last) : undefined;
    const messages = Array.isArray(body.messages) ? body.messages.length : 0;
    const base = {
      ...entry,
      stream: body.stream === true,
      tools,
      messages,
      prompt: prompt ?? null,
    };
    const reject = prompt === undefined ? null : REJECT.exec(prompt);
    if (reject !== null) {
      const done = rejected.get(prompt!) ?? 0;
      if (done < Number(reject[1])) {
        rejected.set(prompt!, done + 1);
        log({ ...base, reply: "429" });
        return Response.json({
          type: "error",
          error: { type: "rate_limit_error", message: "Rate limited by the fake" },
        }, { status: 429, headers: { "retry-after": "0" } });
      }
    }
    const directive = prompt === undefined ? null : BASH.exec(prompt);
    const bash = directive?.[1] ??
      (prompt !== undefined && options.bash !== undefined ? options.bash : undefined);
    const id = `msg_fake_${++ids}`;
    let blocks: Json[];
    if (bash !== undefined && tools > 0) {
      blocks = [
        { type: "text", text: "I will run a command." },
        {
          type: "tool_use",
          id: `toolu_fake_${ids}`,
          name: "Bash",
          input: { command: bash, description: "Run the requested command" },
        },
      ];
      log({ ...base, reply: "tool_use" });
    } else {
      const text = result !== undefined
        ? `done: ${result.split("\n")[0]}`
        : `ok: ${(prompt ?? "").split("\n")[0]}`;
      blocks = [{ type: "text", text }];
      log({ ...base, reply: "text" });
    }
    const stop = blocks.at(-1).type === "tool_use" ? "tool_use" : "end_turn";
    const message = { id, model: body.model, blocks, stop };
    if (body.stream !== true) return Response.json(plainMessage(message));
    return new Response(sse(message), { headers: { "content-type": "text/event-stream" } });
  });
  return {
    baseUrl: `http://127.0.0.1:${server.addr.port}`,
    requests,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/** The text of a user message's last tool result, if its content carries one. */
function toolResultOf(message: Json): string | undefined {
  if (message?.role !== "user" || !Array.isArray(message.content)) return undefined;
  const result = message.content.findLast((b: Json) => b?.type === "tool_result");
  if (result === undefined) return undefined;
  if (typeof result.content === "string") return result.content;
  return (result.content ?? []).map((b: Json) => b?.text ?? "").join("");
}

/** The user text blocks joined, reminders and all (directives may sit anywhere). */
function promptOf(message: Json): string | undefined {
  if (message?.role !== "user") return undefined;
  if (typeof message.content === "string") return message.content;
  const texts = (message.content ?? []).filter((b: Json) => b?.type === "text");
  // Claude Code prepends reminders; the user's prompt is the last text block.
  return texts.at(-1)?.text;
}

interface FakeMessage {
  readonly id: string;
  readonly model: string;
  readonly blocks: Json[];
  readonly stop: string;
}

function plainMessage(m: FakeMessage): Json {
  return {
    id: m.id,
    type: "message",
    role: "assistant",
    model: m.model,
    content: m.blocks,
    stop_reason: m.stop,
    stop_sequence: null,
    usage: FAKE_USAGE,
  };
}

function sse(m: FakeMessage): string {
  const out: string[] = [];
  const event = (type: string, data: Json) =>
    out.push(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  event("message_start", {
    message: {
      ...plainMessage(m),
      content: [],
      stop_reason: null,
      usage: { ...FAKE_USAGE, output_tokens: 1 },
    },
  });
  m.blocks.forEach((block, index) => {
    if (block.type === "text") {
      event("content_block_start", { index, content_block: { type: "text", text: "" } });
      event("content_block_delta", { index, delta: { type: "text_delta", text: block.text } });
    } else {
      event("content_block_start", { index, content_block: { ...block, input: {} } });
      event("content_block_delta", {
        index,
        delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) },
      });
    }
    event("content_block_stop", { index });
  });
  event("message_delta", {
    delta: { stop_reason: m.stop, stop_sequence: null },
    usage: { output_tokens: FAKE_USAGE.output_tokens },
  });
  event("message_stop", {});
  return out.join("");
}
