/** Text matchers (authoring.md §4.2): substrings, patterns, URLs, Markdown sections, similarity. */
import { AssertionAuthoringError, isPlainObject } from "../_shared/mod.ts";
import { nameArgument, preview, quoted, truncate } from "./_describe.ts";
import { type BooleanOutcome, createBooleanMatch, createScoreMatch } from "./_protocol.ts";
import type { ScoreMatch, ValueMatch } from "./types.ts";

/** Options of {@link includes} and {@link excludes}. */
export interface IncludesOptions {
  /**
   * Compare case-insensitively.
   * @default false
   */
  readonly ignoreCase?: boolean;
}

function notAString(subject: unknown, expected: string): BooleanOutcome {
  return { result: "mismatched", reason: "not-a-string", expected, received: preview(subject) };
}

function readIncludesOptions(who: string, options: unknown): boolean {
  if (options === undefined) return false;
  if (!isPlainObject(options)) {
    throw new TypeError(`Cannot create ${who}: options must be an object`);
  }
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined) continue;
    if (key === "stripComments") {
      throw new AssertionAuthoringError(
        "not-supported",
        `Cannot create ${who}: option "stripComments" is not supported in this release`,
      );
    }
    if (key !== "ignoreCase") throw new TypeError(`Cannot create ${who}: unknown option "${key}"`);
    if (typeof value !== "boolean") {
      throw new TypeError(`Cannot create ${who}: option "ignoreCase" must be a boolean`);
    }
  }
  return options.ignoreCase === true;
}

function substringMatch(base: "includes" | "excludes", text: unknown, options: unknown) {
  if (typeof text !== "string") {
    throw new TypeError(`Cannot create ${base}(): text must be a string`);
  }
  const ignoreCase = readIncludesOptions(`${base}()`, options);
  const name = `${base}(${quoted(text)}${ignoreCase ? ", { ignoreCase: true }" : ""})`;
  const needle = ignoreCase ? text.toLowerCase() : text;
  return createBooleanMatch<ValueMatch<unknown, string>>("value", name, {
    base,
    evaluate(subject) {
      if (typeof subject !== "string") return notAString(subject, text);
      const found = (ignoreCase ? subject.toLowerCase() : subject).includes(needle);
      const matched = base === "includes" ? found : !found;
      return {
        result: matched ? "matched" : "mismatched",
        expected: text,
        received: preview(subject),
      };
    },
  });
}

/**
 * Matches a string that contains `text`.
 *
 * @param text The substring to look for.
 * @param options `ignoreCase` compares case-insensitively.
 * @returns A value match; a non-string subject is `mismatched` with reason `not-a-string`.
 * @example
 * ```ts
 * import { includes } from "niceeval/expect";
 * const mentionsSun = includes("sunny", { ignoreCase: true });
 * ```
 */
export function includes(text: string, options?: IncludesOptions): ValueMatch<unknown, string> {
  return substringMatch("includes", text, options);
}

/**
 * Matches a string that does not contain `text`.
 *
 * @param text The substring that must be absent.
 * @param options `ignoreCase` compares case-insensitively.
 * @returns A value match; a non-string subject is `mismatched` with reason `not-a-string`.
 * @example
 * ```ts
 * import { excludes } from "niceeval/expect";
 * const noApology = excludes("sorry", { ignoreCase: true });
 * ```
 */
export function excludes(text: string, options?: IncludesOptions): ValueMatch<unknown, string> {
  return substringMatch("excludes", text, options);
}

/**
 * Matches a string for which `re.test(subject)` is true; `lastIndex` is reset before each test.
 *
 * @param re The regular expression.
 * @returns A value match; a non-string subject is `mismatched` with reason `not-a-string`.
 * @example
 * ```ts
 * import { pattern } from "niceeval/expect";
 * const greets = pattern(/hello/i);
 * ```
 */
export function pattern(re: RegExp): ValueMatch<unknown, string> {
  if (Object.prototype.toString.call(re) !== "[object RegExp]") {
    throw new TypeError("Cannot create pattern(): argument must be a RegExp");
  }
  const source = String(re);
  return createBooleanMatch<ValueMatch<unknown, string>>(
    "value",
    `pattern(${truncate(source, 60)})`,
    {
      base: "pattern",
      evaluate(subject) {
        if (typeof subject !== "string") return notAString(subject, source);
        // A global or sticky RegExp keeps state between tests; a match must not.
        re.lastIndex = 0;
        const found = re.test(subject);
        re.lastIndex = 0;
        return {
          result: found ? "matched" : "mismatched",
          expected: source,
          received: preview(subject),
        };
      },
    },
  );
}

const URL_REGEXP = /https?:\/\/[^\s<>"'`]+/gi;
const URL_TRAILING_REGEXP = /[.,;:!?)]+$/;

/** Distinct `http(s)://` URLs of a text, with trailing `.,;:!?)` trimmed. */
export function findUrls(text: string): string[] {
  const found = new Set<string>();
  for (const raw of text.match(URL_REGEXP) ?? []) {
    const url = raw.replace(URL_TRAILING_REGEXP, "");
    if (/^https?:\/\/./i.test(url)) found.add(url);
  }
  return [...found];
}

function requireCount(who: string, value: number, minimum: number): void {
  if (!Number.isInteger(value) || value < minimum) {
    throw new RangeError(`Cannot create ${who}: min must be an integer ≥ ${minimum}, got ${value}`);
  }
}

/**
 * Matches a string containing at least `min` distinct `http(s)://` URLs.
 *
 * @param min Required number of distinct URLs (default 1).
 * @returns A value match; a non-string subject is `mismatched` with reason `not-a-string`.
 * @example
 * ```ts
 * import { includesUrl } from "niceeval/expect";
 * const citesTwoSources = includesUrl(2);
 * ```
 */
export function includesUrl(min = 1): ValueMatch<unknown, string> {
  requireCount("includesUrl()", min, 0);
  const expected = `at least ${min} URL${min === 1 ? "" : "s"}`;
  return createBooleanMatch<ValueMatch<unknown, string>>("value", `includesUrl(${min})`, {
    base: "includesUrl",
    evaluate(subject) {
      if (typeof subject !== "string") return notAString(subject, expected);
      const urls = findUrls(subject);
      return {
        result: urls.length >= min ? "matched" : "mismatched",
        expected,
        received: preview(urls),
      };
    },
  });
}

const FENCE_REGEXP = /^ {0,3}(`{3,}|~{3,})/;
const HEADING_REGEXP = /^ {0,3}#{1,6}(?:[ \t]|$)/;

/** Number of Markdown ATX headings outside fenced code blocks. */
export function countSections(markdown: string): number {
  let fence: string | undefined;
  let count = 0;
  for (const line of markdown.split(/\r\n|\r|\n/)) {
    const opener = FENCE_REGEXP.exec(line)?.[1];
    if (fence !== undefined) {
      // A closing fence uses the same character, is at least as long, and has nothing after it.
      if (
        opener !== undefined && opener[0] === fence[0] && opener.length >= fence.length &&
        line.trim().slice(opener.length).trim() === ""
      ) fence = undefined;
      continue;
    }
    if (opener !== undefined) fence = opener;
    else if (HEADING_REGEXP.test(line)) count++;
  }
  return count;
}

/**
 * Matches Markdown text with at least `min` ATX headings (`#`…`######`) outside fenced code.
 *
 * @param min Required number of headings (default 2).
 * @returns A value match; a non-string subject is `mismatched` with reason `not-a-string`.
 * @example
 * ```ts
 * import { hasSections } from "niceeval/expect";
 * const structured = hasSections(3);
 * ```
 */
export function hasSections(min = 2): ValueMatch<unknown, string> {
  requireCount("hasSections()", min, 0);
  const expected = `at least ${min} section${min === 1 ? "" : "s"}`;
  return createBooleanMatch<ValueMatch<unknown, string>>("value", `hasSections(${min})`, {
    base: "hasSections",
    evaluate(subject) {
      if (typeof subject !== "string") return notAString(subject, expected);
      const count = countSections(subject);
      return { result: count >= min ? "matched" : "mismatched", expected, received: count };
    },
  });
}

/** Levenshtein distance over code points, in O(n × m) time and O(m) memory. */
export function levenshtein(a: readonly string[], b: readonly string[]): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/**
 * Measures how close a string is to `expected`: `1 − levenshtein / max(length)` over code points.
 *
 * @param expected The reference text.
 * @returns A measurement in [0, 1]; both empty gives 1, a non-string subject gives 0.
 * @example
 * ```ts
 * import { similarity } from "niceeval/expect";
 * const closeToReference = similarity("The capital of France is Paris.");
 * ```
 */
export function similarity(expected: string): ScoreMatch<unknown> {
  if (typeof expected !== "string") {
    throw new TypeError("Cannot create similarity(): expected must be a string");
  }
  const reference = Array.from(expected);
  return createScoreMatch(`similarity(${nameArgument(expected)})`, {
    base: "similarity",
    measure(subject) {
      const received = preview(subject);
      if (typeof subject !== "string") return { value: 0, expected: truncate(expected), received };
      const points = Array.from(subject);
      const longest = Math.max(points.length, reference.length);
      const value = longest === 0 ? 1 : 1 - levenshtein(points, reference) / longest;
      return { value, expected: truncate(expected), received };
    },
  });
}
