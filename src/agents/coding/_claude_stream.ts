/**
 * Maps Claude Code's `stream-json` output (one JSON object per line) to a turn
 * (docs/coding_agents.md "Claude Code"): `system/init` gives the session id; `assistant` lines
 * carry one content block each (text, thinking, tool_use); `user` lines carry tool results; the
 * final `result` line gives status, usage and cost.
 */
import type { StreamEvent, Turn, Usage } from "../types.ts";
import type { CliParsed } from "./_cli_agent.ts";
import { type Json, parseObject } from "./_stream_common.ts";

/** HTTP statuses that prove the endpoint pushed back: rate limit and overloaded. */
const PUSHBACK_STATUSES = [429, 529];
const PUSHBACK_ERRORS = ["rate_limit", "overloaded", "rate_limit_error", "overloaded_error"];

/** What the previous sends of the session reported, for cumulative figures. */
export interface ClaudeStreamState {
  /** The session's cumulative cost after the previous send, when known. */
  readonly previousTotalCostUSD?: number;
}

/**
 * Reads the CLI's stdout. Lines that are not JSON objects are skipped (the CLI may print notices);
 * the result decides status and usage. Without a result line the run counts as failed.
 *
 * @param stdout The CLI's standard output.
 * @param exitCode The CLI's exit code.
 * @returns The turn, the session id and, when proven, a rejection; plus the cumulative cost.
 */
export function parseClaudeStream(
  stdout: string,
  exitCode: number,
  state: ClaudeStreamState = {},
): CliParsed & { readonly totalCostUSD?: number } {
  const events: StreamEvent[] = [];
  const started = new Set<string>();
  const finished = new Set<string>();
  const messageIds = new Set<string>();
  const unmapped = new Set<string>();
  let sessionId: string | undefined;
  let result: Json;
  for (const line of stdout.split("\n")) {
    const value = parseObject(line.trim());
    if (value === undefined) continue;
    if (typeof value.session_id === "string") sessionId ??= value.session_id;
    if (value.type === "assistant") {
      assistant(value, events, { started, messageIds, unmapped });
    } else if (value.type === "user") {
      toolResults(value, events, started, finished);
    } else if (value.type === "result") {
      result = value;
    }
  }
  const base = sessionId === undefined ? {} : { sessionId };
  if (result === undefined) {
    return {
      ...base,
      turn: { events, status: "failed", evidenceCoverage: NO_RESULT },
      failed: `claude exited with ${exitCode} before reporting a result`,
    };
  }
  const text = typeof result.result === "string" ? result.result : "";
  if (result.is_error === true && isPushback(result) && started.size === 0) {
    return { ...base, turn: { events, status: "failed" }, rejected: { message: text } };
  }
  if (result.is_error === true && result.terminal_reason === "api_error") {
    return {
      ...base,
      turn: { events, status: "failed" },
      failed: `claude stopped on a model API error: ${text}`,
    };
  }
  markDenials(events, result.permission_denials);
  const { usage, totalCostUSD } = usageOf(result, messageIds.size, state);
  if (result.is_error === true) {
    events.push({ type: "error", message: text || `claude reported ${result.subtype}` });
  }
  const turn: Turn = { events, status: result.is_error === true ? "failed" : "completed", usage };
  if (unmapped.size > 0) {
    const reason = `the stream had content niceeval does not map: ${[...unmapped].join(", ")}`;
    turn.evidenceCoverage = {
      events: { status: "partial", reason },
      actions: { status: "partial", reason },
    };
  }
  return totalCostUSD === undefined ? { ...base, turn } : { ...base, turn, totalCostUSD };
}

const NO_RESULT = Object.freeze({
  usage: { status: "unavailable" as const, reason: "the CLI ended without a result line" },
});

/** Content block types that carry nothing a turn's events hold. */
const SILENT_BLOCKS = new Set(["redacted_thinking"]);

/**
 * Text and thinking of the main agent, and tool calls of the agent and its subagents; other block
 * types are listed in `unmapped`.
 */
function assistant(
  value: Json,
  events: StreamEvent[],
  seen: { started: Set<string>; messageIds: Set<string>; unmapped: Set<string> },
): void {
  const { started, messageIds } = seen;
  const message = value.message ?? {};
  const main = value.parent_tool_use_id === null || value.parent_tool_use_id === undefined;
  if (value.is_api_error_message === true || message.model === "<synthetic>") {
    for (const block of blocksOf(message)) {
      if (block?.type === "text" && main) events.push({ type: "error", message: block.text });
    }
    return;
  }
  if (typeof message.id === "string") messageIds.add(message.id);
  for (const block of blocksOf(message)) {
    if (block?.type === "text" && main && typeof block.text === "string") {
      events.push({ type: "message", role: "assistant", text: block.text });
    } else if (block?.type === "thinking" && main && typeof block.thinking === "string") {
      events.push({ type: "thinking", text: block.thinking });
    } else if (block?.type === "tool_use" && typeof block.id === "string") {
      if (started.has(block.id)) continue;
      started.add(block.id);
      events.push({
        type: "operation.started",
        operationId: block.id,
        operation: { kind: "tool", name: String(block.name), input: block.input ?? {} },
      });
    } else if (!["text", "thinking", "tool_use"].includes(block?.type)) {
      const type = String(block?.type);
      if (!SILENT_BLOCKS.has(type)) seen.unmapped.add(`block ${JSON.stringify(type)}`);
    }
  }
}

/** Finishes started tool calls: failed when the result is an error, else completed. */
function toolResults(
  value: Json,
  events: StreamEvent[],
  started: Set<string>,
  finished: Set<string>,
): void {
  for (const block of blocksOf(value.message ?? {})) {
    if (block?.type !== "tool_result" || typeof block.tool_use_id !== "string") continue;
    const id = block.tool_use_id;
    if (!started.has(id) || finished.has(id)) continue;
    finished.add(id);
    events.push({
      type: "operation.finished",
      operationId: id,
      kind: "tool",
      status: block.is_error === true ? "failed" : "completed",
      output: textOf(block.content),
    });
  }
}

/** Tool calls the CLI's permission check refused finish as `rejected`, not `failed`. */
function markDenials(events: StreamEvent[], denials: Json): void {
  if (!Array.isArray(denials) || denials.length === 0) return;
  const ids = new Set(denials.map((d: Json) => d?.tool_use_id));
  events.forEach((event, i) => {
    if (event.type === "operation.finished" && ids.has(event.operationId)) {
      events[i] = { ...event, status: "rejected" };
    }
  });
}

function blocksOf(message: Json): Json[] {
  return Array.isArray(message.content) ? message.content : [];
}

function textOf(content: Json): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((b: Json) => (typeof b?.text === "string" ? b.text : "")).join("");
}

function isPushback(result: Json): boolean {
  return PUSHBACK_STATUSES.includes(result.api_error_status) ||
    PUSHBACK_ERRORS.includes(result.api_error_type) || PUSHBACK_ERRORS.includes(result.error);
}

/**
 * The run's usage from the result line. Tokens are per run; the cost is the run's own
 * (`model_usage_since_last_result`), else the cumulative `total_cost_usd` minus the session's
 * previous total.
 */
function usageOf(
  result: Json,
  requests: number,
  state: ClaudeStreamState,
): { usage: Usage; totalCostUSD?: number } {
  const u = result.usage ?? {};
  const usage: Usage = {};
  const put = (key: keyof Usage, v: unknown) => {
    if (typeof v === "number" && Number.isFinite(v) && v >= 0) usage[key] = v;
  };
  put("inputTokens", u.input_tokens);
  put("outputTokens", u.output_tokens);
  put("cacheReadTokens", u.cache_read_input_tokens);
  put("cacheCreationTokens", u.cache_creation_input_tokens);
  put("reasoningTokens", u.output_tokens_details?.thinking_tokens);
  if (requests > 0) usage.requests = requests;
  const total = typeof result.total_cost_usd === "number" ? result.total_cost_usd : undefined;
  const since = result.model_usage_since_last_result;
  if (since !== null && typeof since === "object") {
    let cost = 0;
    for (const model of Object.values(since) as Json[]) {
      if (typeof model?.costUSD === "number") cost += model.costUSD;
    }
    put("costUSD", cost);
  } else if (total !== undefined) {
    put("costUSD", Math.max(0, total - (state.previousTotalCostUSD ?? 0)));
  }
  return total === undefined ? { usage } : { usage, totalCostUSD: total };
}
