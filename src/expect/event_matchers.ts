/** Event matches (authoring.md §4.2 rule 5). */
import { isPlainObject } from "../_shared/mod.ts";
import type { StreamEvent, ToolCall } from "../agents/mod.ts";
import { preview } from "./_describe.ts";
import { createBooleanMatch, evaluateBoolean, requireBooleanMatch } from "./_protocol.ts";
import { includes } from "./text_matchers.ts";
import type { BooleanMatch, EventMatch, ToolMatch } from "./types.ts";

/** Options of {@link eventMatch} for `message` events. */
export interface MessageEventOptions {
  readonly role?: "assistant" | "user";
  /** A string means `includes(text)`. */
  readonly text?: string | BooleanMatch<string, unknown>;
}

/** Options of {@link eventMatch} for `operation.started` / `operation.finished` events. */
export interface OperationEventOptions {
  readonly tool?: ToolMatch;
}

type EventType = "message" | "operation.started" | "operation.finished";

/**
 * Selects stream events for `event`, `notEvent` and `eventOrder`: messages (by role and text) or
 * tool operations (by a tool match evaluated on the event's occurrence).
 *
 * @param type `message`, `operation.started` or `operation.finished`.
 * @param options Message `role` and `text`, or operation `tool`.
 * @returns An event match.
 * @example
 * ```ts
 * import { eventMatch, toolMatch } from "niceeval/expect";
 * const saidSunny = eventMatch("message", { role: "assistant", text: "sunny" });
 * const weatherDone = eventMatch("operation.finished", { tool: toolMatch("get_weather") });
 * ```
 */
export function eventMatch(type: "message", options?: MessageEventOptions): EventMatch;
export function eventMatch(
  type: "operation.started" | "operation.finished",
  options?: OperationEventOptions,
): EventMatch;
export function eventMatch(type: EventType, options?: unknown): EventMatch {
  if (options !== undefined && !isPlainObject(options)) {
    throw new TypeError("Cannot create eventMatch(): options must be an object");
  }
  const opts = (options ?? {}) as Record<string, unknown>;
  if (type === "message") return messageMatch(opts);
  if (type === "operation.started" || type === "operation.finished") {
    return operationMatch(type, opts);
  }
  throw new TypeError(
    `Cannot create eventMatch(): event type ${JSON.stringify(type)} is not selectable`,
  );
}

function checkKeys(opts: Record<string, unknown>, allowed: readonly string[]): void {
  for (const [key, value] of Object.entries(opts)) {
    if (value !== undefined && !allowed.includes(key)) {
      throw new TypeError(`Cannot create eventMatch(): unknown option "${key}"`);
    }
  }
}

function messageMatch(opts: Record<string, unknown>): EventMatch {
  checkKeys(opts, ["role", "text"]);
  const role = opts.role;
  if (role !== undefined && role !== "assistant" && role !== "user") {
    throw new TypeError(`Cannot create eventMatch(): unknown role ${JSON.stringify(role)}`);
  }
  const text = opts.text === undefined
    ? undefined
    : typeof opts.text === "string"
    ? requireBooleanMatch(includes(opts.text), "value", "eventMatch() text")
    : requireBooleanMatch(opts.text, "value", "eventMatch() text");
  const parts = [
    ...(role === undefined ? [] : [`role: ${JSON.stringify(role)}`]),
    ...(text === undefined ? [] : [`text: ${text.name}`]),
  ];
  const detail = parts.length === 0 ? "" : `{ ${parts.join(", ")} }`;
  return createBooleanMatch<EventMatch>("event", eventName("message", detail), {
    base: "eventMatch",
    short: `message${detail ? ` ${detail}` : ""}`,
    channels: ["events", "messages"],
    evaluate(subject, context) {
      const event = subject as StreamEvent;
      if (event?.type !== "message") {
        return { result: "mismatched", received: preview(event?.type) };
      }
      if (role !== undefined && event.role !== role) {
        return { result: "mismatched", expected: role, received: event.role };
      }
      if (text === undefined) return { result: "matched" };
      return evaluateBoolean(text.impl, event.text, context);
    },
  });
}

function operationMatch(type: EventType, opts: Record<string, unknown>): EventMatch {
  checkKeys(opts, ["tool"]);
  const tool = opts.tool === undefined
    ? undefined
    : requireBooleanMatch(opts.tool, "tool", "eventMatch() tool");
  const detail = tool === undefined ? "" : `{ tool: ${tool.name} }`;
  return createBooleanMatch<EventMatch>("event", eventName(type, detail), {
    base: "eventMatch",
    short: `${type}${tool === undefined ? "" : ` ${tool.impl.short}`}`,
    channels: ["events", "actions"],
    evaluate(subject, context) {
      const event = subject as StreamEvent;
      if (event?.type !== type) return { result: "mismatched", received: preview(event?.type) };
      if (tool === undefined) return { result: "matched" };
      const call = context.toolCall((event as { operationId: string }).operationId) ??
        occurrenceOf(event);
      return evaluateBoolean(tool.impl, call, context);
    },
  });
}

function eventName(type: EventType, detail: string): string {
  return `eventMatch(${JSON.stringify(type)}${detail ? `, ${detail}` : ""})`;
}

/** The occurrence an operation event describes, when its turn's tool calls are not at hand. */
function occurrenceOf(event: StreamEvent): ToolCall {
  if (event.type === "operation.started") {
    return {
      operationId: event.operationId,
      name: event.operation.name,
      input: event.operation.input,
      status: "pending",
    };
  }
  const finished = event as Extract<StreamEvent, { type: "operation.finished" }>;
  return {
    operationId: finished.operationId,
    name: "",
    input: null,
    status: finished.status,
    ...(finished.output === undefined ? {} : { output: finished.output }),
  };
}
