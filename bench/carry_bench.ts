/**
 * Planning a fully carried rerun (issue 4: under 1 s for 1,000 Attempts; issue 20). Two cases:
 *
 * - in process: a Record with one published Run of N passed Attempts, written through the real
 *   `RecordWriter` in a temp dir; measures `loadCandidates` + `carryDecider` over the N slots (a
 *   fresh `RecordReader` each time, so every file is read and validated);
 * - CLI: a generated N-eval project run once with `niceeval exp --json` (the Record it writes is
 *   the source), then `niceeval exp --dry --json` as a subprocess, wall time including process
 *   start, CPU time and peak RSS. The dry run must report every slot reused.
 */
import {
  carryDecider,
  type CurrentIdentity,
  loadCandidates,
  RecordReader,
} from "../src/record/mod.ts";
import { CONFIG_A, digestFor, INPUT_1, uuidOf, writeRun } from "../tests/_fakes/record.ts";
import { result } from "../tests/_fakes/results.ts";
import { tempProject } from "../tests/_helpers/cli.ts";
import { expectSuccess, runCli } from "./_child.ts";
import {
  type Benchmark,
  type BenchOptions,
  count,
  type Figures,
  median,
  megabytes,
  spread,
} from "./_harness.ts";
import { noopProjectFiles } from "./_noop_project.ts";

const FULL_N = 1_000;
const QUICK_N = 20;
const FULL_REPEATS = 3;
const T0 = Date.UTC(2026, 10, 29, 10, 0, 0);

/** Milliseconds of `loadCandidates` + `carryDecider` over N carried slots, once per repeat. */
async function inProcess(N: number, repeats: number): Promise<number[]> {
  const root = await Deno.makeTempDir({ prefix: "niceeval-carry-bench-" });
  try {
    const evalIds = Array.from({ length: N }, (_, i) => `noop/${i}`);
    const written = await writeRun(root, {
      runId: uuidOf("run-source"),
      experimentId: "exp",
      startedAt: T0,
      slots: evalIds.map((evalId, i) => ({
        evalId,
        ordinal: 0,
        fill: { kind: "executed", result: result({ attemptId: uuidOf(`attempt-${i}`), evalId }) },
      })),
    });
    if (written.length !== 1) throw new Error("the source Run was not published");
    const current: CurrentIdentity = {
      configHash: () => CONFIG_A,
      inputFingerprint: () => INPUT_1,
      digest: () => digestFor(CONFIG_A, INPUT_1),
    };
    const times: number[] = [];
    for (let i = 0; i < repeats; i++) {
      const started = performance.now();
      const candidates = await loadCandidates(
        new RecordReader(root),
        evalIds.map((evalId) => ({ experimentId: "exp", evalId })),
      );
      const decide = carryDecider(candidates, current, "none");
      let carried = 0;
      for (const evalId of evalIds) {
        const decision = decide({ experimentId: "exp", evalId, ordinal: 0, timeoutMs: null });
        if (decision.action === "carry") carried++;
      }
      times.push(performance.now() - started);
      if (carried !== N) throw new Error(`only ${carried} of ${N} slots carried`);
    }
    return times;
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

/** `niceeval exp --dry --json` after a full run: wall s, CPU s and peak RSS KiB per repeat. */
async function cli(N: number, repeats: number) {
  await using project = await tempProject(null);
  for (const [path, text] of Object.entries(noopProjectFiles(N))) await project.write(path, text);
  const first = await project.run(["exp", "--json", "--max-concurrency", "100"]);
  if (first.code !== 0) throw new Error(`niceeval exp exited ${first.code}: ${first.stderr}`);
  const wall: number[] = [];
  const cpu: number[] = [];
  const peak: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const m = await runCli(project, ["exp", "--dry", "--json"], { keepStdout: true });
    expectSuccess(m, "niceeval exp --dry");
    const dry = JSON.parse(m.stdout);
    if (dry.reused !== N) throw new Error(`exp --dry reused ${dry.reused} of ${N} slots`);
    wall.push(m.wallMs / 1000);
    if (m.cpuMs !== null) cpu.push(m.cpuMs / 1000);
    peak.push(m.peakKiB);
  }
  return { wall, cpu, peak };
}

async function run({ quick }: BenchOptions): Promise<Figures> {
  const n = quick ? QUICK_N : Number(Deno.env.get("NICEEVAL_BENCH_CARRY_N") ?? FULL_N);
  const repeats = quick ? 1 : FULL_REPEATS;
  const inside = await inProcess(n, repeats);
  const outside = await cli(n, repeats);
  return {
    tables: [{
      title: `A fully carried rerun of ${count(n)} Attempts (${repeats} runs each)`,
      columns: ["case", "wall", "CPU s", "peak RSS MB"],
      rows: [
        [
          "in process: loadCandidates + carryDecider",
          `${spread(inside)} ms · ${(median(inside) / n).toFixed(3)} ms/slot`,
          "",
          "",
        ],
        [
          "`niceeval exp --dry --json`, every slot reused",
          `${spread(outside.wall, 2)} s`,
          spread(outside.cpu, 2),
          megabytes(median(outside.peak)),
        ],
      ],
    }],
    notes: ["Target (issue 4): under 1 s for 1,000 Attempts."],
  };
}

/** The carry benchmark. */
export const benchmark: Benchmark = {
  name: "carry",
  title: "Carry: planning a fully carried rerun",
  about: "A Record holding one published Run of N passed Attempts; the in-process case reads " +
    "and decides every slot with a fresh reader, the CLI case runs `niceeval exp --dry --json` " +
    "in a generated N-eval project after one full run (`NICEEVAL_BENCH_CARRY_N` changes N).",
  run,
};
