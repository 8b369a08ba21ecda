/**
 * The standard agent event stream and token usage (authoring.md §7.3): plain data that agents
 * produce, assertions read and the Record persists.
 */
import type { JsonValue } from "./json.ts";

/** Token usage as the protocol reports it; never invented. */
export interface Usage {
  inputTokens?: number;
  outputTokens?: number;
  cacheReadTokens?: number;
  cacheCreationTokens?: number;
  reasoningTokens?: number;
  requests?: number;
  costUSD?: number;
}

/** Every usage field, in the order reports list them; all are counts except `costUSD`. */
export const USAGE_FIELDS: readonly (keyof Usage)[] = Object.freeze([
  "inputTokens",
  "outputTokens",
  "cacheReadTokens",
  "cacheCreationTokens",
  "reasoningTokens",
  "requests",
  "costUSD",
]);

/** An assistant or user message. */
export interface MessageEvent {
  type: "message";
  role: "assistant" | "user";
  text: string;
}

/** A tool call started. */
export interface OperationStartedEvent {
  type: "operation.started";
  operationId: string;
  operation: { kind: "tool"; name: string; input: JsonValue };
}

/** A tool call finished. */
export interface OperationFinishedEvent {
  type: "operation.finished";
  operationId: string;
  kind: "tool";
  status: "completed" | "failed" | "rejected";
  output?: JsonValue;
}

/** Reasoning text, for display only. */
export interface ThinkingEvent {
  type: "thinking";
  text: string;
}

/** An error reported by the agent, for display only. */
export interface ErrorEvent {
  type: "error";
  message: string;
}

/** One event of a turn's standard stream (authoring.md §7.3). */
export type StreamEvent =
  | MessageEvent
  | OperationStartedEvent
  | OperationFinishedEvent
  | ThinkingEvent
  | ErrorEvent;
