/**
 * Shared rules of scoped assertions: evidence coverage (authoring.md §4.4), counting (§4.3
 * rules 1–2), argument checks (§3.5 rule 7) and criteria wording.
 */
import { AssertionAuthoringError, isPlainObject } from "../_shared/mod.ts";
import type { CoverageChannel, CoverageEntry, ToolCall, TurnRecord } from "../agents/mod.ts";
import type { BooleanOutcome, EvalContext, Maybe } from "./_protocol.ts";
import type { EvidenceSnapshot, MatchResult } from "./types.ts";

/** A scoped assertion built from a snapshot, ready to be registered and run. */
export interface EvidenceAssertion {
  /** Assertion name for the sealed entry, e.g. `calledTool`. */
  readonly matcher: string;
  /** Default criterion, e.g. `turn calledTool get_weather`. */
  readonly criterion: string;
  run(): Maybe<BooleanOutcome>;
}

/** Reason of a result that depends on absence while a channel is not complete. */
export const SOURCE_UNAVAILABLE = "source-unavailable";

const RANK: Readonly<Record<CoverageEntry["status"], number>> = {
  complete: 2,
  partial: 1,
  unavailable: 0,
};

/** Worst coverage of `channel` over the turns in scope; the declared coverage without turns. */
function worstCoverage(snapshot: EvidenceSnapshot, channel: CoverageChannel): CoverageEntry {
  if (snapshot.turns.length === 0) return snapshot.declaredCoverage[channel];
  let worst = snapshot.turns[0]?.coverage[channel] as CoverageEntry;
  for (const turn of snapshot.turns) {
    const entry = turn.coverage[channel];
    if (RANK[entry.status] < RANK[worst.status]) worst = entry;
  }
  return worst;
}

/** True when every channel is complete over the scope. */
export function complete(
  snapshot: EvidenceSnapshot,
  channels: readonly CoverageChannel[],
): boolean {
  return channels.every((channel) => worstCoverage(snapshot, channel).status === "complete");
}

/** A parsed count option. */
export type Count =
  | { readonly mode: "exactly"; readonly n: number }
  | { readonly mode: "atLeast"; readonly n: number }
  | { readonly mode: "none" };

/** Parses `{ count }` (rule 4.3.1); throws `AssertionAuthoringError` on an invalid count. */
export function readCount(where: string, options: unknown, instead: string): Count {
  if (options === undefined) return { mode: "atLeast", n: 1 };
  if (!isPlainObject(options)) {
    throw new AssertionAuthoringError(
      "invalid-value",
      `Cannot call ${where}: options must be an object`,
    );
  }
  for (const key of Object.keys(options)) {
    if (key !== "count" && options[key] !== undefined) {
      throw new AssertionAuthoringError(
        "invalid-value",
        `Cannot call ${where}: unknown option "${key}"`,
      );
    }
  }
  const count = options.count;
  if (count === undefined) return { mode: "atLeast", n: 1 };
  if (count === 0) {
    throw new AssertionAuthoringError(
      "invalid-value",
      `Cannot call ${where}: count must be positive; use ${instead}() to assert absence`,
    );
  }
  if (isPositiveInteger(count)) return { mode: "exactly", n: count };
  if (isPlainObject(count) && Object.keys(count).length === 1 && isPositiveInteger(count.atLeast)) {
    return { mode: "atLeast", n: count.atLeast };
  }
  throw new AssertionAuthoringError(
    "invalid-value",
    `Cannot call ${where}: count must be a positive integer or { atLeast: n }, got ${
      JSON.stringify(count) ?? String(count)
    }`,
  );
}

function isPositiveInteger(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value > 0;
}

/** Checks a non-negative integer argument (`maxToolCalls`, `maxTokens`). */
export function requireNonNegativeInteger(where: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
    throw new AssertionAuthoringError(
      "invalid-value",
      `Cannot call ${where}: expected a non-negative integer, got ${String(value)}`,
    );
  }
  return value;
}

/**
 * Decides a count from per-occurrence results (rule 4.3.2): `k` known matches, `u` unavailable
 * occurrences, and whether occurrences may be unseen because a channel is not complete.
 */
export function decideCount(
  results: readonly MatchResult[],
  count: Count,
  unseen: boolean,
): MatchResult {
  const k = results.filter((r) => r === "matched").length;
  const u = results.filter((r) => r === "unavailable").length;
  const settled = u === 0 && !unseen;
  switch (count.mode) {
    case "exactly":
      if (k > count.n) return "mismatched";
      if (k === count.n && settled) return "matched";
      return k + u < count.n && !unseen ? "mismatched" : "unavailable";
    case "atLeast":
      if (k >= count.n) return "matched";
      return k + u < count.n && !unseen ? "mismatched" : "unavailable";
    case "none":
      if (k > 0) return "mismatched";
      return settled ? "matched" : "unavailable";
  }
}

/** Text of a count for expectations: `at least 1 call`, `exactly 2 events`, `no call`. */
export function countText(count: Count, noun: string): string {
  if (count.mode === "none") return `no ${noun}`;
  const plural = count.n === 1 ? noun : `${noun}s`;
  return `${count.mode === "exactly" ? "exactly" : "at least"} ${count.n} ${plural}`;
}

/** Criterion suffix of a non-default count. */
export function countSuffix(count: Count): string {
  if (count.mode === "exactly") return ` (exactly ${count.n})`;
  if (count.mode === "atLeast" && count.n !== 1) return ` (at least ${count.n})`;
  return "";
}

/** Prefixes an assertion with its scope word: `turn …`, `session …`, or nothing for `t`. */
export function scoped(snapshot: EvidenceSnapshot, text: string): string {
  return snapshot.scope === "attempt" ? text : `${snapshot.scope} ${text}`;
}

/** Evaluation context of one turn: tool occurrences by operation id. */
export function turnContext(turn: TurnRecord, actionsComplete: boolean): EvalContext {
  const calls = new Map<string, ToolCall>(turn.toolCalls.map((call) => [call.operationId, call]));
  return { actionsComplete, toolCall: (id) => calls.get(id) };
}
