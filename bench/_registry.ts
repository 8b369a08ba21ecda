/**
 * Every benchmark of the suite, in the order `bench/_run.ts` runs them. A new
 * `bench/<area>_bench.ts` is listed here (tests/toolchain/bench_registry_test.ts checks it).
 */
import type { Benchmark } from "./_harness.ts";

/** The benchmark modules, file names relative to `bench/`. */
export const BENCH_FILES: readonly string[] = [
  "start_bench.ts",
  "planning_bench.ts",
  "overhead_bench.ts",
  "scheduler_bench.ts",
  "utilization_bench.ts",
  "carry_bench.ts",
  "record_bench.ts",
  "ramp_bench.ts",
  "view_bench.ts",
  "docker_bench.ts",
];

/** Imports one benchmark module and returns its `benchmark` export. */
export async function loadBenchmark(file: string): Promise<Benchmark> {
  const module = await import(new URL(`./${file}`, import.meta.url).href);
  const benchmark = module.benchmark as Benchmark | undefined;
  if (typeof benchmark?.run !== "function") {
    throw new TypeError(`bench/${file} does not export a benchmark`);
  }
  return benchmark;
}

/** The `<area>` of `<area>_bench.ts`. */
export function areaOf(file: string): string {
  return file.replace(/_bench\.ts$/, "");
}
