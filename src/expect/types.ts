/** Types of matchers, assertion entries, verdicts and scores (authoring.md §3.5, §4, §5). */
import type { JsonValue, MatchResult } from "../_shared/mod.ts";
import type { EvidenceCoverage, StreamEvent, ToolCall, TurnRecord } from "../agents/mod.ts";

export type { MatchResult, ScoreReason, ScoreResult, SealedAssertion } from "../_shared/mod.ts";

/** What a matcher reports besides its result. */
export interface MatchOutcome {
  result: MatchResult;
  reason?: string;
  expected?: JsonValue;
  received?: JsonValue;
}

/** A pure, immutable Boolean comparison value (authoring.md §4.1). */
export interface BooleanMatch<T = unknown, R = T> {
  readonly kind: "boolean";
  readonly domain: "value" | "tool" | "event";
  readonly name: string;
  /** Phantom: the subject type. */
  readonly __subject?: (value: T) => void;
  /** Phantom: the refined type `orStop()` resolves with. */
  readonly __refined?: R;
}

/** A pure, immutable measurement in [0, 1]. */
export interface ScoreMatch<T = unknown> {
  readonly kind: "score";
  readonly domain: "value";
  readonly name: string;
  /** Phantom: the subject type. */
  readonly __subject?: (value: T) => void;
}

/** A match selecting tool occurrences. */
export type ToolMatch = BooleanMatch<ToolCall> & { readonly domain: "tool" };
/** A match selecting stream events. */
export type EventMatch = BooleanMatch<StreamEvent> & { readonly domain: "event" };

/** Verdict of one Attempt. */
export type Verdict = "passed" | "failed" | "errored" | "skipped" | "scored";

/** The evidence a scoped assertion reads at registration time. */
export interface EvidenceSnapshot {
  /** Turns in scope, completed at the moment of the call. */
  readonly turns: readonly TurnRecord[];
  /** `turn`, `session` or `attempt` (for `t.*`); used in criteria ("turn succeeded"). */
  readonly scope: "turn" | "session" | "attempt";
  /** Coverage declared by the agent, used when the scope has no turn yet. */
  readonly declaredCoverage: EvidenceCoverage;
}

/** A price entry of the config `pricing` table, USD per million tokens. */
export interface PriceEntry {
  readonly inputPerMTok: number;
  readonly outputPerMTok: number;
  readonly cacheReadPerMTok?: number;
  readonly cacheWritePerMTok?: number;
}

/** Price table keyed by exact model name or `<prefix>/*`. */
export type PricingTable = Readonly<Record<string, PriceEntry>>;

/** A Boolean match over plain values, the kind `t.check` accepts. */
export type ValueMatch<T = unknown, R = T> = BooleanMatch<T, R> & { readonly domain: "value" };

/** Kind of an eval: pass/fail verdict or earned points. */
export type Kind = "pass" | "score";

/** A tool or event count: exactly `n` or at least `n` (authoring.md §4.3 rule 1). */
export type CountOption = number | { readonly atLeast: number };
