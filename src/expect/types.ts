/** Types of matchers, assertion entries, verdicts and scores (authoring.md §3.5, §4, §5). */
import type { JsonValue } from "../_shared/mod.ts";
import type { EvidenceCoverage, StreamEvent, ToolCall, TurnRecord } from "../agents/mod.ts";

/** Result of one Boolean comparison. */
export type MatchResult = "matched" | "mismatched" | "unavailable";

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

/** Outcome of a score over an Attempt (authoring.md §5.3). */
export type ScoreResult =
  | { state: "complete"; earned: number }
  | { state: "partial"; earned: number; reasons: ScoreReason[] }
  | { state: "unavailable"; reasons: ScoreReason[] };

/** Why a score is not complete. */
export type ScoreReason =
  | "execution-errored"
  | "source-unavailable"
  | "evaluation-errored"
  | "not-applicable";

/** Verdict of one Attempt. */
export type Verdict = "passed" | "failed" | "errored" | "skipped" | "scored";

/**
 * One assertion entry after the body settled, as persisted in `assertions.json` (REC-3).
 * Absent values are `null`.
 */
export interface SealedAssertion {
  /** Registration order within the Attempt, from 0. */
  readonly index: number;
  readonly entry: "boolean" | "measurement" | "direct-score";
  /** Human criterion: the label when set, else derived (`turn succeeded`, `includes("x")`). */
  readonly criterion: string;
  /** Matcher or assertion name (`succeeded`, `includes`, `calledTool`, `score`). */
  readonly matcher: string;
  readonly key: string | null;
  readonly label: string | null;
  /** Group path: `t.group` titles, then the handle's `.group()` segment. */
  readonly group: readonly string[];
  /** `passed` = satisfied; `failed` = gating mismatch or below gate; else unavailable / errored. */
  readonly status: "passed" | "failed" | "unavailable" | "errored";
  /** Boolean result, or `errored`; `null` for measurements and direct scores. */
  readonly result: MatchResult | "errored" | null;
  /** Measurement value in [0, 1]; `null` otherwise or when unavailable/errored. */
  readonly measurement: number | null;
  readonly atLeast: number | null;
  readonly gateThreshold: number | null;
  /** For thresholded measurements: the value met the gate (else atLeast) threshold. */
  readonly met: boolean | null;
  readonly expected: JsonValue | null;
  readonly received: JsonValue | null;
  readonly reason: string | null;
  /** Message of the thrown error when `status` is `errored` (reason `evaluation-errored`). */
  readonly error?: string;
  readonly optional: boolean;
  /** True when this entry gates the pass verdict. */
  readonly gate: boolean;
  /** Score contribution: configured points and the points earned (`null` when not earned). */
  readonly score: { readonly points: number; readonly earned: number | null } | null;
  /** `file:line` of the registering call, project-relative when known. */
  readonly source: string | null;
}

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
