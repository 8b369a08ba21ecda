/** Token usage of turns (authoring.md §7.2) and its sums over a scope (§3.4 rule 5). */
import { objectProblem, type Problem, problem } from "./_problem.ts";
import { describe, USAGE_FIELDS } from "../_shared/mod.ts";
import type { Usage } from "./types.ts";

/**
 * Checks a reported usage: token counts and `requests` are non-negative integers, `costUSD` is
 * finite and ≥ 0, and no other field is present (`undefined` fields count as absent).
 *
 * @param value The usage to check.
 * @param path Where the usage sits, for the problem's path.
 * @returns The first problem, or `undefined` when the usage is valid.
 */
export function validateUsage(value: unknown, path = "usage"): Problem | undefined {
  const found = objectProblem(value, path, USAGE_FIELDS, "a usage object");
  if (found) return found;
  const record = value as Record<string, unknown>;
  for (const field of USAGE_FIELDS) {
    const n = record[field];
    if (n === undefined) continue;
    const at = `${path}.${field}`;
    if (field === "costUSD") {
      if (typeof n !== "number" || !Number.isFinite(n) || n < 0) {
        return problem(at, `must be a finite number ≥ 0, got ${describe(n)}`);
      }
    } else if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 0) {
      return problem(at, `must be a non-negative integer, got ${describe(n)}`);
    }
  }
  return undefined;
}

/** Copies a validated usage without absent fields, frozen. */
export function copyUsage(usage: Usage): Usage {
  const out: Usage = {};
  for (const field of USAGE_FIELDS) {
    const n = usage[field];
    if (n !== undefined) out[field] = n;
  }
  return Object.freeze(out);
}

/**
 * Sums the usage of the turns in scope. A field is present only if every turn reported it; a
 * turn without usage makes every field absent, and an empty scope sums to `{}`.
 *
 * @param usages One entry per turn in scope; `undefined` for a turn that reported no usage.
 * @returns The frozen sum.
 */
export function sumUsage(usages: readonly (Usage | undefined)[]): Usage {
  const out: Usage = {};
  if (usages.length === 0) return Object.freeze(out);
  for (const field of USAGE_FIELDS) {
    let total = 0;
    let everyTurn = true;
    for (const usage of usages) {
      const n = usage?.[field];
      if (n === undefined) {
        everyTurn = false;
        break;
      }
      total += n;
    }
    if (everyTurn) out[field] = total;
  }
  return Object.freeze(out);
}
