/**
 * In-process scheduler throughput: `runPlan` with a no-op Attempt that settles at once, for 200
 * and 10,000 slots at concurrency 1, 10 and 100. Measures the admission chain alone (no Record,
 * no reporters, no agent).
 */
import type { AttemptResult } from "../src/_shared/mod.ts";
import { realClock, realRandom } from "../src/_shared/mod.ts";
import type { PlannedSlot } from "../src/plan/mod.ts";
import { type AttemptControl, runPlan } from "../src/scheduler/mod.ts";
import { fakeAbandon, fakeResult } from "../tests/_fakes/attempt.ts";
import { evalIds, fakePlan } from "../tests/_fakes/plan.ts";

function noop(slot: PlannedSlot, control: AttemptControl): Promise<AttemptResult> {
  return Promise.resolve(fakeResult(slot, control, "passed", { endedAt: control.startedAt }));
}

for (const slots of [200, 10_000]) {
  // One experiment, `slots` evals: the plan is built once, outside the measured function.
  const plan = fakePlan({ evals: evalIds(slots), experiments: [{ id: "bench" }] });
  for (const cap of [1, 10, 100]) {
    Deno.bench({
      name: `runPlan ${slots} slots × concurrency ${cap}`,
      group: `runPlan ${slots}`,
      baseline: cap === 1,
      async fn() {
        const outcomes = await runPlan(plan, noop, {
          signal: new AbortController().signal,
          clock: realClock,
          random: realRandom,
          onEvent: () => {},
          cap,
          abandon: fakeAbandon,
        });
        if (outcomes.length !== slots) throw new Error("runPlan lost slots");
      },
    });
  }
}
