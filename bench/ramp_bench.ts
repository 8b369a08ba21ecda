/**
 * The adaptive ramp's payoff, in one run (issue 15):
 *
 * 1. Throughput of `niceeval exp --json` against a local chat-completions server that admits at
 *    most 8 requests at once (429 + Retry-After beyond), 50 ms per request, 320 one-send
 *    Attempts: with `--ramp 2:32` and with fixed caps 2, 8 and 32. Throughput counts Attempts per
 *    second between the first `attempt_start` and the last `attempt_end` of the NDJSON stream
 *    (process start and planning excluded). Prints `ramp ÷ best fixed` (target ≥ 0.9), the 429
 *    share and the ramp's caps. Then 2000 Attempts, fixed 8 against the ramp in three rounds
 *    (the median ratio: one run on a shared machine varies by about ±10%).
 * 2. The makespan of the mixed suite of issue 15 §1 on fake time (G = 2; `capped`,
 *    `maxConcurrency: 1`, with the most rounds; `open` uncapped) divided by its lower bound
 *    max(work / G, the capped chain) (target ≤ 1.05).
 *
 * Each case measures once on its first call and prints its figures; later calls return at once.
 */
import { limitedServer } from "../tests/_fakes/limited_chat_server.ts";
import { ndjson, tempProject } from "../tests/_helpers/cli.ts";
import { createScheduler } from "../src/scheduler/mod.ts";
import { EventLog, fakeAbandon, FakeAttempts } from "../tests/_fakes/attempt.ts";
import { createFakeClock } from "../tests/_fakes/clock.ts";
import { evalIds, fakePlan } from "../tests/_fakes/plan.ts";
import { createSeededRandom } from "../tests/_fakes/random.ts";

const ATTEMPTS = 320;
/** The longer workload: 1 s windows are short against it, so the ramp's first windows weigh less. */
const LONG_ATTEMPTS = 2000;
const throughputs = new Map<string, number>();

/** A bench reports its figures on stdout. */
function report(line: string): void {
  // deno-lint-ignore no-console -- a bench reports its figures on stdout
  console.log(line);
}

interface Measured {
  readonly perSecond: number;
  readonly rejected: number;
  readonly requests: number;
  /** The caps of the run's `ramp` events, in order. */
  readonly caps: readonly number[];
}

/** Attempts per second of one CLI run of `attempts` Attempts against a fresh server. */
async function throughput(args: readonly string[], attempts: number): Promise<Measured> {
  await using server = limitedServer({ capacity: 8, latencyMs: 50 });
  await using p = await tempProject("ramp_openai_project");
  const r = await p.run(["exp", "--json", ...args], {
    env: {
      OPENAI_FIXTURE_BASE_URL: server.baseUrl,
      OPENAI_API_KEY: "sk-bench",
      RAMP_ATTEMPTS: String(attempts),
    },
  });
  if (r.code !== 0) throw new Error(`exp ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  const lines = ndjson(r.stdout);
  const first = Math.min(
    ...lines.filter((l) => l.type === "attempt_start").map((l) => Date.parse(l.at as string)),
  );
  const last = Math.max(
    ...lines.filter((l) => l.type === "attempt_end").map((l) => Date.parse(l.at as string)),
  );
  return {
    perSecond: attempts / ((last - first) / 1000),
    rejected: server.rejected(),
    requests: server.rejected() + server.admitted(),
    caps: lines.filter((l) => l.type === "ramp").map((l) => l.cap as number),
  };
}

const CASES: readonly [string, readonly string[]][] = [
  ["fixed 2", ["--max-concurrency", "2"]],
  ["fixed 8", ["--max-concurrency", "8"]],
  ["fixed 32", ["--max-concurrency", "32"]],
  ["ramp 2:32", ["--ramp", "2:32"]],
];

function describe(name: string, m: Measured): string {
  const share = (100 * m.rejected / m.requests).toFixed(1);
  const caps = m.caps.length > 0 ? ` · caps ${m.caps.join(" ")}` : "";
  return `${name}: ${
    m.perSecond.toFixed(1)
  } attempts/s · ${m.rejected} of ${m.requests} requests got 429 (${share}%)${caps}`;
}

for (const [name, args] of CASES) {
  let measured = false;
  Deno.bench({
    name: `exp against a server of capacity 8 · ${name}`,
    group: "ramp throughput",
    n: 1,
    warmup: 0,
    async fn() {
      if (measured) return;
      measured = true;
      const m = await throughput(args, ATTEMPTS);
      throughputs.set(name, m.perSecond);
      report(describe(name, m));
      if (name !== "ramp 2:32") return;
      const best = Math.max(
        ...[...throughputs].filter(([k]) => k.startsWith("fixed")).map(([, v]) => v),
      );
      report(`ramp ÷ best fixed = ${(m.perSecond / best).toFixed(2)} (target ≥ 0.9)`);
    },
  });
}

/** Rounds of the longer workload; each runs fixed 8 then the ramp, so load drifts hit both. */
const LONG_ROUNDS = 3;
let longMeasured = false;
Deno.bench({
  name: `exp against a server of capacity 8 · ${LONG_ATTEMPTS} Attempts, fixed 8 vs ramp 2:32`,
  group: "ramp throughput",
  n: 1,
  warmup: 0,
  async fn() {
    if (longMeasured) return;
    longMeasured = true;
    const ratios: number[] = [];
    for (let round = 1; round <= LONG_ROUNDS; round++) {
      // Fixed 8, the server's capacity, is the best fixed cap of the short workload.
      const fixed = await throughput(["--max-concurrency", "8"], LONG_ATTEMPTS);
      const ramped = await throughput(["--ramp", "2:32"], LONG_ATTEMPTS);
      ratios.push(ramped.perSecond / fixed.perSecond);
      report(describe(`round ${round} · fixed 8 × ${LONG_ATTEMPTS}`, fixed));
      report(describe(`round ${round} · ramp 2:32 × ${LONG_ATTEMPTS}`, ramped));
    }
    const median = [...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)]!;
    report(
      `${LONG_ATTEMPTS} Attempts: ramp ÷ fixed 8 per round ${
        ratios.map((r) => r.toFixed(2)).join(" ")
      }, median ${median.toFixed(2)} (target ≥ 0.9)`,
    );
  },
});

/** The §1 mixed suite on fake time: makespan ÷ lower bound. */
async function mixedSuiteRatio(): Promise<number> {
  const durations: Record<string, number> = { capped: 100, open: 70 };
  const plan = fakePlan({
    evals: evalIds(16),
    experiments: [
      { id: "open", evals: evalIds(12) },
      { id: "capped", maxConcurrency: 1 },
    ],
  });
  const clock = createFakeClock();
  const log = new EventLog(plan, { cap: 2 });
  const fake = new FakeAttempts({
    clock,
    script: (slot) => ({ durationMs: durations[slot.experimentId]! }),
  });
  const scheduler = createScheduler(plan, fake.run, {
    signal: new AbortController().signal,
    clock,
    random: createSeededRandom(1),
    onEvent: log.sink,
    cap: 2,
    abandon: fakeAbandon,
  });
  const t0 = clock.now();
  const done = scheduler.run();
  await clock.runAllAsync();
  await done;
  const ends = log.ofType("attempt_end");
  if (ends.length !== 28) throw new Error(`expected 28 Attempts, got ${ends.length}`);
  const makespan = Math.max(...ends.map((e) => e.at)) - t0;
  const work = 12 * durations.open! + 16 * durations.capped!;
  const lowerBound = Math.max(work / 2, 16 * durations.capped!);
  return makespan / lowerBound;
}

let mixedMeasured = false;
Deno.bench({
  name: "issue 15 §1 mixed suite at G = 2 (fake time)",
  group: "makespan",
  n: 1,
  warmup: 0,
  async fn() {
    if (mixedMeasured) return;
    mixedMeasured = true;
    const ratio = await mixedSuiteRatio();
    report(`mixed suite makespan ÷ lower bound = ${ratio.toFixed(3)} (target ≤ 1.05)`);
  },
});
