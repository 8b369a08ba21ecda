/**
 * The wire side of `openAICompatibleAgent` (authoring.md §8.2 rules 4–5): one non-streaming
 * chat-completions request, the classification of its failures, and the parsing of its reply.
 */
import { realClock } from "../_shared/mod.ts";
import { errorMessage } from "../_shared/mod.ts";
import { isPlainObject, type JsonValue } from "../_shared/mod.ts";
import { SendRejectedError } from "./send_failure.ts";
import type { Usage } from "./types.ts";

/** One wire tool call, normalised: arguments are always a string. */
export interface WireToolCall {
  readonly id: string;
  readonly type: "function";
  readonly function: { readonly name: string; readonly arguments: string };
}

/** One message of the conversation as the endpoint expects it. */
export type ChatMessage =
  | { readonly role: "system" | "user"; readonly content: string }
  | {
    readonly role: "assistant";
    readonly content: string | null;
    readonly tool_calls?: readonly WireToolCall[];
  }
  | { readonly role: "tool"; readonly tool_call_id: string; readonly content: string };

/** A tool call the model asked for. */
export interface RequestedCall {
  /** The wire call, as kept in the history; the tool message answers its id. */
  readonly wire: WireToolCall;
  readonly name: string;
  /** The parsed arguments, or the raw string when unparsable. */
  readonly input: JsonValue;
}

/** What one successful request returned. */
export interface CompletionReply {
  readonly content: string | undefined;
  readonly reasoning: string | undefined;
  readonly calls: readonly RequestedCall[];
  readonly finishReason: string | undefined;
  /** `undefined` when the response had no `usage` object. */
  readonly usage: Usage | undefined;
  /** The assistant message to append to the history. */
  readonly message: ChatMessage;
}

/** One request to make. */
interface CompletionRequest {
  readonly agentName: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Sent as `Authorization: Bearer`; removed from every message. */
  readonly apiKey: string | undefined;
  readonly payload: Record<string, JsonValue>;
  readonly signal: AbortSignal;
  /** True for the first request of a send: only it may be a proven rejection. */
  readonly first: boolean;
}

/** At most this many characters of a response body appear in an error message. */
const BODY_LIMIT = 500;
/** Fetch failures that prove that nothing reached the endpoint: refused connection, DNS. */
const UNREACHED_REGEXP =
  /connection refused|os error 111|econnrefused|dns error|failed to lookup address|enotfound|name or service not known|nodename nor servname/i;

/**
 * Posts one chat-completions request and parses its reply. Throws `SendRejectedError` for a 429,
 * a refused connection or a DNS failure on the first request of a send; every other failure is a
 * plain `Error` holding the status and at most 500 characters of the body, never the key. Aborts
 * rethrow the signal's reason.
 */
export async function postCompletion(request: CompletionRequest): Promise<CompletionReply> {
  const { signal } = request;
  const headers = new Headers(request.headers);
  headers.set("content-type", "application/json");
  if (request.apiKey !== undefined) headers.set("authorization", `Bearer ${request.apiKey}`);
  let response: Response;
  try {
    response = await fetch(request.url, {
      method: "POST",
      headers,
      body: JSON.stringify(request.payload),
      signal,
    });
  } catch (error) {
    if (signal.aborted) throw signal.reason ?? error;
    throw unreachable(request, error);
  }
  const text = await readBody(request, response);
  if (!response.ok) throw httpFailure(request, response, text);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(
      fail(request, `unparsable response (HTTP ${response.status}): ${clip(request, text)}`),
      { cause: error },
    );
  }
  return parseReply(request, json);
}

function fail(request: CompletionRequest, detail: string): string {
  return redact(`Cannot send to agent "${request.agentName}": ${detail}`, request.apiKey);
}

function unreachable(request: CompletionRequest, error: unknown): Error {
  const detail = causeChain(error);
  const message = fail(request, `POST ${request.url} failed: ${detail}`);
  if (request.first && UNREACHED_REGEXP.test(detail)) {
    return new SendRejectedError(message, { reason: "network", cause: error });
  }
  return new Error(message, { cause: error });
}

/** The messages of an error and its causes, joined: fetch hides the reason in `cause`. */
function causeChain(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && current !== null && depth < 5; depth++) {
    parts.push(errorMessage(current));
    current = (current as { cause?: unknown }).cause;
  }
  return parts.join(": ");
}

async function readBody(request: CompletionRequest, response: Response): Promise<string> {
  try {
    return await response.text();
  } catch (error) {
    if (request.signal.aborted) throw request.signal.reason ?? error;
    // A rejection status is proven by the status line alone; the body is only detail.
    if (!response.ok) return "";
    throw new Error(
      fail(request, `connection lost while reading the response: ${causeChain(error)}`),
      { cause: error },
    );
  }
}

function httpFailure(request: CompletionRequest, response: Response, text: string): Error {
  const message = fail(
    request,
    `HTTP ${response.status} from ${request.url}: ${clip(request, text)}`,
  );
  if (!request.first || response.status !== 429) return new Error(message);
  const retryAfterMs = retryAfter(response.headers);
  return new SendRejectedError(
    message,
    retryAfterMs === undefined ? { reason: "rate_limit" } : { reason: "rate_limit", retryAfterMs },
  );
}

/**
 * `Retry-After` in milliseconds: delta-seconds, or an HTTP date measured from the response's
 * `Date` header (the server's clock) or, without one, from the current time.
 */
function retryAfter(headers: Headers): number | undefined {
  const value = headers.get("retry-after")?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  if (!Number.isFinite(at)) return undefined;
  const date = Date.parse(headers.get("date") ?? "");
  const now = Number.isFinite(date) ? date : realClock.now();
  return Math.max(0, at - now);
}

function clip(request: CompletionRequest, text: string): string {
  const clean = redact(text, request.apiKey).trim();
  if (clean === "") return "(empty body)";
  return clean.length > BODY_LIMIT ? `${clean.slice(0, BODY_LIMIT)}…` : clean;
}

function redact(text: string, apiKey: string | undefined): string {
  return apiKey === undefined ? text : text.replaceAll(apiKey, "[redacted]");
}

/** Reads the first choice of a response; a malformed response throws. */
function parseReply(request: CompletionRequest, json: unknown): CompletionReply {
  const choice = isPlainObject(json) && Array.isArray(json.choices) ? json.choices[0] : undefined;
  const message = isPlainObject(choice) ? choice.message : undefined;
  if (!isPlainObject(choice) || !isPlainObject(message)) {
    throw new Error(
      fail(
        request,
        `unexpected response: no choices[0].message in ${clip(request, JSON.stringify(json))}`,
      ),
    );
  }
  const wire = toolCallsOf(request, message.tool_calls);
  const content = typeof message.content === "string" && message.content !== ""
    ? message.content
    : undefined;
  const reasoning = [message.reasoning_content, message.reasoning].find(
    (r): r is string => typeof r === "string" && r !== "",
  );
  const history: ChatMessage = wire.length > 0
    ? { role: "assistant", content: content ?? null, tool_calls: wire }
    : { role: "assistant", content: content ?? "" };
  return {
    content,
    reasoning,
    calls: wire.map((call) => ({
      wire: call,
      name: call.function.name,
      input: parseArguments(call.function.arguments),
    })),
    finishReason: typeof choice.finish_reason === "string" ? choice.finish_reason : undefined,
    usage: usageOf(isPlainObject(json) ? json.usage : undefined),
    message: history,
  };
}

function toolCallsOf(request: CompletionRequest, value: unknown): WireToolCall[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    throw new Error(fail(request, "unexpected response: tool_calls is not an array"));
  }
  return value.map((entry, i) => {
    const fn = isPlainObject(entry) ? entry.function : undefined;
    if (!isPlainObject(entry) || !isPlainObject(fn) || typeof fn.name !== "string") {
      throw new Error(
        fail(request, `unexpected response: tool_calls[${i}] has no function name`),
      );
    }
    const args = typeof fn.arguments === "string"
      ? fn.arguments
      : JSON.stringify(fn.arguments ?? {});
    // Some servers omit ids; the tool message still needs one to answer.
    const id = typeof entry.id === "string" && entry.id !== "" ? entry.id : `call_${i}`;
    return { id, type: "function", function: { name: fn.name, arguments: args } };
  });
}

function parseArguments(raw: string): JsonValue {
  try {
    return JSON.parse(raw) as JsonValue;
  } catch {
    return raw;
  }
}

/** Maps one response's `usage` (rule 4); fields the response lacks stay absent. */
function usageOf(raw: unknown): Usage | undefined {
  if (!isPlainObject(raw)) return undefined;
  const out: Usage = {};
  const set = (field: keyof Usage, value: unknown) => {
    if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) out[field] = value;
  };
  set("inputTokens", raw.prompt_tokens);
  set("outputTokens", raw.completion_tokens);
  const prompt = raw.prompt_tokens_details;
  if (isPlainObject(prompt)) set("cacheReadTokens", prompt.cached_tokens);
  const completion = raw.completion_tokens_details;
  if (isPlainObject(completion)) set("reasoningTokens", completion.reasoning_tokens);
  return out;
}
