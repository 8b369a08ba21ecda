/**
 * Checks the `events` of a returned turn (authoring.md §7.3, §7.4 rules 1–4) and derives its tool
 * calls. Only the MUST variants are valid; LATER variants and adapter-written user messages are
 * not. Events are copied field by field, so the record never shares objects with the adapter.
 */
import {
  choices,
  expected,
  jsonProblem,
  objectProblem,
  type Problem,
  problem,
} from "./_problem.ts";
import type { JsonValue } from "../_shared/mod.ts";
import type {
  OperationFinishedEvent,
  OperationStartedEvent,
  StreamEvent,
  ToolCall,
} from "./types.ts";

/** The checked events and the tool calls they describe. */
interface CheckedEvents {
  readonly events: StreamEvent[];
  readonly toolCalls: ToolCall[];
}

const TYPES = ["message", "operation.started", "operation.finished", "thinking", "error"];
const FINISH_STATUSES = ["completed", "failed", "rejected"];

interface Started {
  readonly at: number;
  readonly event: OperationStartedEvent;
  finish?: { readonly at: number; readonly event: OperationFinishedEvent };
}

/** Checks `value` as a turn's events; returns the first problem or the copied events. */
export function checkEvents(value: unknown): Problem | CheckedEvents {
  if (!Array.isArray(value)) return expected("events", "an array of events", value);
  const events: StreamEvent[] = [];
  const started = new Map<string, Started>();
  for (let i = 0; i < value.length; i++) {
    const path = `events[${i}]`;
    const event = checkEvent(value[i], path);
    if ("path" in event) return event;
    if (event.type === "operation.started") {
      const earlier = started.get(event.operationId);
      if (earlier) {
        return problem(
          `${path}.operationId`,
          `repeats the start of ${JSON.stringify(event.operationId)} at events[${earlier.at}]`,
        );
      }
      started.set(event.operationId, { at: i, event });
    } else if (event.type === "operation.finished") {
      const bad = linkFinish(started.get(event.operationId), event, i);
      if (bad) return bad;
    }
    events.push(event);
  }
  return { events, toolCalls: [...started.values()].map(toolCall) };
}

function linkFinish(
  start: Started | undefined,
  event: OperationFinishedEvent,
  at: number,
): Problem | undefined {
  const path = `events[${at}]`;
  const id = JSON.stringify(event.operationId);
  if (!start) {
    return problem(
      `${path}.operationId`,
      `finishes ${id}, which has no earlier start in this turn`,
    );
  }
  if (start.finish) {
    return problem(
      `${path}.operationId`,
      `finishes ${id} again (first at events[${start.finish.at}])`,
    );
  }
  if (start.event.operation.kind !== event.kind) {
    return problem(
      `${path}.kind`,
      `must be ${JSON.stringify(start.event.operation.kind)} like its start at events[${start.at}]`,
    );
  }
  start.finish = { at, event };
  return undefined;
}

function toolCall(entry: Started): ToolCall {
  const { event, finish } = entry;
  const call: ToolCall = {
    operationId: event.operationId,
    name: event.operation.name,
    input: event.operation.input,
    status: finish?.event.status ?? "pending",
  };
  const output = finish?.event.output;
  return output === undefined ? call : { ...call, output };
}

function checkEvent(value: unknown, path: string): Problem | StreamEvent {
  const type = (value as { type?: unknown } | null)?.type;
  if (typeof value !== "object" || value === null || !TYPES.includes(type as string)) {
    return typeof value === "object" && value !== null
      ? expected(`${path}.type`, `one of ${choices(TYPES)}`, type)
      : expected(path, "an event object", value);
  }
  switch (type) {
    case "message":
      return checkMessage(value, path);
    case "thinking":
      return checkText(value, path, "thinking", "text");
    case "error":
      return checkText(value, path, "error", "message");
    case "operation.started":
      return checkStart(value, path);
    default:
      return checkFinish(value, path);
  }
}

function checkMessage(value: object, path: string): Problem | StreamEvent {
  const bad = objectProblem(value, path, ["type", "role", "text"], "an event object");
  if (bad) return bad;
  const { role, text } = value as Record<string, unknown>;
  if (role === "user") {
    return problem(`${path}.role`, `must not be "user": niceeval writes the user messages`);
  }
  if (role !== "assistant") return expected(`${path}.role`, `"assistant"`, role);
  if (typeof text !== "string") return expected(`${path}.text`, "a string", text);
  return { type: "message", role, text };
}

function checkText(
  value: object,
  path: string,
  type: "thinking" | "error",
  field: "text" | "message",
): Problem | StreamEvent {
  const bad = objectProblem(value, path, ["type", field], "an event object");
  if (bad) return bad;
  const text = (value as Record<string, unknown>)[field];
  if (typeof text !== "string") return expected(`${path}.${field}`, "a string", text);
  return type === "thinking" ? { type, text } : { type, message: text };
}

function checkOperationId(value: unknown, path: string): Problem | undefined {
  if (typeof value === "string" && value.length > 0) return undefined;
  return expected(`${path}.operationId`, "a non-empty string", value);
}

function checkStart(value: object, path: string): Problem | OperationStartedEvent {
  const bad = objectProblem(value, path, ["type", "operationId", "operation"], "an event object");
  if (bad) return bad;
  const { operationId, operation } = value as Record<string, unknown>;
  const badId = checkOperationId(operationId, path);
  if (badId) return badId;
  const at = `${path}.operation`;
  const badOp = objectProblem(operation, at, ["kind", "name", "input"], "an operation object");
  if (badOp) return badOp;
  const { kind, name, input } = operation as Record<string, unknown>;
  if (kind !== "tool") return expected(`${at}.kind`, `"tool"`, kind);
  if (typeof name !== "string" || name.length === 0) {
    return expected(`${at}.name`, "a non-empty string", name);
  }
  if (input === undefined) return problem(`${at}.input`, "is required (JSON; use {} for none)");
  const badInput = jsonProblem(input, `${at}.input`);
  if (badInput) return badInput;
  return {
    type: "operation.started",
    operationId: operationId as string,
    operation: { kind, name, input: structuredClone(input) as JsonValue },
  };
}

function checkFinish(value: object, path: string): Problem | OperationFinishedEvent {
  const known = ["type", "operationId", "kind", "status", "output"];
  const bad = objectProblem(value, path, known, "an event object");
  if (bad) return bad;
  const { operationId, kind, status, output } = value as Record<string, unknown>;
  const badId = checkOperationId(operationId, path);
  if (badId) return badId;
  if (kind !== "tool") return expected(`${path}.kind`, `"tool"`, kind);
  if (!FINISH_STATUSES.includes(status as string)) {
    return expected(`${path}.status`, `one of ${choices(FINISH_STATUSES)}`, status);
  }
  const event: OperationFinishedEvent = {
    type: "operation.finished",
    operationId: operationId as string,
    kind,
    status: status as OperationFinishedEvent["status"],
  };
  if (output === undefined) return event;
  const badOutput = jsonProblem(output, `${path}.output`);
  return badOutput ?? { ...event, output: structuredClone(output) as JsonValue };
}
