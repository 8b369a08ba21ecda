/**
 * The runner's own overhead: `niceeval exp --json --max-concurrency C` as a subprocess for N no-op
 * Attempts (one `scriptedAgent` turn and one check each), issue 20.
 */
import { join } from "node:path";
import { tempProject } from "../tests/_helpers/cli.ts";
import { expectSuccess, runCli } from "./_child.ts";
import {
  type Benchmark,
  type BenchOptions,
  count,
  type Figures,
  megabytes,
  progress,
  seconds,
} from "./_harness.ts";
import { noopProjectFiles, removeAtUnload } from "./_noop_project.ts";
import { LAUNCHER_V8_FLAGS } from "../src/_shared/heap_flags.ts";

const FULL_SIZES = [200, 10_000, 100_000];
const QUICK_SIZES = [20];
const FULL_CAPS = [1, 10, 100];
const QUICK_CAPS = [1, 10];
/** How often the sampled run collects and measures the live heap. */
const HEAP_SAMPLE_MS = 1_000;

/** Total size in bytes of the files below `dir`, recursively. */
export async function treeBytes(dir: string): Promise<number> {
  let bytes = 0;
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) bytes += await treeBytes(path);
    else if (entry.isFile) bytes += (await Deno.stat(path)).size;
  }
  return bytes;
}

/** `NICEEVAL_BENCH_OVERHEAD_N=200,10000` replaces the full sizes. */
function sizes(quick: boolean): number[] {
  if (quick) return QUICK_SIZES;
  const env = Deno.env.get("NICEEVAL_BENCH_OVERHEAD_N");
  return env ? env.split(",").map(Number) : FULL_SIZES;
}

function mib(bytes: number | null): string {
  return bytes === null ? "n/a" : (bytes / 1024 / 1024).toFixed(1);
}

/** One run of `n` no-op Attempts at `cap` in a fresh project; returns its figures and Record. */
async function exp(
  n: number,
  cap: number,
  extra: { heapSampleMs?: number; v8Flags?: string } = {},
) {
  // Projects and Records stay until the process ends: on some file systems creating files is
  // slower for minutes after many files were deleted, and the next case would pay for it.
  const project = await tempProject(null);
  removeAtUnload(project.dir, project.stateDir);
  for (const [path, text] of Object.entries(noopProjectFiles(n))) await project.write(path, text);
  const record = join(project.dir, "bench-record");
  const args = ["exp", "--json", "--max-concurrency", String(cap), "--record", record];
  const m = await runCli(project, args, extra);
  expectSuccess(m, `niceeval exp (N=${n}, C=${cap})`);
  return { m, record };
}

async function measure(n: number, cap: number): Promise<string[]> {
  const { m, record } = await exp(n, cap);
  const recordBytes = await treeBytes(record);
  progress(`overhead N=${count(n)} C=${cap}: ${seconds(m.wallMs)} s`);
  return [
    count(n),
    String(cap),
    seconds(m.wallMs),
    (m.wallMs / n).toFixed(3),
    m.cpuMs === null ? "n/a" : seconds(m.cpuMs),
    megabytes(m.peakKiB),
    mib(m.liveHeapBytes),
    count(Math.round(recordBytes / n)),
  ];
}

/** A separate run that collects every {@link HEAP_SAMPLE_MS}: it would distort the peak RSS. */
async function sampled(n: number, cap: number): Promise<string[]> {
  const { m } = await exp(n, cap, { heapSampleMs: HEAP_SAMPLE_MS });
  progress(`overhead N=${count(n)} C=${cap}, heap sampled: ${seconds(m.wallMs)} s`);
  return [count(n), String(cap), mib(m.maxLiveHeapBytes), mib(m.liveHeapBytes), seconds(m.wallMs)];
}

/** The same run with the V8 heap settings the npm launcher and the compiled binary pass. */
async function launched(n: number, cap: number): Promise<string[]> {
  const { m } = await exp(n, cap, { v8Flags: LAUNCHER_V8_FLAGS });
  progress(`overhead N=${count(n)} C=${cap}, launcher heap settings: ${seconds(m.wallMs)} s`);
  return [
    count(n),
    String(cap),
    seconds(m.wallMs),
    m.cpuMs === null ? "n/a" : seconds(m.cpuMs),
    megabytes(m.peakKiB),
  ];
}

async function run({ quick }: BenchOptions): Promise<Figures> {
  const rows: string[][] = [];
  const heapRows: string[][] = [];
  const launcherRows: string[][] = [];
  const caps = quick ? QUICK_CAPS : FULL_CAPS;
  for (const n of sizes(quick)) {
    for (const cap of caps) rows.push(await measure(n, cap));
    heapRows.push(await sampled(n, caps.at(-1)!));
    launcherRows.push(await launched(n, caps.at(-1)!));
  }
  return {
    tables: [{
      title: "niceeval exp --json, N no-op Attempts at concurrency C (plain `deno run`)",
      columns: [
        "N",
        "C",
        "wall s",
        "ms/Attempt",
        "CPU s",
        "peak RSS MB",
        "live heap at exit MB",
        "Record bytes/Attempt",
      ],
      rows,
    }, {
      title: `Live heap while running: a separate run that collects every ${HEAP_SAMPLE_MS} ms`,
      columns: ["N", "C", "max live heap MB", "live heap at exit MB", "wall s"],
      rows: heapRows,
    }, {
      title: `Through the launchers: the same run with \`--v8-flags=${LAUNCHER_V8_FLAGS}\``,
      columns: ["N", "C", "wall s", "CPU s", "peak RSS MB"],
      rows: launcherRows,
    }],
    notes: [
      "Targets (issue 20): 10,000 at C=100 peak RSS ≤ 220 MB under plain `deno run` " +
      "(≤ 160 MB through the launchers); 100,000 peak RSS ≤ 300 MB and live heap at the end " +
      "≤ 40 MB.",
      "Wall time includes process start and discovery. CPU time is the CLI process's user + " +
      "system time; peak RSS its own maximum resident set; the live heap is V8's heap in use " +
      "after a full collection when the process ends (a preloaded probe, `bench/_probe.ts`): " +
      "what module-level state keeps, not what the run held. The run's own live heap is the " +
      "largest sample of the second table (its periodic collections would lower the peak RSS, " +
      "so it is a run of its own). A live heap measured by the CLI itself at the end of the " +
      "run (after the writer closed, before the report is dropped) needs a hook in `src/`.",
    ],
  };
}

/** The overhead benchmark. */
export const benchmark: Benchmark = {
  name: "overhead",
  title: "Overhead: no-op Attempts",
  about: "One fresh generated project per case: one experiment (a scripted agent) and one eval " +
    "file of N no-op evals, run once with `niceeval exp --json --max-concurrency C --record " +
    "<dir>`. Record bytes per Attempt: every file under the Record root divided by N.",
  run,
};
