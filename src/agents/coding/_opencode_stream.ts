/**
 * Reads the NDJSON stream of `opencode run --format json` (docs/coding_agents.md "OpenCode"):
 * `text` and `reasoning` parts give messages and thinking; `tool_use` gives finished tool
 * occurrences (input, output, exit code); `step_finish` gives each model request's tokens and
 * cost, summed here; `error` gives failures; every line carries the session id.
 */
import type { JsonValue } from "../../_shared/mod.ts";
import type { StreamEvent, Usage } from "../types.ts";
import { type Json, objectLines } from "./_stream_common.ts";

/** A failure the stream reported. */
export interface OpencodeFailure {
  readonly message: string;
  /** The endpoint's HTTP status, when the failure came from one. */
  readonly statusCode?: number;
  /** From the response's `retry-after` / `retry-after-ms` header. */
  readonly retryAfterMs?: number;
}

/** What one run's stream says. */
export interface OpencodeStream {
  readonly events: StreamEvent[];
  readonly sessionId?: string;
  /** Summed over `step_finish` lines, `costUSD` included (0 without prices); absent without any. */
  readonly usage?: Usage;
  /** The last `error` line. */
  readonly failure?: OpencodeFailure;
  /** Whether a model step started or anything was produced before the end. */
  readonly worked: boolean;
  /** Tools whose own work the stream does not show (subagent `task` calls). */
  readonly hiddenWork: readonly string[];
  /** Lines that are not JSON objects and line types the mapping does not know. */
  readonly unmapped: readonly string[];
}

/** Statuses and messages that prove the endpoint pushed back (rate limit, overload). */
export const OPENCODE_PUSHBACK_STATUSES: readonly number[] = Object.freeze([429, 503, 529]);
const PUSHBACK_REGEXP = /rate.?limit|too many requests|overloaded/i;

/** Whether `failure` is a rate limit or overload of the endpoint. */
export function isPushback(failure: OpencodeFailure): boolean {
  if (failure.statusCode !== undefined) {
    return OPENCODE_PUSHBACK_STATUSES.includes(failure.statusCode);
  }
  return PUSHBACK_REGEXP.test(failure.message);
}

/** Maps the stdout of one run. */
export function readOpencodeStream(stdout: string): OpencodeStream {
  const events: StreamEvent[] = [];
  const unmapped: string[] = [];
  const hiddenWork: string[] = [];
  const ids = new Set<string>();
  let sessionId: string | undefined;
  let usage: Sum | undefined;
  let failure: OpencodeFailure | undefined;
  let worked = false;
  for (const value of objectLines(stdout, unmapped)) {
    if (typeof value.sessionID === "string" && sessionId === undefined) sessionId = value.sessionID;
    const part = value.part ?? {};
    switch (value.type) {
      case "step_start":
        worked = true;
        break;
      case "text":
        worked = true;
        if (typeof part.text === "string") {
          events.push({ type: "message", role: "assistant", text: part.text });
        }
        break;
      case "reasoning":
        worked = true;
        if (typeof part.text === "string") events.push({ type: "thinking", text: part.text });
        break;
      case "tool_use": {
        worked = true;
        const id = uniqueId(part, ids);
        events.push(...toolEvents(part, id));
        if (part.tool === "task") hiddenWork.push("task");
        break;
      }
      case "step_finish":
        worked = true;
        usage = addStep(usage, part);
        break;
      case "error":
        failure = failureOf(value.error);
        events.push({ type: "error", message: failure.message });
        break;
      default:
        unmapped.push(`type ${JSON.stringify(String(value.type))}`);
    }
  }
  return {
    events,
    worked,
    hiddenWork,
    unmapped,
    ...(sessionId === undefined ? {} : { sessionId }),
    ...(usage === undefined ? {} : { usage }),
    ...(failure === undefined ? {} : { failure }),
  };
}

/** The part id (unique per run), else the call id, made unique within the turn. */
function uniqueId(part: Json, ids: Set<string>): string {
  const base = typeof part.id === "string" && part.id !== ""
    ? part.id
    : typeof part.callID === "string" && part.callID !== ""
    ? part.callID
    : "tool";
  let id = base;
  for (let n = 2; ids.has(id); n++) id = `${base}-${n}`;
  ids.add(id);
  return id;
}

/** A finished tool part as a start and a finish event. */
function toolEvents(part: Json, operationId: string): StreamEvent[] {
  const state = part.state ?? {};
  const name = typeof part.tool === "string" && part.tool !== "" ? part.tool : "tool";
  const input = state.input === undefined ? {} : structuredClone(state.input) as JsonValue;
  const exit = state.metadata?.exit;
  let status: "completed" | "failed" = state.status === "error" ? "failed" : "completed";
  let output: JsonValue;
  if (state.status === "error") {
    output = { error: String(state.error ?? "error") };
  } else if (typeof exit === "number" || exit === null) {
    // Shell tools report the exit code in the metadata; a non-zero exit is a failed occurrence.
    if (typeof exit === "number" && exit !== 0) status = "failed";
    output = { exitCode: exit, output: String(state.output ?? "") };
  } else {
    output = state.output === undefined ? null : structuredClone(state.output) as JsonValue;
  }
  return [
    { type: "operation.started", operationId, operation: { kind: "tool", name, input } },
    { type: "operation.finished", operationId, kind: "tool", status, output },
  ];
}

type Sum = Required<Usage>;

/**
 * Adds one step's tokens. The CLI's `input` excludes cache reads and writes and its `output`
 * excludes reasoning; niceeval's `inputTokens`/`outputTokens` include them.
 */
function addStep(sum: Sum | undefined, part: Json): Sum {
  const t = part.tokens ?? {};
  const n = (v: unknown) => typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0;
  const read = n(t.cache?.read);
  const write = n(t.cache?.write);
  const reasoning = n(t.reasoning);
  const next: Sum = {
    inputTokens: (sum?.inputTokens ?? 0) + n(t.input) + read + write,
    outputTokens: (sum?.outputTokens ?? 0) + n(t.output) + reasoning,
    cacheReadTokens: (sum?.cacheReadTokens ?? 0) + read,
    cacheCreationTokens: (sum?.cacheCreationTokens ?? 0) + write,
    reasoningTokens: (sum?.reasoningTokens ?? 0) + reasoning,
    requests: (sum?.requests ?? 0) + 1,
    costUSD: (sum?.costUSD ?? 0) + n(part.cost),
  };
  return next;
}

function failureOf(error: Json): OpencodeFailure {
  const data = error?.data ?? {};
  const message = typeof data.message === "string"
    ? data.message
    : typeof error?.name === "string"
    ? error.name
    : "error";
  const statusCode = typeof data.statusCode === "number" ? data.statusCode : undefined;
  const retryAfterMs = retryAfterOf(data.responseHeaders);
  return {
    message,
    ...(statusCode === undefined ? {} : { statusCode }),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  };
}

function retryAfterOf(headers: Json): number | undefined {
  if (typeof headers !== "object" || headers === null) return undefined;
  const ms = Number(headers["retry-after-ms"]);
  if (headers["retry-after-ms"] !== undefined && Number.isFinite(ms) && ms >= 0) return ms;
  const s = Number(headers["retry-after"]);
  if (headers["retry-after"] !== undefined && Number.isFinite(s) && s >= 0) return s * 1000;
  return undefined;
}
