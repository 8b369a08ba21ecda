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
  const verdict: Verdict = input.executionError ? "errored" : input.skipped ? "skipped" : "scored";
  return { verdict, score: scoreResult(input) };
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
  if (reasons.size > 0) return { state: "partial", earned, reasons: ordered(reasons) };
  return { state: "complete", earned };
}

function ordered(reasons: ReadonlySet<ScoreReason>): ScoreReason[] {
  return REASON_ORDER.filter((reason) => reasons.has(reason));
}
