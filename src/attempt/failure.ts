/**
 * The execution error of one Attempt: the first terminal failure wins, classified with a code,
 * a phase and a halt scope (authoring.md §6.2, scheduling.md STOP-1).
 */
import { errorMessage, hasErrorName } from "../_shared/mod.ts";
import type { AttemptError } from "../_shared/mod.ts";
import type { ExperimentDefinition, FailureClass, FailureInfo } from "../discovery/mod.ts";

/**
 * A failure as the runner records it, with the thrown value: its location and trimmed stack are
 * derived only when the Attempt settles errored.
 */
export interface RecordedFailure extends Omit<AttemptError, "location" | "stack"> {
  readonly error: unknown;
}

/** Classification hooks of one Attempt. */
export interface FailureContext {
  readonly experiment: ExperimentDefinition;
  readonly experimentId: string;
  readonly evalId: string;
  readonly ordinal: number;
  /** Reports a non-fatal diagnostic (`classify-failure-threw`). */
  warn(code: string, message: string): void;
}

/** Asks the experiment's `classifyFailure`; a throw is ignored with a warning (rule 6.2.5). */
export function classify(
  ctx: FailureContext,
  info: Omit<FailureInfo, "experimentId" | "evalId" | "ordinal">,
): FailureClass | undefined {
  const classifier = ctx.experiment.classifyFailure;
  if (!classifier) return undefined;
  try {
    const found = classifier(
      Object.freeze({
        ...info,
        experimentId: ctx.experimentId,
        evalId: ctx.evalId,
        ordinal: ctx.ordinal,
      }),
    );
    return typeof found === "object" && found !== null ? found : undefined;
  } catch (error) {
    ctx.warn("classify-failure-threw", `classifyFailure threw: ${errorMessage(error)}`);
    return undefined;
  }
}

/** True for `EvalFatalError` / `ExperimentFatalError` from any copy of the API. */
export function isFatal(error: unknown): boolean {
  return hasErrorName(error, "EvalFatalError") || hasErrorName(error, "ExperimentFatalError");
}

/**
 * Builds the recorded failure of a thrown value, with fatal-error scopes and classification.
 * `classified` passes a classification already obtained for this failure, so `classifyFailure`
 * is consulted at most once per failure.
 */
export function failureOf(
  ctx: FailureContext,
  phase: FailureInfo["phase"],
  code: string,
  error: unknown,
  message = errorMessage(error),
  classified?: { readonly found: FailureClass | undefined },
): RecordedFailure {
  if (hasErrorName(error, "EvalFatalError")) {
    return { code: "eval-fatal", phase, message, scope: "eval", error };
  }
  if (hasErrorName(error, "ExperimentFatalError")) {
    return { code: "experiment-fatal", phase, message, scope: "experiment", error };
  }
  const found = classified ? classified.found : classify(ctx, { phase, code, message, error });
  return { code, phase, message, scope: scopeOf(found), error };
}

function scopeOf(found: FailureClass | undefined): RecordedFailure["scope"] {
  const scope = found?.scope;
  return scope === "eval" || scope === "experiment" ? scope : "attempt";
}
