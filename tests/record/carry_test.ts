import assert from "node:assert/strict";
import {
  candidateOf,
  carryDecider,
  type CurrentIdentity,
  loadCandidates,
  RecordReader,
} from "../../src/record/mod.ts";
import { buildPlan, type RerunTier } from "../../src/plan/mod.ts";
import { createPanelState, reducePanel } from "../../src/panel/mod.ts";
import {
  CONFIG_A,
  CONFIG_B,
  digestFor,
  INPUT_1,
  INPUT_2,
  uuidOf,
  writeRun,
} from "../_fakes/record.ts";
import { result } from "../_fakes/results.ts";
import { fakeSelection } from "../_fakes/plan.ts";
import { startRun } from "../scheduler/_harness.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

const T0 = Date.UTC(2026, 10, 29, 10, 0, 0);
const exec = (attemptId: string, verdict: "passed" | "failed" | "errored", durationMs = 1000) => ({
  kind: "executed" as const,
  result: result({
    attemptId: uuidOf(attemptId),
    verdict,
    endedAt: T0 + durationMs,
    timedMs: durationMs,
  }),
});
/** The test name of a RunId or AttemptId made by {@link uuidOf}. */
const nameOf = (id: string | null, names: readonly string[]) =>
  names.find((name) => uuidOf(name) === id) ?? id;

function identity(configHash = CONFIG_A, inputFingerprint = INPUT_1): CurrentIdentity {
  return {
    configHash: () => configHash,
    inputFingerprint: () => inputFingerprint,
    digest: () => digestFor(configHash, inputFingerprint),
  };
}

async function decide(
  root: string,
  ordinal: number,
  options: {
    tier?: RerunTier;
    current?: CurrentIdentity;
    timeoutMs?: number | null;
    evalId?: string;
  } = {},
) {
  const evalId = options.evalId ?? "e1";
  const candidates = await loadCandidates(new RecordReader(root), [{
    experimentId: "exp",
    evalId,
  }]);
  return carryDecider(candidates, options.current ?? identity(), options.tier ?? "none")({
    experimentId: "exp",
    evalId,
    ordinal,
    timeoutMs: options.timeoutMs ?? null,
  });
}

Deno.test("S134 rerun tiers: none carries passed and failed, --rerun passed only, --rerun all none", () =>
  withTempDir(async (root) => {
    await writeRun(root, {
      runId: uuidOf("r1"),
      experimentId: "exp",
      startedAt: T0,
      slots: [{ evalId: "e1", ordinal: 0, fill: exec("p", "passed") }, {
        evalId: "e1",
        ordinal: 1,
        fill: exec("f", "failed"),
      }],
    });
    assert.equal((await decide(root, 0)).action, "carry");
    assert.equal((await decide(root, 1)).action, "carry");
    assert.equal((await decide(root, 0, { tier: "failed" })).action, "carry");
    assert.deepEqual(
      await decide(root, 1, { tier: "failed" }).then((
        d,
      ) => [d.action, d.action === "run" && d.reason]),
      ["run", "rerun-tier"],
    );
    assert.deepEqual(
      await decide(root, 0, { tier: "all" }).then((
        d,
      ) => [d.action, d.action === "run" && d.reason]),
      ["run", "rerun-tier"],
    );
  }));

Deno.test("S133 a changed configuration hash makes ordinals identity-changed (config)", () =>
  withTempDir(async (root) => {
    await writeRun(root, {
      runId: uuidOf("r1"),
      experimentId: "exp",
      startedAt: T0,
      slots: [{ evalId: "e1", ordinal: 0, fill: exec("p", "passed") }],
    });
    const d = await decide(root, 0, { current: identity(CONFIG_B) });
    assert.deepEqual(d.action === "run" && [d.reason, d.detail], ["identity-changed", "config"]);
    const both = await decide(root, 0, { current: identity(CONFIG_B, INPUT_2) });
    assert.deepEqual(both.action === "run" && [both.reason, both.detail], [
      "identity-changed",
      "config,input",
    ]);
    const input = await decide(root, 0, { current: identity(CONFIG_A, INPUT_2) });
    assert.deepEqual(input.action === "run" && [input.reason, input.detail], [
      "identity-changed",
      "input",
    ]);
  }));

Deno.test("S135 carry is per ordinal: errored, not-dispatched and missing ordinals run again", () =>
  withTempDir(async (root) => {
    await writeRun(root, {
      runId: uuidOf("r1"),
      experimentId: "exp",
      startedAt: T0,
      slots: [
        { evalId: "e1", ordinal: 0, fill: exec("p0", "passed") },
        { evalId: "e1", ordinal: 1, fill: exec("p1", "passed") },
        { evalId: "e1", ordinal: 2, fill: exec("x", "errored") },
        { evalId: "e1", ordinal: 3, fill: { kind: "not-dispatched", reason: "budget-exhausted" } },
      ],
    });
    const reasons = [];
    for (let o = 0; o < 5; o++) {
      const d = await decide(root, o);
      reasons.push(d.action === "carry" ? "carry" : d.reason);
    }
    assert.deepEqual(reasons, [
      "carry",
      "carry",
      "verdict-not-eligible",
      "verdict-not-eligible",
      "new",
    ]);
  }));

Deno.test("S135 3 eligible of 5 ordinals and one errored: 2 run, live reused stays 3, passed and failed count only the new Attempts", () =>
  withTempDir(async (root) => {
    await writeRun(root, {
      runId: uuidOf("r1"),
      experimentId: "exp",
      startedAt: T0,
      slots: [
        { evalId: "e1", ordinal: 0, fill: exec("p0", "passed") },
        { evalId: "e1", ordinal: 1, fill: exec("f1", "failed") },
        { evalId: "e1", ordinal: 2, fill: exec("p2", "passed") },
        { evalId: "e1", ordinal: 3, fill: exec("x3", "errored") },
      ],
    });
    const candidates = await loadCandidates(new RecordReader(root), [{
      experimentId: "exp",
      evalId: "e1",
    }]);
    const selection = fakeSelection({ evals: ["e1"], experiments: [{ id: "exp" }] });
    const plan = buildPlan(
      selection,
      { rerun: "none", attempts: 5 },
      carryDecider(candidates, identity(), "none"),
    );
    assert.deepEqual(
      plan.slots.map((s) => s.carry.action === "carry" ? "carry" : s.carry.reason),
      ["carry", "carry", "carry", "verdict-not-eligible", "new"],
    );
    assert.deepEqual([plan.reused, plan.toRun], [3, 2]);
    const run = startRun(plan, { cap: 2, script: () => ({ durationMs: 10, verdict: "passed" }) });
    await run.finish();
    assert.deepEqual(run.fake.started.map((a) => a.slot.ordinal).sort(), [3, 4]);
    let state = createPanelState({
      title: "niceeval exp",
      startedAt: 0,
      total: plan.total,
      reused: plan.reused,
      cap: 2,
    });
    for (const event of run.log.events) {
      state = reducePanel(state, event);
      assert.equal(state.counters.reused, 3, event.type);
    }
    const { passed, failed, errored, queued, running } = state.counters;
    assert.deepEqual({ passed, failed, errored, queued, running }, {
      passed: 2,
      failed: 0,
      errored: 0,
      queued: 0,
      running: 0,
    });
  }));

Deno.test("S136 a passed ordinal longer than the current timeout runs with duration-exceeds-timeout", () =>
  withTempDir(async (root) => {
    await writeRun(root, {
      runId: uuidOf("r1"),
      experimentId: "exp",
      startedAt: T0,
      slots: [{ evalId: "e1", ordinal: 0, fill: exec("slow", "passed", 90_000) }],
    });
    const d = await decide(root, 0, { timeoutMs: 60_000 });
    assert.deepEqual(d.action === "run" && d.reason, "duration-exceeds-timeout");
    assert.equal((await decide(root, 0, { timeoutMs: 90_000 })).action, "carry");
  }));

Deno.test("S137 only the latest published Run of the experiment is a source", () =>
  withTempDir(async (root) => {
    await writeRun(root, {
      runId: uuidOf("r-old"),
      experimentId: "exp",
      startedAt: T0,
      slots: [{ evalId: "e1", ordinal: 0, fill: exec("p", "passed") }],
    });
    await writeRun(root, {
      runId: uuidOf("r-new"),
      experimentId: "exp",
      startedAt: T0 + 60_000,
      slots: [{ evalId: "e1", ordinal: 0, fill: exec("x", "errored") }],
    });
    const d = await decide(root, 0);
    assert.deepEqual(d.action === "run" && [d.reason, d.source?.runId], [
      "verdict-not-eligible",
      uuidOf("r-new"),
    ]);
  }));

Deno.test("loadCandidates() follows a carried member to its origin Attempt without chaining", () =>
  withTempDir(async (root) => {
    await writeRun(root, {
      runId: uuidOf("r1"),
      experimentId: "exp",
      startedAt: T0,
      slots: [{ evalId: "e1", ordinal: 0, fill: exec("p", "passed") }],
    });
    await writeRun(root, {
      runId: uuidOf("r2"),
      experimentId: "exp",
      startedAt: T0 + 1000,
      slots: [{
        evalId: "e1",
        ordinal: 0,
        fill: { kind: "carried", originRunId: uuidOf("r1"), attemptId: uuidOf("p") },
      }],
    });
    const d = await decide(root, 0);
    assert.equal(d.action, "carry");
    assert.deepEqual(
      d.action === "carry" && [d.source.runId, d.source.originRunId, d.source.attemptId],
      ["r2", "r1", "p"].map(uuidOf),
    );
  }));

Deno.test("carryDecider() answers new when no published Run holds the eval", () =>
  withTempDir(async (root) => {
    await writeRun(root, {
      runId: uuidOf("r1"),
      experimentId: "other",
      startedAt: T0,
      slots: [{ evalId: "e1", ordinal: 0, fill: exec("p", "passed") }],
    });
    const d = await decide(root, 0);
    assert.deepEqual(d.action === "run" && [d.reason, d.source], ["new", null]);
  }));

Deno.test("loadCandidates() takes each eval from the latest published Run that holds it (CARRY-1)", () =>
  withTempDir(async (root) => {
    await writeRun(root, {
      runId: uuidOf("r-old"),
      experimentId: "exp",
      startedAt: T0,
      slots: [
        { evalId: "e1", ordinal: 0, fill: exec("old-e1-0", "passed") },
        { evalId: "e1", ordinal: 1, fill: exec("old-e1-1", "failed") },
        { evalId: "e2", ordinal: 0, fill: exec("old-e2-0", "passed") },
        { evalId: "e2", ordinal: 1, fill: exec("old-e2-1", "passed") },
      ],
    });
    // A later Run of e2 alone (ordinal 0 only), and a later Run of another experiment.
    await writeRun(root, {
      runId: uuidOf("r-new"),
      experimentId: "exp",
      startedAt: T0 + 60_000,
      slots: [{ evalId: "e2", ordinal: 0, fill: exec("new-e2-0", "failed") }],
    });
    await writeRun(root, {
      runId: uuidOf("r-other"),
      experimentId: "other",
      startedAt: T0 + 120_000,
      slots: [{ evalId: "e1", ordinal: 0, fill: exec("other-e1-0", "errored") }],
    });
    const candidates = await loadCandidates(new RecordReader(root), [
      { experimentId: "exp", evalId: "e1" },
      { experimentId: "exp", evalId: "e2" },
      { experimentId: "exp", evalId: "e3" },
    ]);
    const ordinals = (evalId: string) =>
      [0, 1].map((ordinal) => {
        const c = candidateOf(candidates, "exp", evalId, ordinal);
        const names = ["r-old", "r-new", "r-other", `old-${evalId}-${ordinal}`];
        names.push(`new-${evalId}-${ordinal}`);
        return c ? `${nameOf(c.run.runId, names)}:${nameOf(c.attemptId, names)}` : null;
      });
    assert.deepEqual(ordinals("e1"), ["r-old:old-e1-0", "r-old:old-e1-1"]);
    // The source is one Run per eval: r-new, which has no ordinal 1 (that ordinal runs again).
    assert.deepEqual(ordinals("e2"), ["r-new:new-e2-0", null]);
    assert.deepEqual(ordinals("e3"), [null, null]);
    assert.deepEqual([...candidates.keys()].length, 2);
  }));
