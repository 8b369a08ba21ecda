/**
 * Second validation of branded definitions: a brand made by another copy of the API, or forged by
 * hand, proves nothing about the values behind it, and planning trusts them. Each check runs the
 * `define*` factory again on the definition's own data and discards the result.
 */
import { errorMessage, isPlainObject } from "../_shared/mod.ts";
import { defineEvalGroup, type EvalKind, makeEval } from "./definitions.ts";
import { defineExperiment, type ExperimentDefinition } from "./experiment.ts";

/** Why a branded eval definition is not a valid one, or undefined when it is. */
export function evalShapeProblem(value: object): string | undefined {
  return problemOf(() => {
    // `readBrand` admitted data properties only: spreading runs no user code.
    const { evaluationKind, ...options } = { ...value } as Record<string, unknown>;
    if (evaluationKind !== "pass" && evaluationKind !== "score") {
      throw new TypeError(`evaluationKind must be "pass" or "score"`);
    }
    makeEval(evaluationKind as EvalKind, options as never);
    // The two options makeEval defaults: the definition itself must hold them (identity matters
    // here, so the original is kept, not the one made again).
    if (!Array.isArray(options.tags)) throw new TypeError("tags must be an array");
    if (!isPlainObject(options.metadata)) throw new TypeError("metadata must be an object");
  });
}

/**
 * A branded experiment definition made again by `defineExperiment` (with its defaults filled in),
 * or why it is not a valid one.
 */
export function remakeExperiment(
  value: object,
): { readonly definition: ExperimentDefinition } | { readonly problem: string } {
  let definition: ExperimentDefinition | undefined;
  const problem = problemOf(() => definition = defineExperiment({ ...value } as never));
  return problem === undefined ? { definition: definition! } : { problem };
}

/** Why a branded eval group definition is not a valid one, or undefined when it is. */
export function groupShapeProblem(value: object): string | undefined {
  return problemOf(() => defineEvalGroup({ ...value } as never));
}

function problemOf(check: () => unknown): string | undefined {
  try {
    check();
    return undefined;
  } catch (error) {
    return (errorMessage(error).split("\n")[0] ?? "").trim();
  }
}
