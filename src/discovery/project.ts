/** Discovers a whole project: evals, groups and experiments, every issue collected. */
import {
  classifyEvalFiles,
  type DiscoveredEval,
  discoverEvals,
  type ModuleLoader,
} from "./evals.ts";
import { type DiscoveredExperiment, discoverExperiments } from "./experiments.ts";
import { type DiscoveredGroup, discoverGroups } from "./groups.ts";
import { type DiscoveryIssue, sortIssues, throwOnErrors } from "./issues.ts";
import { walkFiles } from "./walk.ts";

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
 * every error issue, or returns the project with its warnings.
 */
export async function discoverProject(
  root: string,
  options: DiscoverOptions,
): Promise<DiscoveredProject> {
  const issues: DiscoveryIssue[] = [];
  const evalFiles = await walkFiles(root, "evals", issues);
  const { entries, groups: groupFiles } = classifyEvalFiles(evalFiles, issues);
  const evals = await discoverEvals(entries, options.load, issues);
  const groups = await discoverGroups(groupFiles, evals, options.load, issues);
  const experiments = options.experiments === false
    ? []
    : await discoverExperiments(await walkFiles(root, "experiments", issues), options.load, issues);
  throwOnErrors(issues);
  return { evals, groups, experiments, warnings: sortIssues(issues) };
}
