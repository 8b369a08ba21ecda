/**
 * The advisory size report of `check_layout.ts --sizes` (STYLE.md §3): long files, long
 * functions, and exported functions with more than two positional parameters. Never fails.
 *
 * @module
 */

import { matchingClose } from "./imports.ts";
import type { Token } from "./tokens.ts";

const FILE_LINES = 300;
const FILE_LINES_HARD = 500;
const FUNCTION_LINES = 40;
const FUNCTION_LINES_HARD = 80;
const MAX_POSITIONAL = 2;
const NOT_METHOD_NAMES = new Set([
  "if",
  "for",
  "while",
  "switch",
  "catch",
  "function",
  "return",
  "typeof",
  "await",
  "new",
  "super",
  "import",
]);
const OPTIONS_NAME_REGEXP = /^(options|opts|init)$/;
const TYPE_LITERAL_PREFIX = new Set([":", "|", "&", "=>", ",", "<", "(", "?"]);

/** Records a function: its name, header token, `(` of its parameters and `{` of its body. */
type AddFunction = (
  name: string,
  headerAt: number,
  open: number,
  body: number | null,
  exported: boolean,
) => void;

/** One function found in a file. */
interface FunctionInfo {
  name: string;
  line: number;
  lines: number;
  exported: boolean;
  /** Parameter token groups, `this` parameters removed. */
  params: Token[][];
}

function splitParams(tokens: Token[], open: number, close: number): Token[][] {
  const groups: Token[][] = [[]];
  let depth = 0;
  for (let j = open + 1; j < close; j++) {
    const t = tokens[j]!;
    if (t.kind === "punct" && ["(", "[", "{", "<"].includes(t.value)) depth++;
    if (t.kind === "punct" && [")", "]", "}", ">"].includes(t.value)) depth--;
    if (depth === 0 && t.kind === "punct" && t.value === ",") groups.push([]);
    else groups.at(-1)!.push(t);
  }
  return groups.filter((g) => g.length > 0 && !(g[0]!.value === "this" && g[1]?.value === ":"));
}

/** Index of the body `{` after a parameter list closing at `close`, or -1 (overload, arrow). */
function bodyStart(tokens: Token[], close: number): number {
  let j = close + 1;
  let depth = 0;
  for (; j < tokens.length; j++) {
    const t = tokens[j]!;
    if (t.kind !== "punct") continue;
    if (depth === 0 && t.value === "{") {
      const prev = tokens[j - 1]!;
      if (j === close + 1 || !(prev.kind === "punct" && TYPE_LITERAL_PREFIX.has(prev.value))) {
        return j;
      }
      j = matchingClose(tokens, j);
      if (j < 0) return -1;
      continue;
    }
    if (["(", "[", "<"].includes(t.value)) depth++;
    else if ([")", "]", ">"].includes(t.value)) depth--;
    else if (depth === 0 && [";", "=>", "="].includes(t.value)) return -1;
    else if (depth === 0 && t.value === "}") return -1;
  }
  return -1;
}

function isExported(tokens: Token[], at: number): boolean {
  for (let j = at - 1; j >= 0 && j >= at - 4; j--) {
    const v = tokens[j]!.value;
    if (v === "export") return true;
    if (!["async", "default", "const", "let", "function", "*"].includes(v)) return false;
  }
  return false;
}

function collectFunctions(tokens: Token[]): FunctionInfo[] {
  const found: FunctionInfo[] = [];
  const add: AddFunction = (name, headerAt, open, body, exported) => {
    const close = matchingClose(tokens, open);
    const bodyOpen = body ?? (close < 0 ? -1 : bodyStart(tokens, close));
    if (close < 0 || bodyOpen < 0) return;
    const end = matchingClose(tokens, bodyOpen);
    if (end < 0) return;
    const line = tokens[headerAt]!.line;
    found.push({
      name,
      line,
      lines: tokens[end]!.line - line + 1,
      exported,
      params: splitParams(tokens, open, close),
    });
  };
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.kind === "name" && t.value === "function") {
      let j = i + 1;
      if (tokens[j]?.value === "*") j++;
      let name = "(anonymous function)";
      if (tokens[j]?.kind === "name") name = tokens[j++]!.value;
      if (tokens[j]?.value === "<") j = skipAngles(tokens, j);
      if (tokens[j]?.value === "(") add(name, i, j, null, isExported(tokens, i));
    } else if (t.kind === "punct" && t.value === "=>") {
      arrow(tokens, i, add);
    } else if (
      t.kind === "name" && tokens[i + 1]?.value === "(" && !NOT_METHOD_NAMES.has(t.value) &&
      ["{", "}", ";", ","].includes(tokens[i - 1]?.value ?? "") &&
      tokens[i - 1]?.kind === "punct"
    ) {
      add(t.value, i, i + 1, null, false); // a method shorthand
    }
  }
  return found;
}

function skipAngles(tokens: Token[], open: number): number {
  let depth = 0;
  for (let j = open; j < tokens.length; j++) {
    if (tokens[j]!.value === "<") depth++;
    else if (tokens[j]!.value === ">" && --depth === 0) return j + 1;
  }
  return tokens.length;
}

function arrow(tokens: Token[], at: number, add: AddFunction): void {
  if (tokens[at + 1]?.value !== "{" || tokens[at - 1]?.value !== ")") return;
  let depth = 0;
  let open = -1;
  for (let j = at - 1; j >= 0; j--) {
    const v = tokens[j]!;
    if (v.kind !== "punct") continue;
    if (v.value === ")") depth++;
    else if (v.value === "(" && --depth === 0) {
      open = j;
      break;
    }
  }
  if (open < 0) return;
  let k = open - 1;
  if (tokens[k]?.value === "async") k--;
  const named = tokens[k]?.value === "=" && tokens[k - 1]?.kind === "name";
  const name = named ? tokens[k - 1]!.value : "(arrow function)";
  add(name, named ? k - 1 : open, open, at + 1, named && isExported(tokens, k - 1));
}

function positionalCount(params: Token[][]): number {
  const last = params.at(-1);
  if (last === undefined) return 0;
  const lastIsOptions = last[0]!.value === "{" ||
    OPTIONS_NAME_REGEXP.test(last[0]!.value) ||
    last.some((t) => t.kind === "name" && t.value.endsWith("Options"));
  return lastIsOptions ? params.length - 1 : params.length;
}

/** Advisory size findings for one file, as `path: message` lines. */
export function sizeReport(
  { path, text: source, tokens }: { path: string; text: string; tokens: Token[] },
): string[] {
  const lines: string[] = [];
  const lineCount = source.split("\n").length - (source.endsWith("\n") ? 1 : 0);
  if (lineCount > FILE_LINES) {
    const advice = lineCount > FILE_LINES_HARD ? "look again (> 500)" : "aim for ≤ 300";
    lines.push(`${path}: file has ${lineCount} lines; ${advice}`);
  }
  for (const fn of collectFunctions(tokens)) {
    if (fn.lines > FUNCTION_LINES) {
      const advice = fn.lines > FUNCTION_LINES_HARD
        ? "past 80, a comment should say why"
        : "aim for ≤ 40";
      lines.push(`${path}: line ${fn.line}: ${fn.name}() has ${fn.lines} lines; ${advice}`);
    }
    const positional = positionalCount(fn.params);
    if (fn.exported && positional > MAX_POSITIONAL) {
      lines.push(
        `${path}: line ${fn.line}: exported ${fn.name}() takes ${positional} positional parameters; at most 2 plus an options object`,
      );
    }
  }
  return lines;
}
