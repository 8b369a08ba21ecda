import assert from "node:assert/strict";
import {
  compareDocument,
  compareLines,
  compareRuns,
  type CompareSlot,
} from "../../src/report/mod.ts";

const RUN_A = "aaaaaaaa-0000-4000-8000-000000000000";
const RUN_B = "bbbbbbbb-0000-4000-8000-000000000000";

/** A pass eval's slots, one per verdict given (null: a slot without an Attempt). */
function pass(evalId: string, ...verdicts: (string | null)[]): CompareSlot[] {
  return verdicts.map((verdict, ordinal) => ({
    evalId,
    ordinal,
    kind: "pass",
    verdict,
    score: null,
  }));
}

/** A score eval's slots, one per score given (null: errored, no score). */
function score(evalId: string, ...scores: (number | null)[]): CompareSlot[] {
  return scores.map((s, ordinal) => ({
    evalId,
    ordinal,
    kind: "score",
    verdict: s === null ? "errored" : "scored",
    score: s,
  }));
}

function compare(a: CompareSlot[], b: CompareSlot[]) {
  return compareRuns(
    { runId: RUN_A, experimentId: "before", startedAt: "2026-01-01T00:00:00.000Z", slots: a },
    { runId: RUN_B, experimentId: "after", startedAt: "2026-01-02T00:00:00.000Z", slots: b },
  );
}

/** The state of the one eval `x` compared. */
function stateOf(a: CompareSlot[], b: CompareSlot[]): string {
  const { evals } = compare(a, b);
  assert.equal(evals.length, 1);
  return evals[0]!.state;
}

Deno.test("compareRuns() calls an eval failing in A and passing in B fixed", () => {
  assert.equal(stateOf(pass("x", "passed", "failed"), pass("x", "passed", "passed")), "fixed");
});

Deno.test("compareRuns() calls an eval passing in A and failing in B regressed", () => {
  assert.equal(stateOf(pass("x", "passed"), pass("x", "errored")), "regressed");
});

Deno.test("compareRuns() calls an eval failing on both sides still failing", () => {
  assert.equal(stateOf(pass("x", "failed"), pass("x", "passed", "failed")), "still-failing");
});

Deno.test("compareRuns() calls an eval passing on both sides still passing", () => {
  assert.equal(stateOf(pass("x", "passed"), pass("x", "passed", "passed")), "still-passing");
});

Deno.test("compareRuns() calls an eval only in B new", () => {
  const { evals } = compare([], pass("x", "passed"));
  assert.deepEqual(evals, [{
    evalId: "x",
    state: "new",
    a: null,
    b: { passed: 1, total: 1, meanScore: null },
  }]);
});

Deno.test("compareRuns() calls an eval only in A gone", () => {
  const { evals } = compare(pass("x", "failed"), []);
  assert.deepEqual(evals, [{
    evalId: "x",
    state: "gone",
    a: { passed: 0, total: 1, meanScore: null },
    b: null,
  }]);
});

Deno.test("compareRuns() counts an eval failing when any ordinal is not passed or scored", () => {
  for (const verdict of ["failed", "errored", "interrupted", "skipped", null]) {
    assert.equal(
      stateOf(pass("x", "passed", "passed"), pass("x", "passed", verdict)),
      "regressed",
      String(verdict),
    );
  }
  assert.equal(stateOf(score("x", 1, 0), score("x", 0, 0)), "still-passing");
});

Deno.test("compareRuns() tallies passed ordinals and the mean score over scored ordinals", () => {
  const { evals } = compare(score("g", 0.5, 1), score("g", 0.25, null, 0.75));
  assert.deepEqual(evals, [{
    evalId: "g",
    state: "regressed",
    a: { passed: 2, total: 2, meanScore: 0.75 },
    b: { passed: 2, total: 3, meanScore: 0.5 },
  }]);
});

Deno.test("compareRuns() counts every state and keeps A's eval order, then B's new evals", () => {
  const c = compare(
    [
      ...pass("steady", "passed"),
      ...pass("broke", "passed"),
      ...pass("mended", "failed"),
      ...pass("left", "passed"),
      ...pass("stuck", "failed"),
    ],
    [
      ...pass("arrived", "passed"),
      ...pass("stuck", "failed"),
      ...pass("mended", "passed"),
      ...pass("broke", "failed"),
      ...pass("steady", "passed"),
      ...pass("fresh", "failed"),
    ],
  );
  assert.deepEqual(c.counts, {
    fixed: 1,
    regressed: 1,
    "still-failing": 1,
    "still-passing": 1,
    new: 2,
    gone: 1,
  });
  assert.deepEqual(c.evals.map((e) => e.evalId), [
    "steady",
    "broke",
    "mended",
    "left",
    "stuck",
    "arrived",
    "fresh",
  ]);
});

Deno.test("compareDocument() is the niceeval.compare document", () => {
  const doc = compareDocument(compare(
    [...pass("a", "passed"), ...score("g", 0.5)],
    [...pass("a", "failed"), ...score("g", 0.5)],
  ));
  assert.deepEqual(doc, {
    format: "niceeval.compare",
    schemaVersion: 1,
    a: { runId: RUN_A, experimentId: "before", startedAt: "2026-01-01T00:00:00.000Z" },
    b: { runId: RUN_B, experimentId: "after", startedAt: "2026-01-02T00:00:00.000Z" },
    counts: {
      fixed: 0,
      regressed: 1,
      "still-failing": 0,
      "still-passing": 1,
      new: 0,
      gone: 0,
    },
    evals: [
      {
        evalId: "a",
        state: "regressed",
        a: { passed: 1, total: 1, meanScore: null },
        b: { passed: 0, total: 1, meanScore: null },
      },
      {
        evalId: "g",
        state: "still-passing",
        a: { passed: 1, total: 1, meanScore: 0.5 },
        b: { passed: 1, total: 1, meanScore: 0.5 },
      },
    ],
  });
});

Deno.test("compareLines() prints both sides, the counts, then the evals grouped by state", () => {
  const lines = compareLines(compare(
    [
      ...pass("gone_one", "passed"),
      ...pass("fixed_one", "failed", "passed"),
      ...pass("stuck", "failed"),
      ...pass("steady", "passed"),
      ...pass("broke", "passed", "passed"),
    ],
    [
      ...pass("stuck", "errored"),
      ...pass("broke", "passed", "failed"),
      ...pass("steady", "passed"),
      ...pass("fixed_one", "passed", "passed"),
      ...pass("new_one", "passed"),
    ],
  ));
  assert.deepEqual(lines, [
    `before  run ${RUN_A} · before · 2026-01-01T00:00:00.000Z`,
    `after   run ${RUN_B} · after · 2026-01-02T00:00:00.000Z`,
    "fixed 1 · regressed 1 · still failing 1 · still passing 1 · new 1 · gone 1",
    "  regressed      broke      2/2 passed  →  1/2 passed",
    "  fixed          fixed_one  1/2 passed  →  2/2 passed",
    "  still failing  stuck      0/1 passed  →  0/1 passed",
    "  new            new_one    —           →  1/1 passed",
    "  gone           gone_one   1/1 passed  →  —",
  ]);
});

Deno.test("compareLines() lists a still-passing score eval whose mean score changed", () => {
  const lines = compareLines(compare(
    [...score("graded", 0.9, 0.7), ...score("same", 0.5), ...pass("steady", "passed")],
    [...score("graded", 0.5, 0.6), ...score("same", 0.5), ...pass("steady", "passed", "passed")],
  ));
  assert.deepEqual(lines.slice(2), [
    "fixed 0 · regressed 0 · still failing 0 · still passing 3 · new 0 · gone 0",
    "  still passing  graded  2/2 passed · score 0.8  →  2/2 passed · score 0.55",
  ]);
});

Deno.test("compareLines() prints only the header and counts when every eval still passes", () => {
  const lines = compareLines(compare(pass("a", "passed"), pass("a", "passed")));
  assert.equal(lines.length, 3);
  assert.equal(
    lines[2],
    "fixed 0 · regressed 0 · still failing 0 · still passing 1 · new 0 · gone 0",
  );
});
