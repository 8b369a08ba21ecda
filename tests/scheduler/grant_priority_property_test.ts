/**
 * Randomized, seeded (no fast-check in the project): for random suites — global cap, experiment
 * caps, eval groups, shared exclusive lanes and Attempt durations on fake time, with many ends at
 * the same instant — no `attempt_start` goes to a slot while a smaller key could have used the
 * same freed capacity (PRIO-1, PRIO-6, PRIO-7, PRIO-8), and the OUT-J6 replay stays clean (S28).
 */
import assert from "node:assert/strict";
import type { Random } from "../../src/_shared/mod.ts";
import type { FakeEvalSpec, FakeExperimentSpec } from "../_fakes/plan.ts";
import { fakePlan } from "../_fakes/plan.ts";
import { createSeededRandom } from "../_fakes/random.ts";
import { startRun } from "./_harness.ts";
import { priorityViolations } from "./_priority_audit.ts";

const SUITES = 120;

/** A random suite within the bounds where {@link priorityViolations} is exact. */
function randomSuite(random: Random) {
  const int = (lo: number, hi: number) => lo + Math.floor(random.next() * (hi - lo + 1));
  const evals: FakeEvalSpec[] = [];
  const experiments: FakeExperimentSpec[] = [];
  for (let i = 0, n = int(2, 4); i < n; i++) {
    const id = `x${i}`;
    const kind = ["plain", "serial", "capped", "laned"][int(0, 3)]!;
    const own = Array.from({ length: int(1, 5) }, (_, k) => `${id}e${k}`);
    const grouped = (kind === "plain" || kind === "serial") && own.length > 1 && int(0, 1) === 1
      ? int(2, own.length)
      : 0;
    own.forEach((evalId, k) => evals.push(k < grouped ? { id: evalId, groupId: `g${i}` } : evalId));
    experiments.push({
      id,
      evals: own,
      attempts: int(1, 2),
      ...(kind === "serial" ? { maxConcurrency: 1 } : {}),
      ...(kind === "capped" ? { maxConcurrency: int(2, 3) } : {}),
      ...(kind === "laned" ? { laneKey: `lane-${int(0, 1)}` } : {}),
    });
  }
  // Discovery order interleaves the experiments' evals.
  for (let i = evals.length - 1; i > 0; i--) {
    const j = int(0, i);
    [evals[i], evals[j]] = [evals[j]!, evals[i]!];
  }
  const cap = int(1, 4);
  const plan = fakePlan({ evals, experiments });
  const durations = plan.slots.map(() => 10 * int(1, 5));
  return { plan, cap, durations };
}

Deno.test("PRIO-1 PRIO-7 S28 seeded random suites never grant a slot past a smaller key that could use it", async () => {
  const failures: string[] = [];
  for (let seed = 1; seed <= SUITES; seed++) {
    const { plan, cap, durations } = randomSuite(createSeededRandom(seed));
    const run = startRun(plan, {
      cap,
      script: (slot) => ({ durationMs: durations[slot.position]! }),
    });
    await run.finish();
    const found = [
      ...priorityViolations(plan, cap, run.log.events),
      ...run.log.allViolations(),
    ];
    if (found.length > 0) failures.push(`seed ${seed} (G = ${cap}): ${found[0]}`);
    assert.equal(run.log.starts().length, plan.toRun, `seed ${seed}: every slot starts`);
  }
  assert.deepEqual(failures, []);
});
