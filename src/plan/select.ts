/**
 * Selection of experiments and evals (authoring.md §1.7, cli.md FLAG-1 … FLAG-3), with `-t,
 * --grep` and `--last-failed` (issue 18.2, docs/selection.md).
 */
import { closest, errorMessage, UsageError } from "../_shared/mod.ts";
import type { DiscoveredEval, DiscoveredExperiment, EvalDescriptor } from "../discovery/mod.ts";
import { compileGrep, grepArgument, grepList, grepMatches, type GrepPattern } from "./grep.ts";

/** What the command line selects. */
interface SelectionInput {
  /** First positional of `exp`, if any. */
  readonly selector?: string;
  /** Further positionals: eval-ID prefixes (OR). */
  readonly evalPrefixes: readonly string[];
  /** `--tag` values (OR). */
  readonly tags: readonly string[];
  /** `-t, --grep` patterns (OR): case-insensitive regular expressions over ID and description. */
  readonly grep?: readonly string[];
  /**
   * `--last-failed`: per experiment ID, the evals whose latest result failed or errored. Only
   * evals listed here stay selected; an experiment without an entry keeps none.
   */
  readonly lastFailed?: ReadonlyMap<string, ReadonlySet<string>>;
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

/** Evals of one experiment: its own `evals` ∩ prefixes ∩ tags ∩ grep ∩ last failed. */
function evalsOf(
  experiment: DiscoveredExperiment,
  evals: readonly DiscoveredEval[],
  input: SelectionInput,
  grep: readonly GrepPattern[],
): { own: DiscoveredEval[]; selected: DiscoveredEval[] } {
  const own = evals.filter((e) => ownSelection(experiment, e));
  const failed = input.lastFailed?.get(experiment.id);
  const selected = own.filter((e) =>
    (input.evalPrefixes.length === 0 || input.evalPrefixes.some((p) => e.id.startsWith(p))) &&
    (input.tags.length === 0 || e.definition.tags.some((tag) => input.tags.includes(tag))) &&
    grepMatches(grep, targetOf(e)) &&
    (input.lastFailed === undefined || failed?.has(e.id) === true)
  );
  return { own, selected };
}

function targetOf(e: DiscoveredEval): { id: string; description: string | undefined } {
  return { id: e.id, description: e.definition.description };
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
 * `experiment.evals-predicate-failed`, `nothing-selected`, or `usage` for an invalid `--grep`.
 */
export function select(
  experiments: readonly DiscoveredExperiment[],
  evals: readonly DiscoveredEval[],
  input: SelectionInput,
): Selection {
  const grep = compileGrep(input.grep ?? []);
  const chosen = selectExperiments(experiments, input.selector);
  const per = chosen.map((experiment) => ({
    experiment,
    ...evalsOf(experiment, evals, input, grep),
  }));
  const own = uniqueEvals(per.flatMap((p) => p.own));
  for (const prefix of input.evalPrefixes) {
    if (!own.some((e) => e.id.startsWith(prefix))) throw prefixNotFound(prefix, own);
  }
  if (grep.length > 0 && !own.some((e) => grepMatches(grep, targetOf(e)))) {
    throw new UsageError(
      "eval-not-found",
      `no eval of the selected experiments matches ${grepList(input.grep!)}`,
      "-t/--grep searches eval IDs and descriptions, ignoring case; run niceeval list to see them",
    );
  }
  const selected = per.filter((p) => p.selected.length > 0);
  if (selected.length === 0) {
    throw new UsageError(
      "nothing-selected",
      chosen.length === 0 ? "there are no experiments to run" : "the selection contains no evals",
      chosen.length === 0
        ? "add a file under experiments/ that calls defineExperiment({ agent })"
        : "widen the eval prefixes, -t/--grep or --tag values",
    );
  }
  return {
    experiments: selected.map((p) => ({ experiment: p.experiment, evals: p.selected })),
    emptyExperimentIds: per.filter((p) => p.selected.length === 0).map((p) => p.experiment.id),
  };
}

/** Each eval once, in discovery order. */
function uniqueEvals(evals: readonly DiscoveredEval[]): DiscoveredEval[] {
  const byId = new Map(evals.map((e) => [e.id, e]));
  return [...byId.values()].sort((a, b) => a.index - b.index);
}

/**
 * The `eval-not-found` error of a prefix no selected eval starts with: suggests a prefix that
 * would match (see {@link suggestEvalPrefix}), and `-t` when the text names evals.
 */
function prefixNotFound(prefix: string, own: readonly DiscoveredEval[]): UsageError {
  const ids = own.map((e) => e.id);
  const near = suggestEvalPrefix(prefix, ids);
  let byName = false;
  try {
    const grep = compileGrep([prefix]);
    byName = own.some((e) => grepMatches(grep, targetOf(e)));
  } catch {
    // Not a valid pattern: no -t suggestion.
  }
  const parts = [
    ...(near !== undefined ? [`did you mean "${near}"?`] : []),
    ...(byName
      ? [`eval IDs match by prefix; use ${grepArgument(prefix)} to match by name`]
      : near !== undefined
      ? ["eval IDs match by prefix"]
      : ["eval IDs match by prefix; run niceeval exp list --json to see each experiment's evals"]),
  ];
  return new UsageError(
    "eval-not-found",
    `no eval of the selected experiments starts with "${prefix}"`,
    parts.join(" "),
  );
}

/** Shortest typed text that gets an edit-distance suggestion (shorter ones match too much). */
const FUZZY_MIN_LENGTH = 4;

/**
 * A prefix of one of `ids` the user probably meant by `typed`, or undefined: first a
 * case-insensitive match at the start of any ID segment (`capital` → `geo/capital`), else the
 * closest ID, ID directory or ID start as long as the text within edit distance 2 (`gret` →
 * `greet`, `geo/captial` → `geo/capital`); IDs and directories win ties.
 */
export function suggestEvalPrefix(typed: string, ids: readonly string[]): string | undefined {
  if (typed === "") return undefined;
  const lower = typed.toLowerCase();
  for (const id of ids) {
    const low = id.toLowerCase();
    const starts = [0, ...[...id.matchAll(/\//g)].map((m) => m.index + 1)];
    const at = starts.find((i) => low.startsWith(lower, i));
    if (at !== undefined) return id.slice(0, at + typed.length);
  }
  if (typed.length < FUZZY_MIN_LENGTH) return undefined;
  // Whole segments first (`gret` → `greet`, not `gree`), then starts as long as the text.
  const segments = ids.flatMap((id) =>
    [...id.matchAll(/\//g)].map((m) => id.slice(0, m.index)).concat(id)
  );
  return closest(typed, [...new Set([...segments, ...ids.map((id) => id.slice(0, typed.length))])]);
}
