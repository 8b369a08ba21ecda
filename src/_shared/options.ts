/**
 * Validation helpers for `define*` option objects (authoring.md §2.4). Each helper throws a
 * {@link DefinitionError} naming the option path; callers validate synchronously at definition time.
 */
import { DefinitionError } from "./errors.ts";
import { deepFreeze, findNonJson, isPlainObject, type JsonValue } from "./json.ts";
import { isProxy } from "./brand.ts";
import { MAX_TIMER_MS } from "./limits.ts";

/** The option table of one definition kind. */
interface OptionTable {
  /** Accepted keys. */
  readonly known: readonly string[];
  /** Keys that must be present. */
  readonly required?: readonly string[];
  /** LATER keys: rejected with `definition.unsupported-option`. */
  readonly later?: readonly string[];
  /** Keys users may never set: rejected with `definition.reserved-option`. */
  readonly reserved?: readonly string[];
}

/**
 * Checks that `def` is a plain object whose keys follow `table`; `undefined` values count as
 * absent. Returns the object with absent keys removed.
 */
export function checkOptions(
  def: unknown,
  table: OptionTable,
  what: string,
  prefix = "",
): Record<string, unknown> {
  if (!isPlainObject(def)) {
    throw new DefinitionError(
      "definition.invalid-value",
      prefix || "(options)",
      `${what} expects an options object, got ${describe(def)}`,
    );
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(def)) {
    if (value === undefined) continue;
    const path = prefix ? `${prefix}.${key}` : key;
    if (table.reserved?.includes(key)) {
      throw new DefinitionError(
        "definition.reserved-option",
        path,
        `option ${JSON.stringify(key)} is reserved and cannot be set`,
      );
    }
    if (table.later?.includes(key)) {
      throw new DefinitionError(
        "definition.unsupported-option",
        path,
        `option ${JSON.stringify(key)} is not supported in this release`,
      );
    }
    if (!table.known.includes(key)) {
      const near = closest(key, table.known);
      throw new DefinitionError(
        "definition.unknown-option",
        path,
        `unknown ${what} option ${JSON.stringify(key)}${near ? ` (did you mean "${near}"?)` : ""}`,
      );
    }
    out[key] = value;
  }
  for (const key of table.required ?? []) {
    if (!(key in out)) {
      throw new DefinitionError(
        "definition.missing-option",
        prefix ? `${prefix}.${key}` : key,
        `option ${JSON.stringify(key)} is required`,
      );
    }
  }
  return out;
}

/** The candidate within edit distance 2 of `name`, preferring the nearest; else `undefined`. */
export function closest(name: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of candidates) {
    const d = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** Levenshtein distance over UTF-16 code units. */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
    }
    prev = row;
  }
  return prev[b.length]!;
}

/** A short description of a value for messages: `got 0`, `got "x"`, `got an array`. */
export function describe(value: unknown): string {
  if (value === null) return "null";
  if (isProxy(value)) return "a Proxy";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") {
    return JSON.stringify(value.length > 40 ? value.slice(0, 40) + "…" : value);
  }
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (typeof value === "function") return "a function";
  if (typeof value === "object") return "an object";
  return typeof value;
}

function invalid(path: string, _what: string, expected: string, value: unknown): never {
  throw new DefinitionError(
    "definition.invalid-value",
    path,
    `${path} must be ${expected}, got ${describe(value)}`,
  );
}

/** Validators that throw `definition.invalid-value`; `what` names the definition. */
export const check = {
  /** An integer from 1 to `max` (default: the largest timer delay, docs/limits.md). */
  positiveInteger(value: unknown, path: string, what: string, max = MAX_TIMER_MS): number {
    if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
      invalid(path, what, "a positive integer", value);
    }
    if (value > max) invalid(path, what, `an integer ≤ ${max}`, value);
    return value;
  },
  /** A finite number from 0 to `max`. */
  nonNegativeNumber(value: unknown, path: string, what: string, max = Infinity): number {
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
      invalid(path, what, "a finite number ≥ 0", value);
    }
    if (value > max) invalid(path, what, `a number ≤ ${max}`, value);
    return value;
  },
  /** A finite number above 0, from `min` to `max` when they are given. */
  positiveNumber(
    value: unknown,
    path: string,
    what: string,
    range: { min?: number; max?: number } = {},
  ): number {
    if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
      invalid(path, what, "a finite number > 0", value);
    }
    if (range.min !== undefined && value < range.min) {
      invalid(path, what, `a number ≥ ${range.min}`, value);
    }
    if (range.max !== undefined && value > range.max) {
      invalid(path, what, `a number ≤ ${range.max}`, value);
    }
    return value;
  },
  boolean(value: unknown, path: string, what: string): boolean {
    if (typeof value !== "boolean") invalid(path, what, "a boolean", value);
    return value;
  },
  /** A string; `singleLine` rejects line breaks, `nonEmpty` rejects "". */
  string(
    value: unknown,
    path: string,
    what: string,
    opts: { nonEmpty?: boolean; singleLine?: boolean; pattern?: RegExp } = {},
  ): string {
    if (typeof value !== "string") invalid(path, what, "a string", value);
    if (opts.nonEmpty && value.length === 0) invalid(path, what, "a non-empty string", value);
    if (opts.singleLine && /[\r\n]/.test(value)) {
      invalid(path, what, "a string without line breaks", value);
    }
    if (opts.pattern && !opts.pattern.test(value)) {
      invalid(path, what, `a string matching ${opts.pattern}`, value);
    }
    return value;
  },
  function<T extends (...args: never[]) => unknown>(value: unknown, path: string, what: string): T {
    if (typeof value !== "function") invalid(path, what, "a function", value);
    return value as T;
  },
  /** A JSON object, deep-frozen on return. */
  jsonObject(value: unknown, path: string, what: string): Readonly<Record<string, JsonValue>> {
    if (!isPlainObject(value)) invalid(path, what, "a JSON object", value);
    const bad = findNonJson(value);
    if (bad !== undefined) {
      const at = bad === "" ? path : `${path}.${bad}`;
      throw new DefinitionError(
        "definition.invalid-value",
        at,
        `${at} must be JSON (finite numbers, plain objects and arrays)`,
      );
    }
    return deepFreeze(structuredClone(value)) as Readonly<Record<string, JsonValue>>;
  },
  /** Tags: non-empty strings without whitespace; duplicates dropped, order kept. */
  tags(value: unknown, path: string, what: string): readonly string[] {
    if (!Array.isArray(value)) invalid(path, what, "an array of tags", value);
    const out: string[] = [];
    value.forEach((tag, i) => {
      if (typeof tag !== "string" || tag.length === 0 || /\s/.test(tag)) {
        invalid(`${path}[${i}]`, what, "a non-empty tag without whitespace", tag);
      }
      if (!out.includes(tag)) out.push(tag);
    });
    return Object.freeze(out);
  },
};
