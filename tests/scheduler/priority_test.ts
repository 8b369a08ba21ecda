/** Section E of scenarios.md: priority keys and waves (PRIO-1 … PRIO-7). */
import assert from "node:assert/strict";
import { evalIds, fakePlan } from "../_fakes/plan.ts";
import { startRun } from "./_harness.ts";

Deno.test("S33 the experiment with more rounds gets the first grants", async () => {
  const plan = fakePlan({
    evals: [...evalIds(3, "a"), ...evalIds(10, "b")],
    experiments: [
      { id: "a", evals: evalIds(3, "a") },
      { id: "b", evals: evalIds(10, "b") },
    ],
  });
  const run = startRun(plan, { cap: 2 });
  await run.flush();
  assert.deepEqual(run.log.starts(), ["b:b0#0", "b:b1#0"]);
  await run.passAll();
});

Deno.test("S34 equal rounds go to the experiment earlier in selection order", async () => {
  const plan = fakePlan({
    evals: ["a", "b"],
    experiments: [{ id: "first", evals: ["b"] }, { id: "second", evals: ["a"] }],
  });
  // `second` owns the earlier eval, so its slot comes first in plan order; the key still wins.
  assert.equal(plan.slots[0]!.experimentId, "second");
  const run = startRun(plan, { cap: 1 });
  await run.flush();
  assert.deepEqual(run.log.starts(), ["first:b#0"]);
  await run.passAll();
  assert.deepEqual(run.log.starts(), ["first:b#0", "second:a#0"]);
});

Deno.test("S35 G = 1 start order is wave-major", async () => {
  const plan = fakePlan({ evals: ["e1", "e2", "e3"], experiments: [{ id: "x", attempts: 2 }] });
  const run = startRun(plan, { cap: 1, script: () => ({ durationMs: 5 }) });
  await run.finish();
  assert.deepEqual(run.log.starts(), [
    "x:e1#0",
    "x:e2#0",
    "x:e3#0",
    "x:e1#1",
    "x:e2#1",
    "x:e3#1",
  ]);
});

Deno.test("S36 carried ordinals leave the waves before slot indexes are assigned", async () => {
  const plan = fakePlan({
    evals: ["e1", "e2"],
    experiments: [{ id: "x", attempts: 2, carried: { "e1#0": "failed" } }],
  });
  const run = startRun(plan, { cap: 1, script: () => ({ durationMs: 5 }) });
  await run.finish();
  assert.deepEqual(run.log.starts(), ["x:e1#1", "x:e2#0", "x:e2#1"]);
});

Deno.test("S37 a capped experiment starts in slot order under a larger G", async () => {
  const plan = fakePlan({
    evals: ["e1", "e2", "e3"],
    experiments: [{ id: "x", attempts: 2, maxConcurrency: 1 }],
  });
  const run = startRun(plan, { cap: 4, script: (slot) => ({ durationMs: 10 - slot.position }) });
  await run.finish();
  assert.deepEqual(run.log.starts(), [
    "x:e1#0",
    "x:e2#0",
    "x:e3#0",
    "x:e1#1",
    "x:e2#1",
    "x:e3#1",
  ]);
});

Deno.test("S37 a capped experiment with two permits grants them in key order", async () => {
  const plan = fakePlan({
    evals: ["e1", "e2", "e3"],
    experiments: [{ id: "x", attempts: 2, maxConcurrency: 2 }],
  });
  const run = startRun(plan, { cap: 4 });
  await run.flush();
  // Plan order would admit e1#0 and e1#1; the key (wave-major) admits e1#0 and e2#0.
  assert.deepEqual(run.log.starts(), ["x:e1#0", "x:e2#0"]);
  await run.passAll();
});

Deno.test("S38 rounds are not recomputed when earlyExit leaves one b slot", async () => {
  const plan = fakePlan({
    evals: ["b1", "b2", "a1", "a2"],
    experiments: [
      { id: "a", evals: ["a1", "a2"] },
      // b: 4 runnable slots at G = 1 → rounds 4; a: rounds 2.
      {
        id: "b",
        evals: ["b1", "b2"],
        attempts: 3,
        earlyExit: true,
        carried: { "b2#0": "failed", "b2#1": "failed" },
      },
    ],
  });
  const run = startRun(plan, { cap: 1 });
  await run.flush();
  assert.deepEqual(run.log.starts(), ["b:b1#0"]);
  run.fake.get("b:b1#0").pass();
  await run.flush();
  // b1#1 and b1#2 are skipped; the single b slot left (rounds 1 if recomputed) still goes first.
  assert.deepEqual(run.log.ofType("not_dispatched").map((e) => e.slot.ordinal), [1, 2]);
  assert.deepEqual(run.log.starts(), ["b:b1#0", "b:b2#2"]);
  await run.passAll();
  assert.deepEqual(run.log.starts(), ["b:b1#0", "b:b2#2", "a:a1#0", "a:a2#0"]);
});

Deno.test("issue 20: an experiment capped below G goes ahead of an uncapped one with as many rounds", async () => {
  // G = 4: open has 8 evals (rounds 2), capped 4 evals at max 2 (rounds 2). Capped first, so the
  // uncapped experiment back-fills the other two slots instead of leaving them idle later.
  const plan = fakePlan({
    evals: [...evalIds(8, "o"), ...evalIds(4, "c")],
    experiments: [
      { id: "open", evals: evalIds(8, "o") },
      { id: "capped", maxConcurrency: 2, evals: evalIds(4, "c") },
    ],
  });
  const run = startRun(plan, { cap: 4 });
  await run.flush();
  assert.deepEqual(run.log.starts(), ["capped:c0#0", "capped:c1#0", "open:o0#0", "open:o1#0"]);
  await run.passAll();
});

Deno.test("issue 20: a capped chain with fewer rounds still starts first; at G = 1 nothing changes", async () => {
  const experiments = [
    { id: "open", evals: evalIds(6, "o") },
    { id: "chain", maxConcurrency: 1, evals: evalIds(2, "c") },
  ];
  const evals = [...evalIds(6, "o"), ...evalIds(2, "c")];
  const wide = startRun(fakePlan({ evals, experiments }), { cap: 3 });
  await wide.flush();
  assert.deepEqual(wide.log.starts(), ["chain:c0#0", "open:o0#0", "open:o1#0"]);
  await wide.passAll();
  // At G = 1 the cap of 1 is not below G: rounds decide (open 6 > chain 2).
  const serial = startRun(fakePlan({ evals, experiments }), { cap: 1 });
  await serial.flush();
  assert.deepEqual(serial.log.starts(), ["open:o0#0"]);
  await serial.passAll();
});
