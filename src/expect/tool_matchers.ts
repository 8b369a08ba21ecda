/** Tool matches (authoring.md §4.2 rule 4). */
import { isPlainObject, type JsonValue } from "../_shared/mod.ts";
import type { ToolCall } from "../agents/mod.ts";
import { isRegExp, preview, quoted, truncate } from "./_describe.ts";
import {
  type BooleanOutcome,
  chain,
  createBooleanMatch,
  type EvalContext,
  evaluateBoolean,
  type Maybe,
  readMatch,
  requireBooleanMatch,
} from "./_protocol.ts";
import type { BooleanMatch, ToolMatch } from "./types.ts";
import { type JsonMatch, jsonMatch } from "./value_matchers.ts";

/** Status of a tool occurrence. */
type ToolStatus = ToolCall["status"];

/** Conditions of {@link toolMatch}, all evaluated on the same occurrence. */
export interface ToolConditions {
  /** A JSON pattern (wrapped in `jsonMatch`) or a value match of the input. */
  readonly input?: JsonMatch | BooleanMatch<JsonValue, unknown>;
  /** A JSON pattern (wrapped in `jsonMatch`) or a value match of the output. */
  readonly output?: JsonMatch | BooleanMatch<JsonValue, unknown>;
  /** The occurrence's status; `pending` means started and never finished. */
  readonly status?: ToolStatus;
}

const TOOL_STATUSES: readonly ToolStatus[] = ["pending", "completed", "failed", "rejected"];

/** One condition: its text for names and its check of an occurrence. */
interface Condition {
  readonly text: string;
  check(call: ToolCall, context: EvalContext): Maybe<BooleanOutcome>;
}

function valueCondition(field: "input" | "output", raw: unknown): Condition {
  const match = readMatch(raw) === undefined
    ? requireBooleanMatch(jsonMatch(raw as JsonMatch), "value", "toolMatch()")
    : requireBooleanMatch(raw, "value", `toolMatch() ${field}`);
  const impl = match.impl;
  return {
    text: `${field}: ${match.name}`,
    check(call, context) {
      if (field === "output") {
        if (call.status === "pending") return pendingOutcome(context, "output");
        if (call.output === undefined) return { result: "unavailable", reason: "no-output" };
      }
      const subject = field === "input" ? call.input : call.output;
      return chain(evaluateBoolean(impl, subject, context), (outcome) => {
        if (outcome.result !== "mismatched") return outcome;
        return { ...outcome, reason: `${field} ${outcome.reason ?? "mismatched"}` };
      });
    },
  };
}

function pendingOutcome(context: EvalContext, what: string): BooleanOutcome {
  // A pending occurrence may still finish unless the adapter observes every action.
  return context.actionsComplete
    ? { result: "mismatched", reason: `${what} of a pending call`, received: "pending" }
    : { result: "unavailable", reason: "source-unavailable", received: "pending" };
}

function statusCondition(status: unknown): Condition {
  if (typeof status !== "string" || !TOOL_STATUSES.includes(status as ToolStatus)) {
    throw new TypeError(`Cannot create toolMatch(): unknown status ${JSON.stringify(status)}`);
  }
  return {
    text: `status: ${JSON.stringify(status)}`,
    check(call, context) {
      if (call.status === "pending" && status !== "pending") {
        return pendingOutcome(context, "status");
      }
      const result = call.status === status ? "matched" : "mismatched";
      return { result, expected: status, received: call.status };
    },
  };
}

function readConditions(conditions: unknown): Condition[] {
  if (conditions === undefined) return [];
  if (!isPlainObject(conditions) || readMatch(conditions) !== undefined) {
    throw new TypeError("Cannot create toolMatch(): conditions must be an object");
  }
  const out: Condition[] = [];
  for (const [key, value] of Object.entries(conditions)) {
    if (value === undefined) continue;
    if (key === "input" || key === "output") out.push(valueCondition(key, value));
    else if (key === "status") out.push(statusCondition(value));
    else throw new TypeError(`Cannot create toolMatch(): unknown condition "${key}"`);
  }
  // Name and input are always decidable, so they go first (rule 4.2.4).
  return out.sort((a, b) => order(a.text) - order(b.text));
}

function order(text: string): number {
  return text.startsWith("input") ? 0 : text.startsWith("status") ? 1 : 2;
}

function runConditions(
  conditions: readonly Condition[],
  call: ToolCall,
  context: EvalContext,
  index = 0,
  unavailable?: BooleanOutcome,
): Maybe<BooleanOutcome> {
  const condition = conditions[index];
  if (condition === undefined) return unavailable ?? { result: "matched" };
  return chain(condition.check(call, context), (outcome) => {
    if (outcome.result === "mismatched") return outcome;
    const next = outcome.result === "unavailable" ? unavailable ?? outcome : unavailable;
    return runConditions(conditions, call, context, index + 1, next);
  });
}

function isToolCall(value: unknown): value is ToolCall {
  const call = value as Partial<ToolCall> | null;
  return typeof call === "object" && call !== null && typeof call.name === "string" &&
    TOOL_STATUSES.includes(call.status as ToolStatus);
}

/**
 * Selects tool occurrences by name and conditions, all evaluated on the same occurrence. For a
 * pending occurrence an `output` condition, or a `status` other than `pending`, is `mismatched`
 * when the adapter observes every action and `unavailable` otherwise.
 *
 * @param name Exact tool name or a `RegExp`; omit it to select by conditions only.
 * @param conditions `input`, `output` (JSON patterns or value matches) and `status`.
 * @returns A tool match for `calledTool`, `notCalledTool`, `toolOrder` and `eventMatch`.
 * @example
 * ```ts
 * import { jsonMatch, toolMatch } from "niceeval/expect";
 * const weather = toolMatch("get_weather", { input: jsonMatch({ city: "Brooklyn" }) });
 * const anyFailure = toolMatch({ status: "failed" });
 * ```
 */
export function toolMatch(name: string | RegExp, conditions?: ToolConditions): ToolMatch;
export function toolMatch(conditions: ToolConditions): ToolMatch;
export function toolMatch(first: unknown, second?: unknown): ToolMatch {
  const named = typeof first === "string" || isRegExp(first);
  if (!named && second !== undefined) {
    throw new TypeError("Cannot create toolMatch(): name must be a string or a RegExp");
  }
  const conditions = readConditions(named ? second : first);
  const nameText = typeof first === "string" ? first : named ? String(first) : undefined;
  const parts = conditions.map((c) => c.text);
  const conditionText = parts.length === 0 ? "" : `{ ${parts.join(", ")} }`;
  const nameArg = typeof first === "string" ? quoted(first) : nameText;
  const args = [nameArg, conditionText].filter((arg) => arg !== undefined && arg !== "");
  const name = `toolMatch(${args.join(", ")})`;
  const short = nameText === undefined
    ? name
    : truncate(`${nameText} ${conditionText}`.trim(), 120);
  return createBooleanMatch<ToolMatch>("tool", name, {
    base: "toolMatch",
    short,
    channels: ["actions"],
    evaluate(subject, context) {
      if (!isToolCall(subject)) {
        return { result: "mismatched", reason: "not-a-tool-call", received: preview(subject) };
      }
      if (named && !nameMatches(first as string | RegExp, subject.name)) {
        return { result: "mismatched", expected: nameText ?? null, received: subject.name };
      }
      return runConditions(conditions, subject, context);
    },
  });
}

function nameMatches(name: string | RegExp, actual: string): boolean {
  if (typeof name === "string") return name === actual;
  name.lastIndex = 0;
  const found = name.test(actual);
  name.lastIndex = 0;
  return found;
}
