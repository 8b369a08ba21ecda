/**
 * Problems found while checking untrusted values (turns, usage, coverage, script replies). A
 * checker returns the first {@link Problem} or `undefined`; callers turn it into an
 * `agent-invalid-turn` result or a `DefinitionError`.
 */
import { closest, describe } from "../_shared/mod.ts";
import { findNonJson, isPlainObject } from "../_shared/mod.ts";

/** The first violation found in a value: where, and a message that starts with that path. */
export interface Problem {
  readonly path: string;
  readonly message: string;
}

/** A problem at `path`; the message reads `<path> <detail>` (`(turn)` stands for the root). */
export function problem(path: string, detail: string): Problem {
  return { path, message: `${path === "" ? "(turn)" : path} ${detail}` };
}

/** Joins a base path and a sub-path: `events[2]` + `operationId`, `data` + `[0]`. */
function joinPath(base: string, sub: string): string {
  if (sub === "") return base;
  if (base === "") return sub;
  return sub.startsWith("[") ? `${base}${sub}` : `${base}.${sub}`;
}

/** A problem saying that the value at `path` must be `expected`. */
export function expected(path: string, what: string, value: unknown): Problem {
  return problem(path, `must be ${what}, got ${describe(value)}`);
}

/** A problem when `value` is not JSON (authoring.md §0), naming the first non-JSON part. */
export function jsonProblem(value: unknown, path: string): Problem | undefined {
  const bad = findNonJson(value);
  if (bad === undefined) return undefined;
  return problem(
    joinPath(path, bad),
    "must be JSON (finite numbers, strings, booleans, null, plain objects and arrays)",
  );
}

/**
 * Checks that `value` is a plain object whose defined keys are all in `known`. `undefined`
 * values count as absent.
 */
export function objectProblem(
  value: unknown,
  path: string,
  known: readonly string[],
  what = "an object",
): Problem | undefined {
  if (!isPlainObject(value)) return expected(path, what, value);
  for (const [key, child] of Object.entries(value)) {
    if (child === undefined || known.includes(key)) continue;
    const near = closest(key, known);
    return problem(
      joinPath(path, key),
      `is not a known field${near ? ` (did you mean "${near}"?)` : ""}`,
    );
  }
  return undefined;
}

/** Lists choices for messages: `"a", "b" or "c"`. */
export function choices(values: readonly string[]): string {
  const quoted = values.map((v) => JSON.stringify(v));
  if (quoted.length < 2) return quoted.join("");
  return `${quoted.slice(0, -1).join(", ")} or ${quoted.at(-1)}`;
}
