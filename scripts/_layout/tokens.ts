/**
 * A small JavaScript/TypeScript tokeniser for check_layout: enough to find import and export
 * statements, property names and function bodies without being fooled by comments, strings,
 * template literals or regular expressions.
 *
 * @module
 */

/** One token of source text. Strings carry their (unescaped-enough) value. */
export interface Token {
  /** `name` covers identifiers and keywords; `template` is a template with substitutions. */
  kind: "name" | "string" | "template" | "number" | "punct" | "regexp";
  /** The identifier, the string's value, or the punctuator. */
  value: string;
  /** Offset of the first character. */
  start: number;
  /** Offset after the last character. */
  end: number;
  /** 1-based line of the first character. */
  line: number;
}

/** A comment and where it starts. */
export interface Comment {
  /** The full comment text, delimiters included. */
  text: string;
  /** Offset of the first character. */
  start: number;
  /** 1-based line of the first character. */
  line: number;
}

/** The tokens and comments of one source file. */
export interface Tokenized {
  tokens: Token[];
  comments: Comment[];
}

const NAME_START_REGEXP = /[A-Za-z_$\u0080-\uffff]/;
const NAME_PART_REGEXP = /[\w$\u0080-\uffff]/;
const NUMBER_PART_REGEXP = /[\w.]/;
const MULTI_PUNCT = ["...", "=>", "?.", "??"];
// After these keywords a `/` starts a regular expression, not a division.
const KEYWORDS_BEFORE_EXPRESSION = new Set([
  "return",
  "typeof",
  "instanceof",
  "in",
  "of",
  "new",
  "delete",
  "void",
  "throw",
  "case",
  "do",
  "else",
  "yield",
  "await",
]);
const ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", "0": "\0" };

/**
 * Tokenises `source`. Unterminated constructs end at the end of the text.
 *
 * One long state machine on purpose (STYLE.md §3 allows it with a reason): every branch moves the
 * same cursor and template nesting state, and splitting it would scatter that state.
 */
export function tokenize(source: string): Tokenized {
  const lineStarts = [0];
  for (let i = 0; i < source.length; i++) if (source[i] === "\n") lineStarts.push(i + 1);
  const lineOf = (offset: number): number => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };

  const tokens: Token[] = [];
  const comments: Comment[] = [];
  // Brace depths at which an enclosing template literal resumes after `}`.
  const templateStack: number[] = [];
  let braceDepth = 0;
  let i = 0;
  const push = (kind: Token["kind"], value: string, start: number) =>
    tokens.push({ kind, value, start, end: i, line: lineOf(start) });

  /** Scans template characters from `i` (just after "`" or "}"); returns true at `${`. */
  const scanTemplate = (): { text: string; open: boolean } => {
    let text = "";
    while (i < source.length) {
      const c = source[i]!;
      if (c === "\\") {
        text += source.slice(i, i + 2);
        i += 2;
      } else if (c === "`") {
        i++;
        return { text, open: false };
      } else if (c === "$" && source[i + 1] === "{") {
        i += 2;
        return { text, open: true };
      } else {
        text += c;
        i++;
      }
    }
    return { text, open: false };
  };

  const regexAllowed = (): boolean => {
    const prev = tokens[tokens.length - 1];
    if (prev === undefined) return true;
    if (prev.kind === "name") return KEYWORDS_BEFORE_EXPRESSION.has(prev.value);
    if (prev.kind === "punct") return ![")", "]", "}"].includes(prev.value);
    return false;
  };

  while (i < source.length) {
    const c = source[i]!;
    const start = i;
    if (c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\ufeff") {
      i++;
    } else if (c === "/" && source[i + 1] === "/") {
      const end = source.indexOf("\n", i);
      i = end < 0 ? source.length : end;
      comments.push({ text: source.slice(start, i), start, line: lineOf(start) });
    } else if (c === "/" && source[i + 1] === "*") {
      const end = source.indexOf("*/", i + 2);
      i = end < 0 ? source.length : end + 2;
      comments.push({ text: source.slice(start, i), start, line: lineOf(start) });
    } else if (c === '"' || c === "'") {
      let value = "";
      i++;
      while (i < source.length && source[i] !== c && source[i] !== "\n") {
        if (source[i] === "\\") {
          const e = source[i + 1] ?? "";
          value += ESCAPES[e] ?? e;
          i += 2;
        } else {
          value += source[i];
          i++;
        }
      }
      i++;
      push("string", value, start);
    } else if (c === "`") {
      i++;
      const part = scanTemplate();
      if (part.open) {
        templateStack.push(braceDepth);
        push("template", part.text, start);
      } else {
        push("string", part.text, start);
      }
    } else if (c === "}" && templateStack.length > 0 && templateStack.at(-1) === braceDepth) {
      templateStack.pop();
      i++;
      const part = scanTemplate();
      if (part.open) templateStack.push(braceDepth);
      push("template", part.text, start);
    } else if (NAME_START_REGEXP.test(c)) {
      while (i < source.length && NAME_PART_REGEXP.test(source[i]!)) i++;
      push("name", source.slice(start, i), start);
    } else if (/[0-9]/.test(c) || (c === "." && /[0-9]/.test(source[i + 1] ?? ""))) {
      while (i < source.length && NUMBER_PART_REGEXP.test(source[i]!)) i++;
      push("number", source.slice(start, i), start);
    } else if (c === "/" && regexAllowed()) {
      i++;
      let inClass = false;
      while (i < source.length && source[i] !== "\n") {
        const r = source[i]!;
        if (r === "\\") i++;
        else if (r === "[") inClass = true;
        else if (r === "]") inClass = false;
        else if (r === "/" && !inClass) break;
        i++;
      }
      i++;
      while (i < source.length && NAME_PART_REGEXP.test(source[i]!)) i++;
      push("regexp", source.slice(start, i), start);
    } else {
      const multi = MULTI_PUNCT.find((p) => source.startsWith(p, i));
      i += multi?.length ?? 1;
      if (c === "{") braceDepth++;
      if (c === "}") braceDepth--;
      push("punct", multi ?? c, start);
    }
  }
  return { tokens, comments };
}
