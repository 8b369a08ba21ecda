/**
 * The shape every benchmark module has, and the small helpers they share. A benchmark module
 * (`bench/<area>_bench.ts`) exports `benchmark`; `bench/_run.ts` runs it in a process of its own
 * and writes what it returns into `docs/benchmarks.md`. Benchmarks report figures; they never
 * assert timings.
 */

/** How a benchmark runs. */
export interface BenchOptions {
  /**
   * A tiny configuration (small N, few repeats) that only proves the benchmark still works; its
   * figures mean nothing.
   */
  readonly quick: boolean;
}

/** One table of figures. */
export interface Table {
  readonly title: string;
  readonly columns: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

/** What one benchmark measured. */
export interface Figures {
  readonly tables: readonly Table[];
  /** Lines printed under the tables: targets, ratios, caveats. */
  readonly notes?: readonly string[];
  /** Set when the benchmark could not run here (no daemon, no browser): one line why. */
  readonly skipped?: string;
}

/** A benchmark module's export. */
export interface Benchmark {
  /** Short name, the module's `<area>`: `bench/_run.ts --only <name>`. */
  readonly name: string;
  readonly title: string;
  /** What it measures and how, in a few sentences. */
  readonly about: string;
  run(options: BenchOptions): Promise<Figures>;
}

/** Prints one progress line on stderr (stdout of the driver carries the quick report). */
export function progress(line: string): void {
  // deno-lint-ignore no-console -- a bench reports its progress
  console.error(`  ${line}`);
}

/** The median of `values` (the lower middle for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? NaN;
}

/** `median (min–max)` of `values`, each with `digits` decimals; the median alone for one value. */
export function spread(values: readonly number[], digits = 0): string {
  const sorted = [...values].sort((a, b) => a - b);
  const f = (v: number) => v.toFixed(digits);
  if (sorted.length === 0) return "n/a";
  if (sorted.length === 1) return f(sorted[0]!);
  return `${f(median(sorted))} (${f(sorted[0]!)}–${f(sorted.at(-1)!)})`;
}

/** `n` with thousands separators: 10,000. */
export function count(n: number): string {
  return n.toLocaleString("en-US");
}

/** Milliseconds as seconds with two decimals. */
export function seconds(ms: number): string {
  return (ms / 1000).toFixed(2);
}

/** KiB as MB (MiB), whole. */
export function megabytes(kib: number): string {
  return (kib / 1024).toFixed(0);
}
