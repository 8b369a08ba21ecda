/** Hand-built AttemptResults and assertion entries for Record and report tests. */
import type { AttemptResult } from "../../src/_shared/mod.ts";
import type { SealedAssertion } from "../../src/expect/mod.ts";

/** A sealed Boolean assertion entry. */
export function entry(over: Partial<SealedAssertion> = {}): SealedAssertion {
  return {
    index: 0,
    entry: "boolean",
    criterion: "turn succeeded",
    matcher: "succeeded",
    key: null,
    label: null,
    group: [],
    status: "passed",
    result: "matched",
    measurement: null,
    atLeast: null,
    gateThreshold: null,
    met: null,
    expected: "completed",
    received: "completed",
    reason: null,
    optional: false,
    gate: true,
    score: null,
    source: "evals/a.eval.ts:3",
    ...over,
  };
}

/** An executed Attempt's result; `verdict` picks consistent outcome and entries. */
export function result(over: Partial<AttemptResult> & { attemptId: string }): AttemptResult {
  const verdict = over.verdict ?? "passed";
  const failed = verdict === "failed";
  return {
    experimentId: "exp",
    evalId: "e1",
    ordinal: 0,
    kind: "pass",
    outcome: verdict === "errored" ? "errored" : "completed",
    verdict,
    score: null,
    scoreResult: null,
    skipReason: null,
    error: verdict === "errored"
      ? {
        code: "test-threw",
        phase: "test",
        message: "boom",
        scope: "attempt",
        location: null,
        stack: null,
      }
      : null,
    startedAt: Date.UTC(2026, 10, 29, 10, 0, 0),
    endedAt: Date.UTC(2026, 10, 29, 10, 0, 1),
    timedMs: 1000,
    usage: { inputTokens: 10, outputTokens: 5 },
    estimatedCostUSD: null,
    turnCount: 1,
    retries: [],
    details: {
      assertions: [
        entry(
          failed
            ? {
              status: "failed",
              result: "mismatched",
              received: "failed",
              reason: "deterministic failure",
            }
            : {},
        ),
      ],
      turns: [],
      phases: [],
      diagnostics: [],
      logs: [],
    },
    ...over,
  };
}
