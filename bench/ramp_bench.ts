/**
 * The adaptive ramp's payoff (issue 15): throughput of `niceeval exp --json` against a local
 * chat-completions server that admits at most 8 requests at once (429 + Retry-After beyond),
 * 50 ms per request, 320 one-send Attempts: with `--ramp 2:32` and with fixed caps 2, 8 and 32.
 * Throughput counts Attempts per second between the first `attempt_start` and the last
 * `attempt_end` of the NDJSON stream (process start and planning excluded). Reports `ramp ÷ best
 * fixed` (target ≥ 0.9), the 429 share and the ramp's caps. Then 2000 Attempts, fixed 8 against
 * the ramp in three rounds (the median ratio: one run on a shared machine varies by about ±10%).
 * The mixed-suite makespan of issue 15 §1 is in the `utilization` benchmark. Quick mode: 16
 * Attempts, fixed 8 and the ramp, no long rounds.
 */
import { limitedServer } from "../tests/_fakes/limited_chat_server.ts";
import { ndjson, tempProject } from "../tests/_helpers/cli.ts";
import { type Benchmark, type BenchOptions, type Figures, median, progress } from "./_harness.ts";

const ATTEMPTS = 320;
const QUICK_ATTEMPTS = 16;
/** The longer workload: 1 s windows are short against it, so the ramp's first windows weigh less. */
const LONG_ATTEMPTS = 2000;

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

const QUICK_CASES = CASES.filter(([name]) => name === "fixed 8" || name === "ramp 2:32");

/** One table row of a measured run. */
function row(name: string, m: Measured): string[] {
  const share = (100 * m.rejected / m.requests).toFixed(1);
  return [
    name,
    m.perSecond.toFixed(1),
    `${m.rejected} of ${m.requests} (${share}%)`,
    m.caps.length > 0 ? m.caps.join(" ") : "",
  ];
}

/** Rounds of the longer workload; each runs fixed 8 then the ramp, so load drifts hit both. */
const LONG_ROUNDS = 3;

async function run({ quick }: BenchOptions): Promise<Figures> {
  const attempts = quick ? QUICK_ATTEMPTS : ATTEMPTS;
  const rows: string[][] = [];
  const throughputs = new Map<string, number>();
  for (const [name, args] of quick ? QUICK_CASES : CASES) {
    const m = await throughput(args, attempts);
    throughputs.set(name, m.perSecond);
    rows.push(row(name, m));
    progress(`ramp ${name}: ${m.perSecond.toFixed(1)} attempts/s`);
  }
  const best = Math.max(
    ...[...throughputs].filter(([k]) => k.startsWith("fixed")).map(([, v]) => v),
  );
  const notes = [
    `ramp ÷ best fixed = ${(throughputs.get("ramp 2:32")! / best).toFixed(2)} (target ≥ 0.9)`,
  ];
  const longRows: string[][] = [];
  const ratios: number[] = [];
  for (let round = 1; round <= (quick ? 0 : LONG_ROUNDS); round++) {
    // Fixed 8, the server's capacity, is the best fixed cap of the short workload.
    const fixed = await throughput(["--max-concurrency", "8"], LONG_ATTEMPTS);
    const ramped = await throughput(["--ramp", "2:32"], LONG_ATTEMPTS);
    ratios.push(ramped.perSecond / fixed.perSecond);
    longRows.push(
      row(`round ${round} · fixed 8`, fixed),
      row(`round ${round} · ramp 2:32`, ramped),
    );
    progress(`ramp round ${round}: ramp ÷ fixed 8 = ${ratios.at(-1)!.toFixed(2)}`);
  }
  if (ratios.length > 0) {
    notes.push(
      `${LONG_ATTEMPTS} Attempts: ramp ÷ fixed 8 per round ${
        ratios.map((r) => r.toFixed(2)).join(" ")
      }, median ${median(ratios).toFixed(2)} (target ≥ 0.9)`,
    );
  }
  const columns = ["case", "Attempts/s", "requests that got 429", "ramp caps"];
  return {
    tables: [
      { title: `${attempts} Attempts against a server of capacity 8`, columns, rows },
      ...(longRows.length > 0
        ? [{
          title: `${LONG_ATTEMPTS} Attempts, fixed 8 against the ramp`,
          columns,
          rows: longRows,
        }]
        : []),
    ],
    notes,
  };
}

/** The ramp benchmark. */
export const benchmark: Benchmark = {
  name: "ramp",
  title: "Ramp: throughput against a rate-limited server",
  about: "`niceeval exp --json` against a local chat-completions server admitting 8 requests at " +
    "once (429 + Retry-After beyond, 50 ms per request), one send per Attempt; Attempts per " +
    "second between the first `attempt_start` and the last `attempt_end`.",
  run,
};
