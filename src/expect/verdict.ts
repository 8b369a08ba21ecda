/** The verdict fold of pass evals and the score result of score evals (authoring.md §5). */
import type { Kind, ScoreReason, ScoreResult, SealedAssertion, Verdict } from "./types.ts";

/** What the fold reads of an Attempt. */
interface FoldInput {
  readonly kind: Kind;
  /** Test threw, timeout, agent or sandbox failure, authoring error, `orstop-not-awaited`, … */
  readonly executionError: boolean;
  /** `t.skip(reason)` was called. */
  readonly skipped: boolean;
  readonly entries: readonly SealedAssertion[];
  /** Score evals: the declared `maxPoints` (the possible score), when declared. */
  readonly maxPoints?: number | null;
  /** Score evals: the declared `passAt`; a score below it is `failed` (docs/scores.md). */
  readonly passAt?: number | null;
}

/** The verdict and, for score evals, the score result. */
interface FoldResult {
  readonly verdict: Verdict;
  /** `null` for pass evals. */
  readonly score: ScoreResult | null;
}

/** Folds an Attempt's execution outcome and sealed entries into its verdict (§5.2, §5.3). */
export function foldVerdict(input: FoldInput): FoldResult {
  if (input.kind === "pass") return { verdict: passVerdict(input), score: null };
  const score = scoreResult(input);
  const verdict: Verdict = input.executionError
    ? "errored"
    : input.skipped
    ? "skipped"
    : belowPassAt(score, input.passAt ?? null)
    ? "failed"
    : "scored";
  return { verdict, score };
}

/** True when a score (complete or partial) earned less than a declared `passAt`. */
export function belowPassAt(score: ScoreResult | null, passAt: number | null): boolean {
  return passAt !== null && score !== null && score.state !== "unavailable" &&
    score.earned < passAt;
}

/**
 * The most an Attempt could earn: `maxPoints` when declared, else the sum of the points of its
 * `.score(points)` entries; `null` when a `t.score(points)` has no declared maximum, or when no
 * entry scores.
 */
function possibleOf(input: FoldInput): number | null {
  if (input.maxPoints !== undefined && input.maxPoints !== null) return input.maxPoints;
  let sum = 0;
  let any = false;
  for (const entry of input.entries) {
    if (entry.score === null) continue;
    if (entry.entry === "direct-score") return null;
    sum += entry.score.points;
    any = true;
  }
  return any ? sum : null;
}

function passVerdict(input: FoldInput): Verdict {
  const unknownRequired = input.entries.some((entry) =>
    !entry.optional && (entry.status === "unavailable" || entry.status === "errored")
  );
  if (input.executionError || unknownRequired) return "errored";
  if (input.entries.some((entry) => entry.gate && entry.status === "failed")) return "failed";
  return input.skipped ? "skipped" : "passed";
}

const REASON_ORDER: readonly ScoreReason[] = [
  "execution-errored",
  "source-unavailable",
  "evaluation-errored",
  "not-applicable",
];

function scoreResult(input: FoldInput): ScoreResult {
  if (input.skipped && !input.executionError) {
    return { state: "unavailable", reasons: ["not-applicable"] };
  }
  const reasons = new Set<ScoreReason>();
  let earned = 0;
  let recorded = false;
  for (const entry of input.entries) {
    if (entry.score === null) continue;
    if (entry.status === "unavailable") reasons.add("source-unavailable");
    else if (entry.status === "errored") reasons.add("evaluation-errored");
    if (entry.score.earned !== null) {
      earned += entry.score.earned;
      recorded = true;
    }
  }
  if (input.executionError) {
    reasons.add("execution-errored");
    if (!recorded) return { state: "unavailable", reasons: ordered(reasons) };
  }
  const possible = possibleOf(input);
  if (reasons.size > 0) return { state: "partial", earned, reasons: ordered(reasons), possible };
  return { state: "complete", earned, possible };
}

function ordered(reasons: ReadonlySet<ScoreReason>): ScoreReason[] {
  return REASON_ORDER.filter((reason) => reasons.has(reason));
}
