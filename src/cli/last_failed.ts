/**
 * `exp --last-failed` (issue 18.2, docs/selection.md): narrows a selection to the evals whose
 * latest stored result failed or errored. The latest result of an (experiment, eval) is the one
 * carry and `show` read: the experiment's latest published Run holding the eval (CARRY-1), every
 * ordinal it stored, whether or not the eval or the experiment changed since.
 */
import { select, type Selection } from "../plan/mod.ts";
import { candidateOf, loadCandidates, type RecordReader } from "../record/mod.ts";
import type { ExpOptions } from "./exp_options.ts";
import type { Io } from "./io.ts";
import type { LoadedProject } from "./project.ts";

/** Verdicts that make an eval "last failed". */
const FAILED_VERDICTS: ReadonlySet<string> = new Set(["failed", "errored"]);

/** `--last-failed` found nothing to run: the command says so and exits 0. */
export class NothingFailed extends Error {
  constructor() {
    super(
      "--last-failed: no selected eval failed or errored in its latest result; nothing to run",
    );
    this.name = "NothingFailed";
  }
}

/**
 * Per experiment ID, the evals of `selection` whose latest stored result has a failed or errored
 * Attempt.
 */
export async function lastFailedEvals(
  reader: RecordReader,
  selection: Selection,
): Promise<Map<string, Set<string>>> {
  const pairs = selection.experiments.flatMap((s) =>
    s.evals.map((e) => ({ experimentId: s.experiment.id, evalId: e.id }))
  );
  const candidates = await loadCandidates(reader, pairs);
  const out = new Map<string, Set<string>>();
  for (const { experimentId, evalId } of pairs) {
    for (let ordinal = 0;; ordinal++) {
      const c = candidateOf(candidates, experimentId, evalId, ordinal);
      if (c === undefined) break;
      if (c.stored === null || !FAILED_VERDICTS.has(c.stored.verdict)) continue;
      let evals = out.get(experimentId);
      if (!evals) out.set(experimentId, evals = new Set());
      evals.add(evalId);
      break;
    }
  }
  return out;
}

/**
 * `selection` narrowed to its last-failed evals. Throws {@link NothingFailed} when no selected
 * eval failed.
 */
export async function narrowToLastFailed(
  reader: RecordReader,
  input: { project: LoadedProject; options: ExpOptions; selection: Selection },
): Promise<Selection> {
  const { project, options } = input;
  const failed = await lastFailedEvals(reader, input.selection);
  if (failed.size === 0) throw new NothingFailed();
  const narrowed = select(project.discovered.experiments, project.discovered.evals, {
    ...(options.selector !== undefined ? { selector: options.selector } : {}),
    evalPrefixes: options.evalPrefixes,
    tags: options.tags,
    ...(options.grep !== undefined ? { grep: options.grep } : {}),
    lastFailed: failed,
  });
  // An experiment with nothing failed is left out silently: only the selection's own empty
  // experiments get the `experiment-no-evals` notice.
  return { ...narrowed, emptyExperimentIds: input.selection.emptyExperimentIds };
}

/**
 * Awaits `planning`; when `--last-failed` found nothing, prints why (stdout, or stderr with
 * `--json`, whose stdout stays machine-readable) and returns null: the command exits 0.
 */
export async function orNothingFailed<T>(
  io: Pick<Io, "stdout" | "stderr">,
  options: Pick<ExpOptions, "json">,
  planning: Promise<T>,
): Promise<T | null> {
  try {
    return await planning;
  } catch (error) {
    if (!(error instanceof NothingFailed)) throw error;
    (options.json ? io.stderr : io.stdout).write(`${error.message}\n`);
    return null;
  }
}
