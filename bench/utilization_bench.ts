/**
 * Scheduler utilization on mixed suites (issues 15 and 20): the makespan of a suite on fake time
 * divided by its lower bound max(work ÷ G, each capped experiment's chain, the longest Attempt).
 * Target ≤ 1.05 on every suite. Fake time: the figures do not depend on the machine.
 */
import { createScheduler } from "../src/scheduler/mod.ts";
import { EventLog, fakeAbandon, FakeAttempts } from "../tests/_fakes/attempt.ts";
import { createFakeClock } from "../tests/_fakes/clock.ts";
import { evalIds, fakePlan } from "../tests/_fakes/plan.ts";
import { createSeededRandom } from "../tests/_fakes/random.ts";
import type { Benchmark, BenchOptions, Figures } from "./_harness.ts";

/** One experiment of a suite: `count` evals of `durationMs` each. */
interface SuiteExperiment {
  readonly id: string;
  readonly count: number;
  readonly durationMs: number;
  readonly maxConcurrency?: number;
}

interface Suite {
  readonly name: string;
  /** The global cap. */
  readonly cap: number;
  readonly experiments: readonly SuiteExperiment[];
}

const SUITES: readonly Suite[] = [
  {
    name: "issue 15 §1: capped chain (max 1, most rounds) + open",
    cap: 2,
    experiments: [
      { id: "open", count: 12, durationMs: 70 },
      { id: "capped", count: 16, durationMs: 100, maxConcurrency: 1 },
    ],
  },
  {
    name: "two capped experiments (max 1, max 2) + open",
    cap: 4,
    experiments: [
      { id: "open", count: 40, durationMs: 50 },
      { id: "capped-a", count: 12, durationMs: 50, maxConcurrency: 1 },
      { id: "capped-b", count: 20, durationMs: 50, maxConcurrency: 2 },
    ],
  },
  {
    name: "capped chain with the most rounds among many open Attempts",
    cap: 8,
    experiments: [
      { id: "open", count: 200, durationMs: 20 },
      { id: "chain", count: 30, durationMs: 20, maxConcurrency: 1 },
    ],
  },
  {
    name: "work-bound: three open experiments of different lengths",
    cap: 4,
    experiments: [
      { id: "short", count: 60, durationMs: 10 },
      { id: "medium", count: 30, durationMs: 40 },
      { id: "long", count: 8, durationMs: 200 },
    ],
  },
  {
    name: "a capped chain of fewer but longer Attempts",
    cap: 8,
    experiments: [
      { id: "open", count: 200, durationMs: 10 },
      { id: "chain", count: 20, durationMs: 50, maxConcurrency: 1 },
    ],
  },
  {
    name: "capped experiments whose caps fill G, beside a long open one",
    cap: 4,
    experiments: [
      { id: "open", count: 24, durationMs: 100 },
      { id: "capped-a", count: 6, durationMs: 60, maxConcurrency: 2 },
      { id: "capped-b", count: 8, durationMs: 40, maxConcurrency: 2 },
    ],
  },
];

function lowerBound(suite: Suite): number {
  const work = suite.experiments.reduce((sum, e) => sum + e.count * e.durationMs, 0);
  const chains = suite.experiments.map((e) =>
    Math.ceil(e.count / Math.min(e.maxConcurrency ?? suite.cap, suite.cap)) * e.durationMs
  );
  return Math.max(work / suite.cap, ...chains);
}

async function makespan(suite: Suite): Promise<number> {
  const durations = new Map(suite.experiments.map((e) => [e.id, e.durationMs]));
  const ids = evalIds(Math.max(...suite.experiments.map((e) => e.count)));
  const plan = fakePlan({
    evals: ids,
    experiments: suite.experiments.map((e) => ({
      id: e.id,
      evals: ids.slice(0, e.count),
      ...(e.maxConcurrency === undefined ? {} : { maxConcurrency: e.maxConcurrency }),
    })),
  });
  const clock = createFakeClock();
  const log = new EventLog(plan, { cap: suite.cap });
  const fake = new FakeAttempts({
    clock,
    script: (slot) => ({ durationMs: durations.get(slot.experimentId)! }),
  });
  const scheduler = createScheduler(plan, fake.run, {
    signal: new AbortController().signal,
    clock,
    random: createSeededRandom(1),
    onEvent: log.sink,
    cap: suite.cap,
    abandon: fakeAbandon,
  });
  const t0 = clock.now();
  const done = scheduler.run();
  await clock.runAllAsync();
  await done;
  const ends = log.ofType("attempt_end");
  const expected = suite.experiments.reduce((sum, e) => sum + e.count, 0);
  if (ends.length !== expected) {
    throw new Error(`${suite.name}: expected ${expected} Attempts, got ${ends.length}`);
  }
  return Math.max(...ends.map((e) => e.at)) - t0;
}

async function run(_options: BenchOptions): Promise<Figures> {
  const rows: string[][] = [];
  for (const suite of SUITES) {
    const span = await makespan(suite);
    const bound = lowerBound(suite);
    const shape = suite.experiments.map((e) =>
      `${e.id} ${e.count}×${e.durationMs} ms${
        e.maxConcurrency === undefined ? "" : ` (max ${e.maxConcurrency})`
      }`
    ).join(", ");
    rows.push([suite.name, String(suite.cap), shape, String(span), String(bound)].concat(
      (span / bound).toFixed(3),
    ));
  }
  return {
    tables: [{
      title: "Makespan on fake time, ms",
      columns: ["suite", "G", "experiments", "makespan", "lower bound", "ratio"],
      rows,
    }],
    notes: [
      "Target (issues 15 and 20): ratio ≤ 1.05 on every mixed suite. Experiments capped below " +
      "G go first, then rounds decide (docs/priority.md).",
    ],
  };
}

/** The utilization benchmark. */
export const benchmark: Benchmark = {
  name: "utilization",
  title: "Utilization: mixed suites, makespan ÷ lower bound",
  about: "The real scheduler with fake Attempts of fixed durations on fake time (seeded random), " +
    "global cap G. Lower bound: max(total work ÷ G, for each experiment ⌈Attempts ÷ its cap⌉ × " +
    "its duration). The quick mode runs the same suites (they take milliseconds).",
  run,
};
