/**
 * Discovers a whole project: evals, groups and experiments, every issue collected. The modules
 * that do it (and, through them, the loader and `node:` modules) are imported when discovery
 * runs: the public root, which every start loads, reaches this module (docs/start.md).
 */
import type { DiscoveredEval, ModuleLoader } from "./evals.ts";
import type { DiscoveredExperiment } from "./experiments.ts";
import type { DiscoveredGroup } from "./groups.ts";
import type { DiscoveryIssue } from "./issues.ts";
import type { WalkedFile } from "./walk.ts";

/** Everything discovery found. */
export interface DiscoveredProject {
  readonly evals: readonly DiscoveredEval[];
  readonly groups: readonly DiscoveredGroup[];
  readonly experiments: readonly DiscoveredExperiment[];
  /** Warnings (errors throw). */
  readonly warnings: readonly DiscoveryIssue[];
}

/** What to discover: `list` needs no experiments. */
interface DiscoverOptions {
  readonly load: ModuleLoader;
  readonly experiments?: boolean;
}

/**
 * Walks and imports the project's evals (and experiments), then throws one `UsageError` listing
 * every error issue, or returns the project with its warnings. Every file discovery imports is
 * loaded first in one module graph when the loader can (`loadAll`), in the order the file-by-file
 * discovery below imports them.
 */
export async function discoverProject(
  root: string,
  options: DiscoverOptions,
): Promise<DiscoveredProject> {
  const [
    { classifyEvalFiles, discoverEvals },
    { discoverExperiments, experimentIdOf },
    { discoverGroups, inGroupDirectory },
    { sortIssues, throwOnErrors },
    { walkFiles },
  ] = await Promise.all([
    import("./evals.ts"),
    import("./experiments.ts"),
    import("./groups.ts"),
    import("./issues.ts"),
    import("./walk.ts"),
  ]);
  const issues: DiscoveryIssue[] = [];
  const evalFiles = await walkFiles(root, "evals", issues);
  const { entries, groups: groupFiles } = classifyEvalFiles(evalFiles, issues);
  const experimentFiles = options.experiments === false
    ? undefined
    : await walkFiles(root, "experiments", issues);
  const load = await preload(options.load, [
    ...entries,
    ...groupFiles.filter((file) => inGroupDirectory(file.relative)),
    ...(experimentFiles ?? []).filter((file) => experimentIdOf(file.relative) !== undefined),
  ]);
  const evals = await discoverEvals(entries, load, issues);
  const groups = await discoverGroups(groupFiles, evals, load, issues);
  const experiments = experimentFiles === undefined
    ? []
    : await discoverExperiments(experimentFiles, load, issues);
  throwOnErrors(issues);
  return { evals, groups, experiments, warnings: sortIssues(issues) };
}

/**
 * Loads `files` with the loader's `loadAll`; returns a loader that answers those files from the
 * outcomes (each namespace, or the error of that file alone) and any other file from `load`.
 */
async function preload(load: ModuleLoader, files: readonly WalkedFile[]): Promise<ModuleLoader> {
  if (load.loadAll === undefined || files.length === 0) return load;
  const paths = files.map((file) => file.path);
  const outcomes = await load.loadAll(paths);
  const byPath = new Map(paths.map((path, i) => [path, outcomes[i]]));
  return (path) => {
    const outcome = byPath.get(path);
    if (outcome === undefined) return load(path);
    return outcome.ok ? Promise.resolve(outcome.namespace) : Promise.reject(outcome.error);
  };
}
