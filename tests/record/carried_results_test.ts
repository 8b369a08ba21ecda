/**
 * Issue 18.10: the result of a carried failed Attempt is read back for FAILURES and JUnit, and
 * only that: never a carried pass, never an Attempt that was not carried.
 */
import assert from "node:assert/strict";
import type { CarryDecision, CarrySource } from "../../src/plan/mod.ts";
import {
  carriedResults,
  carryDecider,
  loadCandidates,
  RecordReader,
} from "../../src/record/mod.ts";
import { CONFIG_A, digestFor, INPUT_1, uuidOf, writeRun } from "../_fakes/record.ts";
import { entry, result } from "../_fakes/results.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

const T0 = Date.UTC(2026, 10, 29, 10, 0, 0);
const CURRENT = {
  configHash: () => CONFIG_A,
  inputFingerprint: () => INPUT_1,
  digest: () => digestFor(CONFIG_A, INPUT_1),
};

/** Two failing assertions and a passing one: only the failing ones come back. */
const ASSERTIONS = [
  entry({ index: 0 }),
  entry({
    index: 1,
    criterion: 'includes("Goodbye")',
    status: "failed",
    result: "mismatched",
    expected: "Goodbye",
    received: "Hello!",
  }),
  entry({
    index: 2,
    criterion: 'includes("See you")',
    status: "failed",
    result: "mismatched",
    expected: "See you",
    received: "Hello!",
    reason: "no farewell",
  }),
];

/** Writes a Run where e1#0 passed and e1#1 failed; returns the decisions of both ordinals. */
async function decisions(root: string, tier: "none" | "failed"): Promise<CarryDecision[]> {
  const failed = result({ attemptId: uuidOf("f"), verdict: "failed", ordinal: 1 });
  await writeRun(root, {
    runId: uuidOf("r1"),
    experimentId: "exp",
    startedAt: T0,
    slots: [
      {
        evalId: "e1",
        ordinal: 0,
        fill: { kind: "executed", result: result({ attemptId: uuidOf("p") }) },
      },
      {
        evalId: "e1",
        ordinal: 1,
        fill: {
          kind: "executed",
          result: { ...failed, details: { ...failed.details, assertions: ASSERTIONS } },
        },
      },
    ],
  });
  const candidates = await loadCandidates(new RecordReader(root), [
    { experimentId: "exp", evalId: "e1" },
  ]);
  const decide = carryDecider(candidates, CURRENT, tier);
  return [0, 1].map((ordinal) =>
    decide({ experimentId: "exp", evalId: "e1", ordinal, timeoutMs: null })
  );
}

const sourceOf = (d: CarryDecision): CarrySource => {
  assert.equal(d.action, "carry");
  return d.source!;
};

Deno.test("issue 18.10: carriedResults() reads back a carried failure with its failing assertions, never a carried pass", () =>
  withTempDir(async (root) => {
    const [passed, failed] = (await decisions(root, "none")).map(sourceOf) as [
      CarrySource,
      CarrySource,
    ];
    const loaded = await carriedResults([passed, failed]);
    assert.deepEqual([...loaded.keys()], [failed]);
    const r = loaded.get(failed)!;
    assert.deepEqual(
      [r.attemptId, r.verdict, r.ordinal, r.error, r.usage],
      [uuidOf("f"), "failed", 1, null, { inputTokens: 10, outputTokens: 5 }],
    );
    assert.deepEqual(r.details.assertions, ASSERTIONS.slice(1));
  }));

Deno.test("issue 18.10: carriedResults() reads nothing for a source it never carried, and leaves out one it cannot read", () =>
  withTempDir(async (root) => {
    const [, rerun] = await decisions(root, "failed");
    assert.equal(rerun!.action, "run");
    assert.equal((await carriedResults([rerun!.source!])).size, 0);
  }).then(() =>
    withTempDir(async (root) => {
      const [, failed] = (await decisions(root, "none")).map(sourceOf);
      await Deno.remove(`${root}/runs`, { recursive: true });
      assert.equal((await carriedResults([failed!])).size, 0);
    })
  ));
