/**
 * Output modes of `commandAgent` (authoring.md §8.3 rules 2–3): trimmed stdout as one message
 * (`text`), or one JSON object per line (`ndjson`) with usage, session, data and status lines.
 */
import type { JsonValue } from "../_shared/mod.ts";
import type { AgentContext, CommandResult, StreamEvent, Turn, Usage } from "./types.ts";

/** Kept of stderr in the error event of a failed text turn. */
const STDERR_TAIL = 2000;

/** A line of `ndjson` output that is neither an event nor a known control line. */
class CommandOutputError extends Error {
  /** The Attempt error code (authoring.md §7.4). */
  readonly code = "agent-invalid-turn";

  constructor(message: string) {
    super(message);
    this.name = "CommandOutputError";
  }
}

/** Turns trimmed stdout into one assistant message; a non-zero exit fails the turn (rule 2). */
export function textTurn(r: CommandResult): Turn {
  const events: StreamEvent[] = [];
  const text = r.stdout.trim();
  if (text !== "") events.push({ type: "message", role: "assistant", text });
  if (r.exitCode === 0) return { events, status: "completed" };
  const tail = r.stderr.slice(-STDERR_TAIL);
  events.push({
    type: "error",
    message: `command exited with ${r.exitCode}${tail.trim() === "" ? "" : `: ${tail}`}`,
  });
  return { events, status: "failed" };
}

/**
 * Builds the turn of NDJSON output from its events, `usage`, `session` (captured), `data` and
 * `status` lines; without a status line the exit code decides (rule 3). A turn without a usage line
 * lowers `usage` coverage to `unavailable`.
 */
export function ndjsonTurn(r: CommandResult, ctx: AgentContext): Turn {
  const events: StreamEvent[] = [];
  let usage: Usage | undefined;
  let data: JsonValue | undefined;
  let status: Turn["status"] = r.exitCode === 0 ? "completed" : "failed";
  r.stdout.split("\n").forEach((raw, i) => {
    const line = raw.trim();
    if (line === "") return;
    const value = parseLine(line, i + 1);
    switch (value.type) {
      case "usage": {
        const { type: _type, ...rest } = value;
        usage = rest as Usage;
        return;
      }
      case "session":
        if (typeof value.id !== "string") throw invalidLine(i + 1, "a session line needs an id");
        ctx.session.capture(value.id);
        return;
      case "data":
        data = value.data as JsonValue;
        return;
      case "status":
        if (value.status !== "completed" && value.status !== "failed") {
          throw invalidLine(i + 1, 'status must be "completed" or "failed"');
        }
        status = value.status;
        return;
      default:
        // Turn validation checks every event (rule 7.4): an unknown type or a user message
        // becomes agent-invalid-turn there, with the event's path.
        events.push(value as unknown as StreamEvent);
    }
  });
  const turn: Turn = { events, status };
  if (usage !== undefined) turn.usage = usage;
  else turn.evidenceCoverage = { usage: { status: "unavailable", reason: "no usage line" } };
  if (data !== undefined) turn.data = data;
  return turn;
}

function parseLine(line: string, n: number): Record<string, unknown> & { type: unknown } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw invalidLine(n, "not JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalidLine(n, "not a JSON object");
  }
  return value as Record<string, unknown> & { type: unknown };
}

function invalidLine(n: number, detail: string): CommandOutputError {
  return new CommandOutputError(`Cannot read line ${n} of the command's output: ${detail}`);
}
