/** Renders the suite's figures as the Markdown of `docs/benchmarks.md`. */
import type { Benchmark, Figures, Table } from "./_harness.ts";

/** Where and when the figures were taken. */
export interface Machine {
  readonly date: string;
  readonly cpus: number;
  readonly loadAverage: readonly number[];
  readonly deno: string;
  readonly v8: string;
  readonly os: string;
}

/** One benchmark's outcome as the driver saw it. */
export interface Outcome {
  readonly benchmark: Pick<Benchmark, "name" | "title" | "about">;
  readonly durationMs: number;
  readonly figures?: Figures;
  readonly error?: string;
}

/** The machine the driver runs on. */
export function thisMachine(): Machine {
  return {
    date: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
    cpus: navigator.hardwareConcurrency,
    loadAverage: Deno.loadavg(),
    deno: Deno.version.deno,
    v8: Deno.version.v8,
    os: `${Deno.build.os} ${Deno.build.arch} (kernel ${Deno.osRelease()})`,
  };
}

function cell(text: string): string {
  return text.replaceAll("|", "\\|");
}

function table(t: Table): string[] {
  return [
    `**${t.title}**`,
    "",
    `| ${t.columns.map(cell).join(" | ")} |`,
    `|${t.columns.map(() => "---").join("|")}|`,
    ...t.rows.map((row) => `| ${row.map(cell).join(" | ")} |`),
    "",
  ];
}

function section(outcome: Outcome): string[] {
  const { benchmark, figures, error } = outcome;
  const lines = [
    `## ${benchmark.title}`,
    "",
    `\`${benchmark.name}\` · took ${(outcome.durationMs / 1000).toFixed(1)} s. ${benchmark.about}`,
    "",
  ];
  if (error !== undefined) return [...lines, `**Failed:** ${error}`, ""];
  if (figures?.skipped !== undefined) return [...lines, `Skipped: ${figures.skipped}`, ""];
  for (const t of figures?.tables ?? []) lines.push(...table(t));
  for (const note of figures?.notes ?? []) lines.push(`- ${note}`);
  if ((figures?.notes ?? []).length > 0) lines.push("");
  return lines;
}

/** The whole report. */
export function renderReport(
  machine: Machine,
  outcomes: readonly Outcome[],
  quick: boolean,
): string {
  const load = machine.loadAverage.map((l) => l.toFixed(2)).join(" / ");
  const lines = [
    "# Benchmarks",
    "",
    "Written by `deno task bench` (`bench/_run.ts`); rerun it to refresh every figure. Each " +
    "benchmark runs in a process of its own, one after the other. Figures with several runs read " +
    "median (min–max). Benchmarks report; they assert no timing.",
    "",
    "How: a benchmark is a module `bench/<area>_bench.ts` exporting `benchmark`, listed in " +
    "`bench/_registry.ts`. `deno task bench --quick` runs every one in a tiny configuration, " +
    "prints this report and writes nothing; CI runs it after the test suite, so a benchmark that " +
    "no longer runs fails CI. `--only <area>,…` runs some; `--out <file>` writes elsewhere. CLI " +
    "figures come from outside the CLI: wall time from spawn to exit, and a module preloaded " +
    "into the child (`bench/_probe.ts`) that reports the process's CPU time, peak RSS and live " +
    "heap after a full collection when it exits. The Docker and browser parts report one skip " +
    "line where no daemon or browser is available.",
    "",
    quick
      ? "**Quick mode: a tiny configuration that proves the benchmarks run. These figures mean " +
        "nothing.**\n"
      : "",
    `- Date: ${machine.date}`,
    `- CPUs: ${machine.cpus}`,
    `- Load average at the start (1 / 5 / 15 min): ${load}`,
    `- Deno ${machine.deno} (V8 ${machine.v8}), ${machine.os}`,
    `- Total: ${(outcomes.reduce((s, o) => s + o.durationMs, 0) / 1000).toFixed(0)} s`,
    "",
  ];
  for (const outcome of outcomes) lines.push(...section(outcome));
  return lines.join("\n").replace(/\n{3,}/g, "\n\n").trimEnd() + "\n";
}
