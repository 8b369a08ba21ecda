/**
 * Scoped assertions over tools, status and usage (authoring.md §4.3, §4.4). Each builder checks
 * its arguments, reads the snapshot taken at the call and returns an {@link EvidenceAssertion}.
 */
import { AssertionAuthoringError } from "../_shared/mod.ts";
import type { ToolCall, TurnRecord } from "../agents/mod.ts";
import { truncate } from "./_describe.ts";
import {
  complete,
  type Count,
  countSuffix,
  countText,
  decideCount,
  type EvidenceAssertion,
  readCount,
  requireNonNegativeInteger,
  scoped,
  SOURCE_UNAVAILABLE,
  turnContext,
} from "./_evidence_common.ts";
import {
  type BooleanImpl,
  type BooleanOutcome,
  chain,
  collect,
  evaluateBoolean,
  type Maybe,
  requireBooleanMatch,
} from "./_protocol.ts";
import { toolMatch } from "./tool_matchers.ts";
import type { EvidenceSnapshot, MatchResult } from "./types.ts";

/** Cost estimate of a list of turns (authoring.md §6.5 rule 2). */
export type CostEstimator = (
  turns: readonly TurnRecord[],
) => { usd: number | undefined; complete: boolean };

const UNAVAILABLE: BooleanOutcome = Object.freeze({
  result: "unavailable",
  reason: SOURCE_UNAVAILABLE,
});

/** `succeeded()`: every turn in scope completed (rule 4.3.7). */
export function succeeded(snapshot: EvidenceSnapshot): EvidenceAssertion {
  return {
    matcher: "succeeded",
    criterion: scoped(snapshot, "succeeded"),
    run() {
      if (snapshot.turns.length === 0) {
        return { result: "mismatched", reason: "no-turns", expected: "completed" };
      }
      const failed = snapshot.turns.find((turn) => turn.status !== "completed");
      if (failed !== undefined) {
        const error = failed.events.findLast((event) => event.type === "error");
        return {
          result: "mismatched",
          expected: "completed",
          received: failed.status,
          ...(error?.type === "error" ? { reason: truncate(error.message) } : {}),
        };
      }
      if (!complete(snapshot, ["status"])) return { ...UNAVAILABLE, expected: "completed" };
      return { result: "matched", expected: "completed", received: "completed" };
    },
  };
}

function allCalls(snapshot: EvidenceSnapshot): ToolCall[] {
  return snapshot.turns.flatMap((turn) => turn.toolCalls);
}

function namesOf(calls: readonly ToolCall[]): string {
  return calls.length === 0
    ? "no tool calls"
    : truncate(`called: ${calls.map((c) => c.name).join(", ")}`);
}

/** Reads a tool match argument; a string means `toolMatch(name)`. */
export function readToolMatch(where: string, match: unknown): { impl: BooleanImpl; short: string } {
  if (typeof match === "string") {
    if (match === "") {
      throw new AssertionAuthoringError("invalid-value", `Cannot call ${where}: empty tool name`);
    }
    match = toolMatch(match);
  }
  const read = requireBooleanMatch(match, "tool", where);
  return { impl: read.impl, short: read.impl.short };
}

/** Results of `impl` on every tool occurrence in scope, in start order. */
export function toolResults(snapshot: EvidenceSnapshot, impl: BooleanImpl): Maybe<MatchResult[]> {
  const actionsComplete = complete(snapshot, ["actions"]);
  const results: Maybe<MatchResult>[] = [];
  for (const turn of snapshot.turns) {
    const context = turnContext(turn, actionsComplete);
    for (const call of turn.toolCalls) {
      results.push(chain(evaluateBoolean(impl, call, context), (outcome) => outcome.result));
    }
  }
  return collect(results);
}

function countedTools(
  snapshot: EvidenceSnapshot,
  impl: BooleanImpl,
  count: Count,
): Maybe<BooleanOutcome> {
  const unseen = !complete(snapshot, ["actions"]);
  return chain(toolResults(snapshot, impl), (results) => {
    const result = decideCount(results, count, unseen);
    const k = results.filter((r) => r === "matched").length;
    const outcome: BooleanOutcome = {
      result,
      expected: countText(count, "call"),
      received: `${k} call${k === 1 ? "" : "s"}`,
    };
    if (result === "unavailable") outcome.reason = SOURCE_UNAVAILABLE;
    if (result === "mismatched") outcome.reason = namesOf(allCalls(snapshot));
    return outcome;
  });
}

/** `calledTool(match, { count })`: matching tool occurrences, default at least one. */
export function calledTool(
  snapshot: EvidenceSnapshot,
  match: unknown,
  options?: unknown,
): EvidenceAssertion {
  const tool = readToolMatch("calledTool()", match);
  const count = readCount("calledTool()", options, "notCalledTool");
  return {
    matcher: "calledTool",
    criterion: scoped(snapshot, `calledTool ${tool.short}${countSuffix(count)}`),
    run: () => countedTools(snapshot, tool.impl, count),
  };
}

/** `notCalledTool(match)`: exactly zero matching occurrences. */
export function notCalledTool(snapshot: EvidenceSnapshot, match: unknown): EvidenceAssertion {
  const tool = readToolMatch("notCalledTool()", match);
  return {
    matcher: "notCalledTool",
    criterion: scoped(snapshot, `notCalledTool ${tool.short}`),
    run: () => countedTools(snapshot, tool.impl, { mode: "none" }),
  };
}

function boundedCalls(snapshot: EvidenceSnapshot, max: number): BooleanOutcome {
  const calls = allCalls(snapshot);
  const expected = max === 0 ? "no tool calls" : `at most ${max} tool calls`;
  const received = calls.length;
  // A count already above the bound is known whatever the coverage (rule 4.3.3).
  if (calls.length > max) {
    return { result: "mismatched", expected, received, reason: namesOf(calls) };
  }
  if (!complete(snapshot, ["actions"])) return { ...UNAVAILABLE, expected, received };
  return { result: "matched", expected, received };
}

/** `usedNoTools()`: zero tool occurrences. */
export function usedNoTools(snapshot: EvidenceSnapshot): EvidenceAssertion {
  return {
    matcher: "usedNoTools",
    criterion: scoped(snapshot, "usedNoTools"),
    run: () => boundedCalls(snapshot, 0),
  };
}

/** `maxToolCalls(max)`: at most `max` tool occurrences. */
export function maxToolCalls(snapshot: EvidenceSnapshot, max: unknown): EvidenceAssertion {
  const bound = requireNonNegativeInteger("maxToolCalls()", max);
  return {
    matcher: "maxToolCalls",
    criterion: scoped(snapshot, `maxToolCalls ${bound}`),
    run: () => boundedCalls(snapshot, bound),
  };
}

/** `noFailedActions()`: no occurrence finished `failed` (rule 4.3.4). */
export function noFailedActions(snapshot: EvidenceSnapshot): EvidenceAssertion {
  return {
    matcher: "noFailedActions",
    criterion: scoped(snapshot, "noFailedActions"),
    run() {
      const calls = allCalls(snapshot);
      const failed = calls.filter((call) => call.status === "failed");
      const expected = "no failed tool calls";
      if (failed.length > 0) {
        return {
          result: "mismatched",
          expected,
          received: truncate(failed.map((c) => c.name).join(", ")),
        };
      }
      const pending = calls.some((call) => call.status === "pending");
      if (pending || !complete(snapshot, ["actions"])) return { ...UNAVAILABLE, expected };
      return { result: "matched", expected };
    },
  };
}

/** `maxTokens(max)`: input plus output tokens over the scope (rule 4.3.6). */
export function maxTokens(snapshot: EvidenceSnapshot, max: unknown): EvidenceAssertion {
  const bound = requireNonNegativeInteger("maxTokens()", max);
  return {
    matcher: "maxTokens",
    criterion: scoped(snapshot, `maxTokens ${bound}`),
    run() {
      let known = 0;
      let missing = false;
      for (const turn of snapshot.turns) {
        for (const field of ["inputTokens", "outputTokens"] as const) {
          const value = turn.usage?.[field];
          if (value === undefined) missing = true;
          else known += value;
        }
      }
      return bounded(known, bound, missing || !complete(snapshot, ["usage"]), "tokens");
    },
  };
}

function bounded(known: number, max: number, uncertain: boolean, unit: string): BooleanOutcome {
  const expected = `at most ${max} ${unit}`;
  // A known partial sum above the bound fails whatever is missing.
  if (known > max) return { result: "mismatched", expected, received: known };
  if (uncertain) return { ...UNAVAILABLE, expected, received: known };
  return { result: "matched", expected, received: known };
}

/** `maxCost(usd)`: the price-table estimate of the scope (rule 4.3.6, §6.5). */
export function maxCost(
  snapshot: EvidenceSnapshot,
  usd: unknown,
  estimate: CostEstimator,
): EvidenceAssertion {
  if (typeof usd !== "number" || !Number.isFinite(usd) || usd < 0) {
    throw new AssertionAuthoringError(
      "invalid-value",
      `Cannot call maxCost(): expected a finite number ≥ 0, got ${String(usd)}`,
    );
  }
  return {
    matcher: "maxCost",
    criterion: scoped(snapshot, `maxCost ${usd}`),
    run() {
      const cost = estimate(snapshot.turns);
      const uncertain = !cost.complete || !complete(snapshot, ["usage"]);
      return bounded(cost.usd ?? 0, usd, uncertain, "USD");
    },
  };
}
