/** `niceeval list` (CMD-5, CMD-6) and `niceeval exp list` (CMD-7, CMD-8). */
import type { DiscoveredEval, DiscoveredExperiment } from "../discovery/mod.ts";
import { select, selectExperiments } from "../plan/mod.ts";
import type { Io } from "./io.ts";
import { loadProject, printWarnings } from "./project.ts";

/** Lists discovered evals. */
export async function runList(
  io: Io,
  options: { prefixes: string[]; tags: string[]; json: boolean },
): Promise<number> {
  // Experiments are discovered too (authoring.md rule 1.2.5): `list` reports every bad file.
  const { discovered } = await loadProject(io, { experiments: true });
  if (!options.json) printWarnings(io, discovered.warnings);
  const evals = discovered.evals.filter((e) =>
    (options.prefixes.length === 0 || options.prefixes.some((p) => e.id.startsWith(p))) &&
    (options.tags.length === 0 || e.definition.tags.some((tag) => options.tags.includes(tag)))
  );
  if (options.json) {
    io.stdout.write(
      JSON.stringify({
        format: "niceeval.evals",
        schemaVersion: 1,
        evals: evals.map((e) => ({
          evalId: e.id,
          kind: e.definition.evaluationKind,
          description: e.definition.description ?? null,
          tags: e.definition.tags,
          groupId: e.groupId ?? null,
        })),
      }) + "\n",
    );
    return 0;
  }
  if (evals.length === 0) {
    io.stdout.write("Discovered 0 evals.\n");
    return 0;
  }
  io.stdout.write(`Discovered ${evals.length} ${evals.length === 1 ? "eval" : "evals"}:\n`);
  const width = Math.max(...evals.map((e) => e.id.length));
  for (const e of evals) io.stdout.write(evalLine(e, width));
  return 0;
}

function evalLine(e: DiscoveredEval, width: number): string {
  const description = e.definition.description;
  return description ? `  ${e.id.padEnd(width)}  — ${description}\n` : `  ${e.id}\n`;
}

/** Lists experiments as an aligned table, or as one JSON document (CMD-8). */
export async function runExpList(
  io: Io,
  options: { selector?: string; tags: string[]; json: boolean },
): Promise<number> {
  const { discovered } = await loadProject(io, { experiments: true });
  if (!options.json) printWarnings(io, discovered.warnings);
  const chosen = options.selector === undefined
    ? discovered.experiments
    : selectExperiments(discovered.experiments, options.selector);
  const rows = chosen.map((experiment) => expRow(experiment, discovered.evals, options.tags));
  if (options.json) {
    io.stdout.write(
      JSON.stringify({
        format: "niceeval.experiments",
        schemaVersion: 1,
        experiments: rows.map(({ experiment, evals, provider }) => {
          const d = experiment.definition;
          return {
            experimentId: experiment.id,
            description: d.description ?? null,
            agent: d.agent.name,
            model: d.model ?? null,
            provider,
            attempts: d.attempts,
            maxConcurrency: d.maxConcurrency ?? null,
            earlyExit: d.earlyExit,
            evalIds: evals.map((e) => e.id),
          };
        }),
      }) + "\n",
    );
    return 0;
  }
  io.stdout.write(expTable(rows));
  return 0;
}

/** `exp list` columns; ATTEMPTS and EVALS are numbers, padded left. */
const EXP_LIST_HEADER = ["EXPERIMENT", "AGENT", "MODEL", "PROVIDER", "ATTEMPTS", "EVALS"];
const EXP_LIST_NUMBERS: ReadonlySet<number> = new Set([4, 5]);

/**
 * The `exp list` table (issue 18.8): a header, then one row per experiment, columns aligned with
 * two spaces; the description comes last so a long one never widens the other columns.
 */
function expTable(rows: readonly ExpRow[]): string {
  if (rows.length === 0) return "no experiments found\n";
  const table = [[...EXP_LIST_HEADER, "DESCRIPTION"]];
  for (const { experiment, evals, provider } of rows) {
    const d = experiment.definition;
    const where = provider ?? (d.agent.kind === "direct" ? "direct" : "—");
    // A forged definition may lack any field: each cell is a string or `—`, never a crash.
    table.push(
      [
        experiment.id,
        d.agent.name,
        d.model,
        where,
        d.attempts,
        evals.length,
        d.description,
      ].map((cell) => cell === undefined || cell === null || cell === "" ? "—" : String(cell)),
    );
  }
  const widths = EXP_LIST_HEADER.map((_, c) => Math.max(...table.map((r) => r[c]!.length)));
  const line = (cells: readonly string[]) =>
    cells.map((cell, c) =>
      c === cells.length - 1
        ? cell
        : EXP_LIST_NUMBERS.has(c)
        ? cell.padStart(widths[c]!)
        : cell.padEnd(widths[c]!)
    ).join("  ").trimEnd();
  return table.map(line).join("\n") + "\n";
}

/** One row of `exp list`: the experiment, its evals after `--tag`, and its provider. */
interface ExpRow {
  readonly experiment: DiscoveredExperiment;
  readonly evals: readonly DiscoveredEval[];
  /** Provider name(s) of the templates in use, or null (direct agents, no template). */
  readonly provider: string | null;
}

function expRow(
  experiment: DiscoveredExperiment,
  all: readonly DiscoveredEval[],
  tags: readonly string[],
): ExpRow {
  let evals: readonly DiscoveredEval[] = [];
  try {
    evals = select([experiment], all, { evalPrefixes: [], tags }).experiments[0]?.evals ?? [];
  } catch (error) {
    // An experiment left without evals is listed with evals=0 (CMD-7).
    if ((error as { code?: string }).code !== "nothing-selected") throw error;
  }
  const d = experiment.definition;
  if (d.agent.kind === "direct") return { experiment, evals, provider: null };
  const layers = [d.sandbox, ...evals.flatMap((e) => [e.definition.sandbox, e.groupSandbox])];
  const names = new Set<string>();
  for (const layer of layers) {
    const provider = (layer as { provider?: unknown } | undefined)?.provider;
    if (typeof provider === "string") names.add(provider);
  }
  return { experiment, evals, provider: names.size > 0 ? [...names].join(",") : null };
}
