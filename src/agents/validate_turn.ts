/** Validation of every `Turn` an adapter returns, and the immutable record kept of it (§7.4). */
import { deepFreeze, type JsonValue } from "../_shared/mod.ts";
import { choices, expected, jsonProblem, objectProblem, type Problem } from "./_problem.ts";
import { checkEvents } from "./_turn_events.ts";
import { coverageProblem, lowerCoverage } from "./coverage.ts";
import type { EvidenceCoverage, StreamEvent, Turn, TurnRecord } from "./types.ts";
import { copyUsage, validateUsage } from "./usage.ts";

/** What niceeval knows about a turn besides what the adapter returned. */
export interface TurnValidationInfo {
  /** The agent's declared coverage. */
  readonly declared: EvidenceCoverage;
  /** 1-based index of the turn on its session line. */
  readonly index: number;
  /** 0 for the main session, then 1, 2, … per `t.newSession()`. */
  readonly session: number;
  /** The input text; recorded as the turn's first event, a user message. */
  readonly input: string;
  readonly startedAt: number;
  readonly endedAt: number;
}

/** The outcome of {@link validateTurn}. */
type TurnValidation =
  | { readonly ok: true; readonly record: TurnRecord }
  | { readonly ok: false; readonly path: string; readonly message: string };

const TURN_FIELDS = ["events", "status", "data", "usage", "evidenceCoverage"];
const STATUSES = ["completed", "failed"];

/**
 * Validates a turn returned by `send` and builds its deep-frozen record. The first violation is
 * reported with its path (`events[3].operationId`, `usage.inputTokens`); the caller makes the
 * Attempt `errored` with code `agent-invalid-turn`.
 *
 * @param turn What the adapter's `send` resolved with.
 * @param info The declared coverage, the turn's position, input and timing.
 * @returns `{ ok: true, record }`, or `{ ok: false, path, message }` where the message starts
 *   with the path.
 */
export function validateTurn(turn: unknown, info: TurnValidationInfo): TurnValidation {
  const found = turnProblem(turn);
  if ("path" in found) {
    return { ok: false, path: found.path, message: found.message };
  }
  return { ok: true, record: buildRecord(turn as Turn, found, info) };
}

function turnProblem(turn: unknown): Problem | ReturnType<typeof checkEvents> {
  const bad = objectProblem(turn, "", TURN_FIELDS, "a turn object");
  if (bad) return bad.path === "" ? { ...bad, path: "(turn)" } : bad;
  const { status, events, data, usage, evidenceCoverage } = turn as Record<string, unknown>;
  if (!STATUSES.includes(status as string)) {
    return expected("status", choices(STATUSES), status);
  }
  const checked = checkEvents(events);
  if ("path" in checked) return checked;
  if (data !== undefined) {
    const badData = jsonProblem(data, "data");
    if (badData) return badData;
  }
  if (usage !== undefined) {
    const badUsage = validateUsage(usage, "usage");
    if (badUsage) return badUsage;
  }
  if (evidenceCoverage !== undefined) {
    const badCoverage = coverageProblem(evidenceCoverage, "evidenceCoverage", { partial: true });
    if (badCoverage) return badCoverage;
  }
  return checked;
}

function buildRecord(
  turn: Turn,
  checked: { events: StreamEvent[]; toolCalls: TurnRecord["toolCalls"] },
  info: TurnValidationInfo,
): TurnRecord {
  const events: StreamEvent[] = [{ type: "message", role: "user", text: info.input }];
  events.push(...checked.events);
  const record: { -readonly [K in keyof TurnRecord]: TurnRecord[K] } = {
    index: info.index,
    session: info.session,
    input: info.input,
    status: turn.status,
    events,
    toolCalls: checked.toolCalls,
    message: lastAssistantText(checked.events),
    coverage: lowerCoverage(info.declared, turn.evidenceCoverage),
    startedAt: info.startedAt,
    endedAt: info.endedAt,
  };
  if (turn.data !== undefined) record.data = structuredClone(turn.data) as JsonValue;
  if (turn.usage !== undefined) record.usage = copyUsage(turn.usage);
  return deepFreeze(record);
}

function lastAssistantText(events: readonly StreamEvent[]): string {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!;
    if (event.type === "message" && event.role === "assistant" && event.text.trim() !== "") {
      return event.text;
    }
  }
  return "";
}
