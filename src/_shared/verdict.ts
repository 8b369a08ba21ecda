/**
 * Verdict shapes shared by the assertion fold, the Attempt result, the Record and the reporters
 * (authoring.md §4, §5; REC-3): plain data, no matcher logic.
 */
import type { JsonValue } from "./json.ts";

/** Result of one Boolean comparison. */
export type MatchResult = "matched" | "mismatched" | "unavailable";

/**
 * Outcome of a score over an Attempt (authoring.md §5.3). `possible` is the most the Attempt could
 * earn (docs/scores.md): the eval's `maxPoints`, else the sum of its `.score(points)` entries;
 * `null` when unknown (a `t.score` without `maxPoints`, or nothing scored). Absent in results
 * written before it existed.
 */
export type ScoreResult =
  | { state: "complete"; earned: number; possible?: number | null }
  | { state: "partial"; earned: number; reasons: ScoreReason[]; possible?: number | null }
  | { state: "unavailable"; reasons: ScoreReason[] };

/** Why a score is not complete. */
export type ScoreReason =
  | "execution-errored"
  | "source-unavailable"
  | "evaluation-errored"
  | "not-applicable";

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
