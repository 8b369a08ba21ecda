/**
 * Finds the module specifiers a source file imports: static imports, `export … from`, and
 * dynamic `import("literal")`, each classified as a value or a type-only import.
 *
 * @module
 */

import type { Token } from "./tokens.ts";

/** One import or re-export of a module specifier. */
export interface ImportRef {
  /** The specifier as written. */
  specifier: string;
  /** 1-based line of the `import`/`export` keyword. */
  line: number;
  /** `import type`, `export type`, or only `type`-marked names; erased at run time. */
  typeOnly: boolean;
  /** A literal dynamic `import("…")`. */
  dynamic: boolean;
  /** `export * from` (without `as`). */
  exportStar: boolean;
}

const PROMISE_METHODS = new Set(["then", "catch", "finally"]);
const SCAN_LIMIT = 2000;

function is(token: Token | undefined, kind: Token["kind"], value?: string): boolean {
  return token !== undefined && token.kind === kind &&
    (value === undefined || token.value === value);
}

/** Index of the token closing the bracket opened at `open`, or -1. */
export function matchingClose(tokens: Token[], open: number): number {
  const opener = tokens[open]!.value;
  const closer = opener === "(" ? ")" : opener === "[" ? "]" : "}";
  let depth = 0;
  for (let j = open; j < tokens.length; j++) {
    const t = tokens[j]!;
    if (t.kind !== "punct") continue;
    if (t.value === opener) depth++;
    else if (t.value === closer && --depth === 0) return j;
  }
  return -1;
}

/** True when every name in the braces `{ … }` between `open` and `close` is `type`-marked. */
function allNamesTypeOnly(tokens: Token[], open: number, close: number): boolean {
  const elements: Token[][] = [[]];
  for (let j = open + 1; j < close; j++) {
    const t = tokens[j]!;
    if (is(t, "punct", ",")) elements.push([]);
    else elements.at(-1)!.push(t);
  }
  const names = elements.filter((e) => e.length > 0);
  if (names.length === 0) return false;
  // `type A` and `type A as B` are type-only; `type as x` imports a binding named `type`.
  return names.every((e) => is(e[0], "name", "type") && (e.length === 2 || e.length === 4));
}

/** Finds `from "<specifier>"` at brace depth 0 after `from`; returns the string token index. */
function findFromString(tokens: Token[], from: number): number {
  let depth = 0;
  for (let j = from; j < tokens.length && j < from + SCAN_LIMIT; j++) {
    const t = tokens[j]!;
    if (t.kind === "punct") {
      if (t.value === "{") depth++;
      else if (t.value === "}") depth--;
      else if (t.value === ";" || t.value === "(" || t.value === "=") return -1;
      continue;
    }
    if (depth === 0 && is(t, "name", "from") && is(tokens[j + 1], "string")) return j + 1;
  }
  return -1;
}

function staticImport(tokens: Token[], i: number): ImportRef | null {
  const keyword = tokens[i]!;
  const next = tokens[i + 1];
  if (is(next, "string")) {
    return {
      specifier: next!.value,
      line: keyword.line,
      typeOnly: false,
      dynamic: false,
      exportStar: false,
    };
  }
  const at = findFromString(tokens, i + 1);
  if (at < 0) return null;
  let typeOnly = false;
  if (
    is(next, "name", "type") && !is(tokens[i + 2], "name", "from") &&
    !is(tokens[i + 2], "punct", ",")
  ) {
    typeOnly = true;
  } else if (is(next, "punct", "{")) {
    const close = matchingClose(tokens, i + 1);
    typeOnly = close === at - 2 && allNamesTypeOnly(tokens, i + 1, close);
  }
  return {
    specifier: tokens[at]!.value,
    line: keyword.line,
    typeOnly,
    dynamic: false,
    exportStar: false,
  };
}

function dynamicImport(tokens: Token[], i: number): ImportRef | null {
  const arg = tokens[i + 2];
  const after = tokens[i + 3];
  if (!is(arg, "string") || !(is(after, "punct", ")") || is(after, "punct", ","))) return null;
  const close = matchingClose(tokens, i + 1);
  const member = close < 0 ? undefined : tokens[close + 1];
  const memberName = close < 0 ? undefined : tokens[close + 2];
  // `typeof import("x")` and `import("x").Type` are type positions.
  const typeOnly = is(tokens[i - 1], "name", "typeof") ||
    (is(member, "punct", ".") && memberName !== undefined &&
      !PROMISE_METHODS.has(memberName.value));
  return {
    specifier: arg!.value,
    line: tokens[i]!.line,
    typeOnly,
    dynamic: true,
    exportStar: false,
  };
}

function reExport(tokens: Token[], i: number): ImportRef | null {
  const keyword = tokens[i]!;
  let k = i + 1;
  const typeOnly = is(tokens[k], "name", "type") &&
    (is(tokens[k + 1], "punct", "{") || is(tokens[k + 1], "punct", "*"));
  if (typeOnly) k++;
  if (is(tokens[k], "punct", "*")) {
    const at = findFromString(tokens, k + 1);
    if (at < 0) return null;
    return {
      specifier: tokens[at]!.value,
      line: keyword.line,
      typeOnly,
      dynamic: false,
      exportStar: !is(tokens[k + 1], "name", "as"),
    };
  }
  if (!is(tokens[k], "punct", "{")) return null;
  const close = matchingClose(tokens, k);
  if (close < 0 || !is(tokens[close + 1], "name", "from") || !is(tokens[close + 2], "string")) {
    return null;
  }
  return {
    specifier: tokens[close + 2]!.value,
    line: keyword.line,
    typeOnly: typeOnly || allNamesTypeOnly(tokens, k, close),
    dynamic: false,
    exportStar: false,
  };
}

/** Lists the imports and re-exports in a token stream. */
export function findImports(tokens: Token[]): ImportRef[] {
  const refs: ImportRef[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.kind !== "name" || (t.value !== "import" && t.value !== "export")) continue;
    const prev = tokens[i - 1];
    if (is(prev, "punct", ".") || is(prev, "punct", "?.")) continue;
    let ref: ImportRef | null = null;
    if (t.value === "export") ref = reExport(tokens, i);
    else if (is(tokens[i + 1], "punct", "(")) ref = dynamicImport(tokens, i);
    else if (!is(tokens[i + 1], "punct", ".")) ref = staticImport(tokens, i);
    if (ref !== null) refs.push(ref);
  }
  return refs;
}
