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
import {
  type Benchmark,
  type BenchOptions,
  count,
  type Figures,
  median,
  spread,
} from "./_harness.ts";

const FULL_SLOTS = [200, 10_000];
const QUICK_SLOTS = [200];
const CAPS = [1, 10, 100];
const FULL_REPEATS = 10;
const QUICK_REPEATS = 1;

function noop(slot: PlannedSlot, control: AttemptControl): Promise<AttemptResult> {
  return Promise.resolve(fakeResult(slot, control, "passed", { endedAt: control.startedAt }));
}

async function once(plan: ReturnType<typeof fakePlan>, slots: number, cap: number) {
  const started = performance.now();
  const outcomes = await runPlan(plan, noop, {
    signal: new AbortController().signal,
    clock: realClock,
    random: realRandom,
    onEvent: () => {},
    cap,
    abandon: fakeAbandon,
  });
  if (outcomes.length !== slots) throw new Error("runPlan lost slots");
  return performance.now() - started;
}

async function run({ quick }: BenchOptions): Promise<Figures> {
  const rows: string[][] = [];
  for (const slots of quick ? QUICK_SLOTS : FULL_SLOTS) {
    // One experiment, `slots` evals: the plan is built once, outside the measured calls.
    const plan = fakePlan({ evals: evalIds(slots), experiments: [{ id: "bench" }] });
    for (const cap of CAPS) {
      await once(plan, slots, cap); // warm-up
      const times: number[] = [];
      for (let i = 0; i < (quick ? QUICK_REPEATS : FULL_REPEATS); i++) {
        times.push(await once(plan, slots, cap));
      }
      const perSlot = (1000 * median(times) / slots).toFixed(1);
      rows.push([count(slots), String(cap), spread(times, 1), perSlot]);
    }
  }
  return {
    tables: [{
      title: `runPlan, one no-op Attempt per slot (one warm-up, then ${
        quick ? QUICK_REPEATS : FULL_REPEATS
      } runs)`,
      columns: ["slots", "concurrency", "ms per runPlan", "µs/slot (median)"],
      rows,
    }],
  };
}

/** The scheduler benchmark. */
export const benchmark: Benchmark = {
  name: "scheduler",
  title: "Scheduler: runPlan throughput in process",
  about: "The scheduler's `runPlan` over a fake plan with an Attempt function that settles at " +
    "once: the admission chain alone, without Record, reporters or agent.",
  run,
};
