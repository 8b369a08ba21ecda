/**
 * Reads the NDJSON stream of `codex exec --json` (docs/coding_agents.md "Codex"): `thread.started`
 * gives the session id; `item.*` events give messages, reasoning and tool occurrences (commands,
 * file changes, MCP calls, web searches); `turn.completed` gives the usage, which on a resumed
 * thread is the thread's running total; `error` and `turn.failed` give failures.
 */
import type { JsonValue } from "../../_shared/mod.ts";
import type { StreamEvent, Usage } from "../types.ts";
import { type Json, objectLines } from "./_stream_common.ts";

/** What one run's stream says. */
export interface CodexStream {
  readonly events: StreamEvent[];
  /** The thread id of `thread.started`. */
  readonly threadId?: string;
  /** The usage of `turn.completed`: the thread's total so far, not this turn's. */
  readonly totalUsage?: Usage;
  /** The message of `turn.failed` (else of the last `error`) when the turn did not complete. */
  readonly failure?: string;
  /** Whether the agent did anything observable (an item started or completed). */
  readonly worked: boolean;
  /** Item types the mapping does not know, and lines that are not JSON objects. */
  readonly unmapped: readonly string[];
}

/**
 * Messages that prove the endpoint pushed back (rate limit, overload) rather than failed: a send
 * that fails with one before any item is a rejected send.
 */
export const CODEX_PUSHBACK_REGEXP =
  /\b429\b|rate.?limit|too many requests|overloaded|at capacity|\b529\b/i;

/** Maps the stdout of one run; unknown lines and item types are listed in `unmapped`. */
export function readCodexStream(stdout: string): CodexStream {
  const state = new StreamState();
  for (const value of objectLines(stdout, state.unmapped)) state.read(value);
  return state.result();
}

/** This turn's usage: the thread total minus the total after the previous turn of the line. */
export function turnUsage(total: Usage, previous: Usage | undefined): Usage {
  if (previous === undefined) return total;
  const out: Usage = {};
  for (const [key, value] of Object.entries(total) as [keyof Usage, number][]) {
    out[key] = Math.max(0, value - (previous[key] ?? 0));
  }
  return out;
}

class StreamState {
  readonly events: StreamEvent[] = [];
  readonly unmapped: string[] = [];
  readonly #started = new Set<string>();
  readonly #finished = new Set<string>();
  #threadId: string | undefined;
  #usage: Usage | undefined;
  #error: string | undefined;
  #turnFailed: string | undefined;
  #worked = false;

  read(value: Json): void {
    switch (value.type) {
      case "thread.started":
        if (typeof value.thread_id === "string") this.#threadId = value.thread_id;
        return;
      case "turn.completed":
        this.#usage = usageOf(value.usage);
        return;
      case "turn.failed":
        this.#turnFailed = messageOf(value.error) ?? "the turn failed";
        return;
      case "error":
        this.#error = messageOf(value) ?? "error";
        this.events.push({ type: "error", message: this.#error });
        return;
      case "item.started":
        this.#worked = true;
        this.#start(value.item);
        return;
      case "item.completed":
        // An error item is a warning of the CLI (e.g. an unknown model slug), not work.
        if (value.item?.type !== "error") this.#worked = true;
        this.#complete(value.item);
        return;
      default:
        // turn.started, item.updated (todo lists): nothing to record.
        return;
    }
  }

  result(): CodexStream {
    const failure = this.#turnFailed ??
      (this.#usage === undefined ? this.#error : undefined);
    return {
      events: this.events,
      worked: this.#worked,
      unmapped: this.unmapped,
      ...(this.#threadId === undefined ? {} : { threadId: this.#threadId }),
      ...(this.#usage === undefined ? {} : { totalUsage: this.#usage }),
      ...(failure === undefined ? {} : { failure }),
    };
  }

  #start(item: Json): void {
    const tool = toolOf(item);
    if (tool === undefined || this.#started.has(item.id)) return;
    this.#started.add(item.id);
    this.events.push({
      type: "operation.started",
      operationId: item.id,
      operation: { kind: "tool", name: tool.name, input: tool.input },
    });
  }

  #complete(item: Json): void {
    switch (item?.type) {
      case "agent_message":
        if (typeof item.text === "string") {
          this.events.push({ type: "message", role: "assistant", text: item.text });
        }
        return;
      case "reasoning":
        if (typeof item.text === "string") this.events.push({ type: "thinking", text: item.text });
        return;
      case "error":
        this.events.push({ type: "error", message: messageOf(item) ?? "error" });
        return;
      case "todo_list":
        return;
    }
    const tool = toolOf(item);
    if (tool === undefined) {
      this.unmapped.push(`item ${JSON.stringify(String(item?.type))}`);
      return;
    }
    if (this.#finished.has(item.id)) return;
    this.#start(item);
    this.#finished.add(item.id);
    this.events.push({
      type: "operation.finished",
      operationId: item.id,
      kind: "tool",
      status: tool.status,
      ...(tool.output === undefined ? {} : { output: tool.output }),
    });
  }
}

interface ToolView {
  readonly name: string;
  readonly input: JsonValue;
  readonly status: "completed" | "failed" | "rejected";
  readonly output?: JsonValue;
}

/** The tool occurrence an item describes, or undefined for other items. */
function toolOf(item: Json): ToolView | undefined {
  if (typeof item?.id !== "string" || item.id === "") return undefined;
  switch (item.type) {
    case "command_execution": {
      const exitCode = typeof item.exit_code === "number" ? item.exit_code : null;
      const failed = item.status === "failed" || (exitCode !== null && exitCode !== 0);
      return {
        name: "command_execution",
        input: { command: String(item.command ?? "") },
        status: item.status === "declined" ? "rejected" : failed ? "failed" : "completed",
        output: { exitCode, output: String(item.aggregated_output ?? "") },
      };
    }
    case "file_change":
      return {
        name: "file_change",
        input: { changes: json(item.changes) ?? [] },
        status: item.status === "failed" ? "failed" : "completed",
      };
    case "mcp_tool_call": {
      const error = messageOf(item.error);
      return {
        name: `mcp__${item.server}__${item.tool}`,
        input: json(item.arguments) ?? {},
        status: item.status === "failed" || error !== undefined ? "failed" : "completed",
        ...(error !== undefined
          ? { output: { error } }
          : item.result === null || item.result === undefined
          ? {}
          : { output: json(item.result) ?? null }),
      };
    }
    case "web_search":
      return {
        name: "web_search",
        input: { query: String(item.query ?? "") },
        status: "completed",
      };
    default:
      return undefined;
  }
}

function usageOf(u: Json): Usage | undefined {
  if (typeof u !== "object" || u === null) return undefined;
  const out: Usage = {};
  const set = (key: keyof Usage, value: unknown) => {
    if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) out[key] = value;
  };
  set("inputTokens", u.input_tokens);
  set("outputTokens", u.output_tokens);
  set("cacheReadTokens", u.cached_input_tokens);
  set("cacheCreationTokens", u.cache_write_input_tokens);
  set("reasoningTokens", u.reasoning_output_tokens);
  return out;
}

function messageOf(value: Json): string | undefined {
  return typeof value?.message === "string" ? value.message : undefined;
}

/** A JSON copy of a value read from JSON (undefined stays undefined). */
function json(value: unknown): JsonValue | undefined {
  return value === undefined ? undefined : structuredClone(value) as JsonValue;
}
