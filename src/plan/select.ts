/** Selection of experiments and evals (authoring.md §1.7, cli.md FLAG-1 … FLAG-3). */
import { errorMessage, UsageError } from "../_shared/mod.ts";
import type { DiscoveredEval, DiscoveredExperiment, EvalDescriptor } from "../discovery/mod.ts";

/** What the command line selects. */
interface SelectionInput {
  /** First positional of `exp`, if any. */
  readonly selector?: string;
  /** Further positionals: eval-ID prefixes (OR). */
  readonly evalPrefixes: readonly string[];
  /** `--tag` values (OR). */
  readonly tags: readonly string[];
}

/** One selected experiment with its evals in discovery order. */
export interface SelectedExperiment {
  readonly experiment: DiscoveredExperiment;
  readonly evals: readonly DiscoveredEval[];
}

/** The result of selection: experiments in selection order, plus notices. */
export interface Selection {
  readonly experiments: readonly SelectedExperiment[];
  /** Experiments dropped because their selection became empty (`experiment-no-evals`). */
  readonly emptyExperimentIds: readonly string[];
}

/**
 * Resolves an experiment selector: exact ID; else every ID under `<selector>/`; else, when the
 * selector contains `/`, IDs in that exact directory whose last segment starts with the
 * selector's last segment. Returns `[]` when nothing matches.
 */
export function matchExperimentIds(ids: readonly string[], selector: string): string[] {
  const s = selector.endsWith("/") ? selector.slice(0, -1) : selector;
  if (ids.includes(s)) return [s];
  const under = ids.filter((id) => id.startsWith(s + "/"));
  if (under.length > 0) return under;
  const slash = s.lastIndexOf("/");
  if (slash < 0) return [];
  const dir = s.slice(0, slash);
  const last = s.slice(slash + 1);
  return ids.filter((id) => {
    const i = id.lastIndexOf("/");
    return i >= 0 && id.slice(0, i) === dir && id.slice(i + 1).startsWith(last);
  });
}

/** Picks the selected experiments, or throws `experiment-not-found`. */
export function selectExperiments(
  experiments: readonly DiscoveredExperiment[],
  selector: string | undefined,
): DiscoveredExperiment[] {
  if (selector === undefined) return [...experiments];
  const ids = matchExperimentIds(experiments.map((e) => e.id), selector);
  if (ids.length === 0) {
    const available = experiments.map((e) => e.id);
    const hint = selector === "show" || selector === "view"
      ? "to render results, run niceeval show"
      : available.length === 0
      ? "add a file under experiments/ that calls defineExperiment({ agent })"
      : `available experiments: ${available.slice(0, 10).join(", ")}${
        available.length > 10 ? ", …" : ""
      }`;
    throw new UsageError("experiment-not-found", `no experiment matches "${selector}"`, hint);
  }
  return experiments.filter((e) => ids.includes(e.id));
}

/** Evals of one experiment: its own `evals` selection ∩ CLI prefixes ∩ tags. */
function evalsOf(
  experiment: DiscoveredExperiment,
  evals: readonly DiscoveredEval[],
  input: SelectionInput,
): { own: DiscoveredEval[]; selected: DiscoveredEval[] } {
  const own = evals.filter((e) => ownSelection(experiment, e));
  const selected = own.filter((e) =>
    (input.evalPrefixes.length === 0 || input.evalPrefixes.some((p) => e.id.startsWith(p))) &&
    (input.tags.length === 0 || e.definition.tags.some((tag) => input.tags.includes(tag)))
  );
  return { own, selected };
}

function ownSelection(experiment: DiscoveredExperiment, e: DiscoveredEval): boolean {
  const choice = experiment.definition.evals;
  if (choice === "*") return true;
  if (typeof choice !== "function") return choice.some((prefix) => e.id.startsWith(prefix));
  let result: unknown;
  try {
    result = choice(describeEval(e));
  } catch (error) {
    const message = errorMessage(error).split("\n")[0]!.trim();
    throw predicateFailed(experiment, `threw for "${e.id}": ${message}`);
  }
  if (typeof result !== "boolean") {
    throw predicateFailed(
      experiment,
      `returned ${
        result instanceof Promise ? "a promise" : typeof result
      } for "${e.id}"; it must return a boolean synchronously`,
    );
  }
  return result;
}

function predicateFailed(experiment: DiscoveredExperiment, detail: string): UsageError {
  return new UsageError(
    "experiment.evals-predicate-failed",
    `${experiment.file}: evals predicate ${detail}`,
    "make the evals predicate synchronous and return true or false for every eval",
  );
}

function describeEval(e: DiscoveredEval): EvalDescriptor {
  const d: { -readonly [K in keyof EvalDescriptor]: EvalDescriptor[K] } = {
    id: e.id,
    tags: e.definition.tags,
    evaluationKind: e.definition.evaluationKind,
    metadata: e.definition.metadata,
  };
  if (e.definition.description !== undefined) d.description = e.definition.description;
  if (e.groupId !== undefined) d.groupId = e.groupId;
  return Object.freeze(d);
}

/**
 * Selects experiments and their evals. Throws `experiment-not-found`, `eval-not-found`,
 * `experiment.evals-predicate-failed` or `nothing-selected`.
 */
export function select(
  experiments: readonly DiscoveredExperiment[],
  evals: readonly DiscoveredEval[],
  input: SelectionInput,
): Selection {
  const chosen = selectExperiments(experiments, input.selector);
  const per = chosen.map((experiment) => ({ experiment, ...evalsOf(experiment, evals, input) }));
  for (const prefix of input.evalPrefixes) {
    if (!per.some((p) => p.own.some((e) => e.id.startsWith(prefix)))) {
      throw new UsageError(
        "eval-not-found",
        `no eval of the selected experiments starts with "${prefix}"`,
        "run niceeval exp list --json to see each experiment's evals",
      );
    }
  }
  const selected = per.filter((p) => p.selected.length > 0);
  if (selected.length === 0) {
    throw new UsageError(
      "nothing-selected",
      chosen.length === 0 ? "there are no experiments to run" : "the selection contains no evals",
      chosen.length === 0
        ? "add a file under experiments/ that calls defineExperiment({ agent })"
        : "widen the eval prefixes or --tag values",
    );
  }
  return {
    experiments: selected.map((p) => ({ experiment: p.experiment, evals: p.selected })),
    emptyExperimentIds: per.filter((p) => p.selected.length === 0).map((p) => p.experiment.id),
  };
}
