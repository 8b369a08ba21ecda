/** Experiment discovery and IDs (authoring.md §1.5). */
import { API_FORMAT_VERSION, describe, readBrand } from "../_shared/mod.ts";
import type { ModuleLoader } from "./evals.ts";
import type { ExperimentDefinition } from "./experiment.ts";
import { remakeExperiment } from "./_revalidate.ts";
import { type DiscoveryIssue, importIssue, unreadableExport } from "./issues.ts";
import type { WalkedFile } from "./walk.ts";

/** One discovered experiment. */
export interface DiscoveredExperiment {
  readonly id: string;
  /** Position in discovery (= selection) order, from 0. */
  readonly index: number;
  readonly file: string;
  readonly definition: ExperimentDefinition;
}

/** The experiment ID of a file under `experiments/`, or undefined when it is not a candidate. */
export function experimentIdOf(relative: string): string | undefined {
  if (!relative.endsWith(".ts") || relative.endsWith(".d.ts")) return undefined;
  let id = relative.slice("experiments/".length, -".ts".length);
  if (id.endsWith(".experiment")) id = id.slice(0, -".experiment".length);
  return id;
}

/** Imports every candidate file; files without a default export are helpers and ignored. */
export async function discoverExperiments(
  files: readonly WalkedFile[],
  load: ModuleLoader,
  issues: DiscoveryIssue[],
): Promise<DiscoveredExperiment[]> {
  const found: { id: string; file: string; definition: ExperimentDefinition }[] = [];
  for (const file of files) {
    const id = experimentIdOf(file.relative);
    if (id === undefined) continue;
    let mod: Record<string, unknown>;
    try {
      mod = await load(file.path);
    } catch (error) {
      issues.push(importIssue(file, error));
      continue;
    }
    if (!("default" in mod)) continue;
    let problem: string | undefined;
    let definition: ExperimentDefinition | undefined;
    try {
      problem = experimentProblem(mod.default);
      if (problem === undefined) {
        // Made again: a brand proves nothing about the values behind it, and planning trusts them.
        const remade = remakeExperiment(mod.default as object);
        if ("problem" in remade) problem = `an invalid experiment definition: ${remade.problem}`;
        else definition = remade.definition;
      }
    } catch (error) {
      issues.push(unreadableExport(file.relative, error));
      continue;
    }
    if (problem !== undefined || definition === undefined) {
      issues.push({
        file: file.relative,
        code: "discovery.invalid-export",
        level: "error",
        message: `the default export is ${problem}`,
        hint:
          "export default defineExperiment({ agent, ... }), or remove the default export from helper files",
      });
      continue;
    }
    if (id === "list") {
      issues.push({
        file: file.relative,
        code: "experiment-id-reserved",
        level: "error",
        message: 'the experiment ID "list" is reserved for niceeval exp list',
        hint: "rename the file",
      });
      continue;
    }
    found.push({ id, file: file.relative, definition });
  }
  const counts = new Map<string, string[]>();
  for (const item of found) counts.set(item.id, [...(counts.get(item.id) ?? []), item.file]);
  for (const [id, filesWithId] of counts) {
    if (filesWithId.length < 2) continue;
    for (const file of filesWithId) {
      issues.push({
        file,
        code: "discovery.duplicate-id",
        level: "error",
        message: `experiment ID "${id}" is produced by ${filesWithId.join(" and ")}`,
        hint: "rename one of the files",
      });
    }
  }
  return found
    .filter((item) => counts.get(item.id)!.length === 1)
    .map((item, index) => ({ ...item, index }));
}

/** Why `value` is not a current experiment definition, or undefined when it is one. */
function experimentProblem(value: unknown): string | undefined {
  const found = readBrand(value);
  if (found === undefined) return `not a defineExperiment({...}) result (got ${describe(value)})`;
  if (found.kind !== "experiment") {
    return `${found.kind === "eval" || found.kind === "eval-group" ? "an" : "a"} ${
      found.kind.replace("-", " ")
    } definition, not a defineExperiment({...}) result`;
  }
  if (found.version !== API_FORMAT_VERSION) {
    return `an experiment made by an API of format version ${found.version}; this niceeval reads version ${API_FORMAT_VERSION}`;
  }
  return undefined;
}
