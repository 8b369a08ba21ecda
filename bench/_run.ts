/**
 * The benchmark driver, `deno task bench`:
 *
 *     deno task bench                   every benchmark; writes docs/benchmarks.md
 *     deno task bench --quick           a tiny configuration of every benchmark; prints the
 *                                       report on stdout and writes nothing
 *     deno task bench --only a,b        only the named benchmarks (`<area>` of the file name)
 *     deno task bench --out <file>      write the report there instead
 *
 * Each benchmark runs in a process of its own (this file with `--child`), so one benchmark's
 * memory, temporary files and cleanup never weigh on the next. The driver exits 1 when any
 * benchmark failed; a benchmark that cannot run here (no Docker daemon, no browser) reports one
 * line and counts as run.
 */
import { parseArgs } from "node:util";
import { join } from "node:path";
import type { Figures } from "./_harness.ts";
import { type Outcome, renderReport, thisMachine } from "./_markdown.ts";
import { areaOf, BENCH_FILES, loadBenchmark } from "./_registry.ts";

const SELF = new URL(import.meta.url).pathname;
const DEFAULT_OUT = new URL("../docs/benchmarks.md", import.meta.url).pathname;

/** What a child writes to its result file. */
interface ChildResult {
  readonly figures?: Figures;
  readonly error?: string;
}

function say(line: string): void {
  // deno-lint-ignore no-console -- the driver reports its progress on stderr
  console.error(line);
}

/** `--child <file> --result <path>`: runs one benchmark and writes its result. */
async function child(file: string, resultPath: string, quick: boolean): Promise<void> {
  let result: ChildResult;
  try {
    const benchmark = await loadBenchmark(file);
    result = { figures: await benchmark.run({ quick }) };
  } catch (error) {
    result = { error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
  await Deno.writeTextFile(resultPath, JSON.stringify(result));
}

async function runOne(file: string, quick: boolean, scratch: string): Promise<Outcome> {
  const benchmark = await loadBenchmark(file);
  say(`bench ${benchmark.name}: ${benchmark.title}${quick ? " (quick)" : ""}`);
  const resultPath = join(scratch, `${benchmark.name}.json`);
  const started = performance.now();
  const status = await new Deno.Command(Deno.execPath(), {
    args: [
      ...["run", "-A", "--frozen", SELF, "--child", file, "--result", resultPath],
      ...(quick ? ["--quick"] : []),
    ],
    stdin: "null",
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  const durationMs = performance.now() - started;
  let result: ChildResult;
  try {
    result = JSON.parse(await Deno.readTextFile(resultPath)) as ChildResult;
  } catch {
    result = { error: `the benchmark process exited ${status.code} without a result` };
  }
  const { name, title, about } = benchmark;
  const outcome: Outcome = { benchmark: { name, title, about }, durationMs, ...result };
  const seconds = (durationMs / 1000).toFixed(1);
  if (result.error !== undefined) say(`bench ${name}: FAILED after ${seconds} s\n${result.error}`);
  else if (result.figures?.skipped) say(`bench ${name}: skipped: ${result.figures.skipped}`);
  else say(`bench ${name}: done in ${seconds} s`);
  return outcome;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      quick: { type: "boolean", default: false },
      only: { type: "string" },
      out: { type: "string" },
      child: { type: "string" },
      result: { type: "string" },
    },
  });
  if (values.child !== undefined) {
    await child(values.child, values.result ?? "", values.quick);
    return 0;
  }
  const only = values.only?.split(",").map((name) => name.trim());
  const unknown = only?.filter((name) => !BENCH_FILES.some((f) => areaOf(f) === name)) ?? [];
  if (unknown.length > 0) {
    say(`bench: unknown benchmark "${unknown[0]}"; known: ${BENCH_FILES.map(areaOf).join(", ")}`);
    return 2;
  }
  const files = BENCH_FILES.filter((f) => only === undefined || only.includes(areaOf(f)));
  const machine = thisMachine();
  const scratch = await Deno.makeTempDir({ prefix: "niceeval-bench-" });
  const outcomes: Outcome[] = [];
  try {
    for (const file of files) outcomes.push(await runOne(file, values.quick, scratch));
  } finally {
    await Deno.remove(scratch, { recursive: true });
  }
  const report = renderReport(machine, outcomes, values.quick);
  const out = values.out ?? (values.quick ? undefined : DEFAULT_OUT);
  if (out === undefined) await Deno.stdout.write(new TextEncoder().encode(report));
  else {
    await Deno.writeTextFile(out, report);
    // The report lives in the repository, whose format check covers Markdown.
    await new Deno.Command(Deno.execPath(), { args: ["fmt", "--quiet", out] }).output();
    say(`bench: wrote ${out}`);
  }
  const failed = outcomes.filter((o) => o.error !== undefined).map((o) => o.benchmark.name);
  if (failed.length > 0) say(`bench: ${failed.length} failed: ${failed.join(", ")}`);
  return failed.length > 0 ? 1 : 0;
}

Deno.exit(await main());
