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

/** Lists experiments, tab-separated or as JSON. */
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
  for (const { experiment, evals, provider } of rows) {
    const d = experiment.definition;
    const where = provider ?? (d.agent.kind === "direct" ? "direct" : "—");
    const fields = [experiment.id, d.description ?? "—", d.agent.name, d.model ?? "—", where];
    io.stdout.write(
      [...fields, `attempts=${d.attempts}`, `evals=${evals.length}`].join("\t") + "\n",
    );
  }
  return 0;
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
