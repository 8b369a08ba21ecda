import assert from "node:assert/strict";
import { foldVerdict, type SealedAssertion } from "../../src/expect/mod.ts";

/** A sealed entry with sensible defaults. */
function entry(overrides: Partial<SealedAssertion> = {}): SealedAssertion {
  return {
    index: 0,
    entry: "boolean",
    criterion: "c",
    matcher: "m",
    key: null,
    label: null,
    group: [],
    status: "passed",
    result: "matched",
    measurement: null,
    atLeast: null,
    gateThreshold: null,
    met: null,
    expected: null,
    received: null,
    reason: null,
    optional: false,
    gate: true,
    score: null,
    source: null,
    ...overrides,
  };
}

function pass(
  entries: SealedAssertion[],
  extra: { executionError?: boolean; skipped?: boolean } = {},
) {
  return foldVerdict({
    kind: "pass",
    executionError: extra.executionError ?? false,
    skipped: extra.skipped ?? false,
    entries,
  });
}

function score(
  entries: SealedAssertion[],
  extra: {
    executionError?: boolean;
    skipped?: boolean;
    maxPoints?: number | null;
    passAt?: number | null;
  } = {},
) {
  return foldVerdict({
    kind: "score",
    executionError: extra.executionError ?? false,
    skipped: extra.skipped ?? false,
    entries,
    maxPoints: extra.maxPoints ?? null,
    passAt: extra.passAt ?? null,
  });
}

const failed = entry({ status: "failed", result: "mismatched" });
const unavailable = entry({ status: "unavailable", result: "unavailable" });
const errored = entry({ status: "errored", result: "errored" });

Deno.test("foldVerdict() passes a pass eval with no entries and no skip", () => {
  assert.deepEqual(pass([]), { verdict: "passed", score: null });
  assert.equal(pass([entry()]).verdict, "passed");
});

Deno.test("foldVerdict() errors on an execution error before anything else", () => {
  assert.equal(pass([failed], { executionError: true, skipped: true }).verdict, "errored");
});

Deno.test("foldVerdict() errors on a required unavailable or errored entry before a failure", () => {
  assert.equal(pass([failed, unavailable]).verdict, "errored");
  assert.equal(pass([errored]).verdict, "errored");
  const measurement = entry({
    entry: "measurement",
    status: "unavailable",
    result: null,
    gate: false,
  });
  assert.equal(pass([measurement]).verdict, "errored");
});

Deno.test("foldVerdict() forgives unavailable and errored optional entries", () => {
  const optional = [{ ...unavailable, optional: true }, { ...errored, optional: true }];
  assert.equal(pass(optional).verdict, "passed");
});

Deno.test("foldVerdict() fails on an optional gating mismatch", () => {
  assert.equal(pass([{ ...failed, optional: true }]).verdict, "failed");
});

Deno.test("foldVerdict() fails on a gated measurement below its threshold, not on atLeast", () => {
  const below = entry({ entry: "measurement", result: null, status: "failed", gate: true });
  assert.equal(pass([below]).verdict, "failed");
  const note = entry({
    entry: "measurement",
    result: null,
    status: "passed",
    gate: false,
    met: false,
  });
  assert.equal(pass([note]).verdict, "passed");
});

Deno.test("foldVerdict() fails before it skips, and skips before it passes", () => {
  assert.equal(pass([failed], { skipped: true }).verdict, "failed");
  assert.equal(pass([entry()], { skipped: true }).verdict, "skipped");
});

Deno.test("foldVerdict() scores a score eval with complete earned points", () => {
  const entries = [
    entry({ gate: false, score: { points: 2, earned: 2 } }),
    entry({ gate: false, status: "failed", result: "mismatched", score: { points: 3, earned: 0 } }),
    entry({
      entry: "direct-score",
      result: null,
      gate: false,
      score: { points: 1.5, earned: 1.5 },
    }),
    entry({ gate: false, status: "unavailable", result: "unavailable" }),
  ];
  assert.deepEqual(score(entries), {
    verdict: "scored",
    score: { state: "complete", earned: 3.5, possible: null },
  });
});

Deno.test("foldVerdict() gives complete 0 without contributions or errors", () => {
  assert.deepEqual(score([]), {
    verdict: "scored",
    score: { state: "complete", earned: 0, possible: null },
  });
});

Deno.test("foldVerdict() gives partial with source-unavailable and evaluation-errored reasons", () => {
  const entries = [
    entry({ gate: false, score: { points: 2, earned: 2 } }),
    entry({
      gate: false,
      status: "errored",
      result: "errored",
      score: { points: 1, earned: null },
    }),
    entry({
      gate: false,
      status: "unavailable",
      result: "unavailable",
      score: { points: 1, earned: null },
    }),
  ];
  assert.deepEqual(score(entries).score, {
    state: "partial",
    earned: 2,
    reasons: ["source-unavailable", "evaluation-errored"],
    possible: 4,
  });
  assert.equal(score(entries).verdict, "scored");
});

Deno.test("foldVerdict() gives partial 0 when the only contributor is unavailable", () => {
  const entries = [
    entry({ gate: false, status: "unavailable", score: { points: 1, earned: null } }),
  ];
  assert.deepEqual(score(entries).score, {
    state: "partial",
    earned: 0,
    reasons: ["source-unavailable"],
    possible: 1,
  });
});

Deno.test("foldVerdict() adds execution-errored: partial with contributions, else unavailable", () => {
  const contributed = [entry({ gate: false, score: { points: 2, earned: 2 } })];
  assert.deepEqual(score(contributed, { executionError: true }), {
    verdict: "errored",
    score: { state: "partial", earned: 2, reasons: ["execution-errored"], possible: 2 },
  });
  assert.deepEqual(score([], { executionError: true }), {
    verdict: "errored",
    score: { state: "unavailable", reasons: ["execution-errored"] },
  });
});

Deno.test("foldVerdict() gives unavailable not-applicable for a skipped score eval", () => {
  const contributed = [entry({ gate: false, score: { points: 2, earned: 2 } })];
  assert.deepEqual(score(contributed, { skipped: true }), {
    verdict: "skipped",
    score: { state: "unavailable", reasons: ["not-applicable"] },
  });
});

Deno.test("foldVerdict() never fails a score eval on a mismatch", () => {
  const entries = [
    entry({ gate: false, status: "failed", result: "mismatched", score: { points: 1, earned: 0 } }),
  ];
  assert.equal(score(entries).verdict, "scored");
});

const handleScored = entry({ gate: false, score: { points: 2, earned: 2 } });
const handleMissed = entry({
  gate: false,
  status: "failed",
  result: "mismatched",
  score: { points: 1, earned: 0 },
});
const direct = entry({
  entry: "direct-score",
  result: null,
  gate: false,
  score: { points: 1, earned: 1 },
});

Deno.test("issue 18.7: possible is the sum of the points of the .score(points) entries", () => {
  assert.deepEqual(score([handleScored, handleMissed]).score, {
    state: "complete",
    earned: 2,
    possible: 3,
  });
});

Deno.test("issue 18.7: a t.score(points) leaves possible unknown unless maxPoints is declared", () => {
  assert.deepEqual(score([direct, direct]).score, { state: "complete", earned: 2, possible: null });
  assert.deepEqual(score([direct, handleScored]).score, {
    state: "complete",
    earned: 3,
    possible: null,
  });
  assert.deepEqual(score([direct, direct], { maxPoints: 4 }).score, {
    state: "complete",
    earned: 2,
    possible: 4,
  });
});

Deno.test("issue 18.7: a score below passAt is failed, at or above it scored", () => {
  assert.equal(score([handleScored, handleMissed], { passAt: 2.5 }).verdict, "failed");
  assert.equal(score([handleScored, handleMissed], { passAt: 2 }).verdict, "scored");
  assert.equal(score([], { passAt: 0 }).verdict, "scored");
  assert.equal(score([], { passAt: 0.5 }).verdict, "failed");
});

Deno.test("issue 18.7: passAt never turns errored or skipped score Attempts into failed", () => {
  assert.equal(score([handleMissed], { passAt: 1, executionError: true }).verdict, "errored");
  assert.equal(score([handleMissed], { passAt: 1, skipped: true }).verdict, "skipped");
});

Deno.test("issue 18.7: a partial score below passAt is failed", () => {
  const unavailable = entry({
    gate: false,
    status: "unavailable",
    score: { points: 1, earned: null },
  });
  const folded = score([handleScored, unavailable], { passAt: 3 });
  assert.equal(folded.verdict, "failed");
  assert.equal(folded.score?.state, "partial");
});
