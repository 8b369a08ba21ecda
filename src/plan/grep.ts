/**
 * `-t, --grep` (issue 18.2): selection by name. A value matches an eval when its ID or its
 * description contains the value as text, or matches it as a regular expression, ignoring case
 * either way; several values are OR-ed. docs/selection.md describes the rule.
 */
import { UsageError } from "../_shared/mod.ts";

/** What a `--grep` pattern is matched against. */
export interface GrepTarget {
  readonly id: string;
  readonly description?: string | undefined;
}

/** One compiled `--grep` value. */
export interface GrepPattern {
  readonly regex: RegExp;
  /** The value lower-cased, found as plain text (`2+2` matches "What is 2+2?"). */
  readonly text: string;
}

/** Longest pattern quoted whole in a message. */
const QUOTED_MAX = 80;

/**
 * Compiles `--grep` values. Throws a `usage` error for an empty value or one that is not a valid
 * regular expression.
 */
export function compileGrep(patterns: readonly string[]): GrepPattern[] {
  return patterns.map((pattern) => {
    if (pattern === "") {
      throw new UsageError(
        "usage",
        "--grep requires a non-empty pattern",
        "pass a word of the eval ID or description, for example -t capital",
      );
    }
    try {
      return { regex: new RegExp(pattern, "i"), text: pattern.toLowerCase() };
    } catch (error) {
      const detail = error instanceof SyntaxError ? reasonOf(error.message) : String(error);
      throw new UsageError(
        "usage",
        `--grep requires a regular expression, got ${quoted(pattern)} (${detail})`,
        "escape special characters with a backslash, for example -t '2\\+2' or -t 'what\\?'",
      );
    }
  });
}

/** True when no pattern is given, or when one of them is found in the ID or the description. */
export function grepMatches(patterns: readonly GrepPattern[], target: GrepTarget): boolean {
  if (patterns.length === 0) return true;
  const fields = target.description === undefined ? [target.id] : [target.id, target.description];
  return patterns.some((p) =>
    fields.some((field) => field.toLowerCase().includes(p.text) || p.regex.test(field))
  );
}

/** `-t <value>` as a shell word: bare when it is a plain word, else single-quoted. */
export function grepArgument(value: string): string {
  return /^[\w./@:+-]+$/.test(value) ? `-t ${value}` : `-t '${value.replaceAll("'", `'\\''`)}'`;
}

/** The patterns for a message: `--grep "a"`, `--grep "a" or "b"`. */
export function grepList(patterns: readonly string[]): string {
  return `--grep ${patterns.map(quoted).join(" or ")}`;
}

/** The engine's reason without the pattern it repeats (`Invalid regular expression: /x/i: …`). */
function reasonOf(message: string): string {
  const at = message.lastIndexOf(": ");
  return (at < 0 ? message : message.slice(at + 2)).toLowerCase();
}

function quoted(value: string): string {
  const chars = [...value];
  return JSON.stringify(
    chars.length > QUOTED_MAX ? chars.slice(0, QUOTED_MAX).join("") + "…" : value,
  );
}
