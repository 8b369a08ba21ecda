/** `niceeval list` (CMD-5, CMD-6) and `niceeval exp list` (CMD-7, CMD-8). */
import type { DiscoveredEval } from "../discovery/mod.ts";
import { select, selectExperiments } from "../plan/mod.ts";
import type { Io } from "./io.ts";
import { loadProject, printWarnings } from "./project.ts";

/** Lists discovered evals. */
export async function runList(
  io: Io,
  options: { prefixes: string[]; tags: string[]; json: boolean },
): Promise<number> {
  const { discovered } = await loadProject(io, { experiments: false });
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
  const rows = chosen.map((experiment) => {
    let evalIds: string[] = [];
    try {
      const selection = select([experiment], discovered.evals, {
        evalPrefixes: [],
        tags: options.tags,
      });
      evalIds = selection.experiments[0]?.evals.map((e) => e.id) ?? [];
    } catch (error) {
      if ((error as { code?: string }).code !== "nothing-selected") throw error;
    }
    return { experiment, evalIds };
  });
  if (options.json) {
    io.stdout.write(
      JSON.stringify({
        format: "niceeval.experiments",
        schemaVersion: 1,
        experiments: rows.map(({ experiment, evalIds }) => {
          const d = experiment.definition;
          return {
            experimentId: experiment.id,
            description: d.description ?? null,
            agent: d.agent.name,
            model: d.model ?? null,
            provider: null,
            attempts: d.attempts,
            maxConcurrency: d.maxConcurrency ?? null,
            earlyExit: d.earlyExit,
            evalIds,
          };
        }),
      }) + "\n",
    );
    return 0;
  }
  for (const { experiment, evalIds } of rows) {
    const d = experiment.definition;
    io.stdout.write(
      [
        experiment.id,
        d.description ?? "—",
        d.agent.name,
        d.model ?? "—",
        "direct",
        `attempts=${d.attempts}`,
        `evals=${evalIds.length}`,
      ].join("\t") + "\n",
    );
  }
  return 0;
}
