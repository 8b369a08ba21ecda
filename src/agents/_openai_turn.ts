/**
 * The turn under construction of `openAICompatibleAgent` (authoring.md §8.2 rules 2–4): events,
 * usage and history of one send, tool execution between rounds, and the final turn.
 */
import { errorMessage } from "../_shared/mod.ts";
import { findNonJson, type JsonValue } from "../_shared/mod.ts";
import type { ChatMessage, CompletionReply, RequestedCall, WireToolCall } from "./_openai_http.ts";
import type { OpenAITool } from "./_openai_options.ts";
import type { AgentContext, StreamEvent, Turn } from "./types.ts";
import { sumUsage } from "./usage.ts";

/** What one send builds before it commits anything to the session. */
export interface TurnDraft {
  readonly events: StreamEvent[];
  readonly usages: (CompletionReply["usage"])[];
  /** Operation ids used in this turn. */
  readonly ids: Set<string>;
  /** The history: earlier turns, this turn's user message, then every reply and tool result. */
  readonly messages: ChatMessage[];
  /** Wire calls that got no tool message (pending). */
  readonly unanswered: Set<WireToolCall>;
}

/** A draft that continues `history` with the user's `text`. */
export function createDraft(history: readonly ChatMessage[], text: string): TurnDraft {
  return {
    events: [],
    usages: [],
    ids: new Set(),
    messages: [...history, { role: "user", content: text }],
    unanswered: new Set(),
  };
}

/** Records a reply's thinking and message, its usage, and the reply in the history. */
export function recordReply(draft: TurnDraft, reply: CompletionReply): void {
  draft.usages.push(reply.usage);
  draft.messages.push(reply.message);
  if (reply.reasoning !== undefined) {
    draft.events.push({ type: "thinking", text: reply.reasoning });
  }
  if (reply.content !== undefined) {
    draft.events.push({ type: "message", role: "assistant", text: reply.content });
  }
}

/** Emits a tool start with a unique operation id; the call is unanswered until executed. */
export function startCall(draft: TurnDraft, call: RequestedCall): string {
  // Some servers reuse ids across rounds ("call_0"); operation ids must be unique per turn.
  let operationId = call.wire.id;
  for (let n = 2; draft.ids.has(operationId); n++) operationId = `${call.wire.id}-${n}`;
  draft.ids.add(operationId);
  draft.unanswered.add(call.wire);
  draft.events.push({
    type: "operation.started",
    operationId,
    operation: { kind: "tool", name: call.name, input: call.input },
  });
  return operationId;
}

/** Runs each call that has `execute`, in order; returns true when one stays pending. */
export async function runCalls(
  draft: TurnDraft,
  calls: readonly RequestedCall[],
  options: { readonly tools: readonly OpenAITool[]; readonly ctx: AgentContext },
): Promise<boolean> {
  const { tools, ctx } = options;
  let pending = false;
  for (const call of calls) {
    const operationId = startCall(draft, call);
    const execute = tools.find((tool) => tool.name === call.name)?.execute;
    if (execute === undefined) {
      pending = true;
      continue;
    }
    ctx.progress({ message: `tool ${call.name}` });
    let result: unknown;
    let thrown: { readonly error: unknown } | undefined;
    try {
      result = await execute(structuredClone(call.input), ctx);
    } catch (error) {
      if (ctx.signal.aborted) throw ctx.signal.reason ?? error;
      thrown = { error };
    }
    // A throwing tool is a failed occurrence the model hears about; a non-JSON result is a bug.
    const status = thrown === undefined ? "completed" : "failed";
    const output = thrown === undefined
      ? checkResult(call.name, result)
      : { error: errorMessage(thrown.error) };
    draft.events.push({ type: "operation.finished", operationId, kind: "tool", status, output });
    draft.unanswered.delete(call.wire);
    draft.messages.push({
      role: "tool",
      tool_call_id: call.wire.id,
      content: typeof output === "string" ? output : JSON.stringify(output),
    });
  }
  return pending;
}

function checkResult(name: string, value: unknown): JsonValue {
  const bad = findNonJson(value);
  if (bad === undefined) return value as JsonValue;
  throw new TypeError(
    `Cannot use the result of tool "${name}": execute must return JSON, found a non-JSON value at ${
      bad === "" ? "the top level" : bad
    }`,
  );
}

/** Builds the turn from the draft; `failure` makes it `failed` with an error event. */
export function buildTurn(draft: TurnDraft, failure: string | undefined): Turn {
  const turn: Turn = {
    events: draft.events,
    status: failure === undefined ? "completed" : "failed",
  };
  if (failure !== undefined) turn.events.push({ type: "error", message: failure });
  const usages = draft.usages;
  if (usages.every((u) => u !== undefined)) {
    turn.usage = { ...sumUsage(usages), requests: usages.length };
  } else {
    turn.evidenceCoverage = {
      usage: { status: "unavailable", reason: "a response of this turn reported no usage" },
    };
  }
  return turn;
}

/**
 * The history without tool calls that got no tool message: an endpoint refuses a conversation
 * whose assistant tool calls are unanswered, so a later send could not continue it.
 */
export function answeredHistory(draft: TurnDraft): ChatMessage[] {
  if (draft.unanswered.size === 0) return draft.messages;
  const out: ChatMessage[] = [];
  for (const message of draft.messages) {
    if (message.role !== "assistant" || message.tool_calls === undefined) {
      out.push(message);
      continue;
    }
    const kept = message.tool_calls.filter((call) => !draft.unanswered.has(call));
    if (kept.length > 0) out.push({ ...message, tool_calls: kept });
    else if (message.content !== null) out.push({ role: "assistant", content: message.content });
  }
  return out;
}
