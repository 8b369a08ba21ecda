/**
 * One-line descriptions of errors thrown while loading a user module: syntax errors, unresolved
 * imports and exceptions at import time (authoring.md §1.6, cli.md ERR-5).
 */
import { isAbsolute, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { errorMessage } from "../_shared/mod.ts";

// deno-lint-ignore no-control-regex
const ANSI_REGEXP = /\u001b\[[0-9;]*m/g;
const FILE_URL_REGEXP = /file:\/\/[^\s"'`()]+/g;
const LOCATION_REGEXP = /^at (?:async )?\(?(file:\/\/\S+?:\d+:\d+)\)?$/;

/**
 * Describes a load error in one line: the first line of its message, file URLs shown as paths
 * relative to `root`, and the first source location inside `root` (`at <file>:<line>:<column>`)
 * when one is known.
 */
export function describeLoadError(error: unknown, root: string): string {
  try {
    return describe(error, root);
  } catch {
    // The module threw a value whose reading throws (a Proxy with throwing traps).
    return errorMessage(error);
  }
}

function describe(error: unknown, root: string): string {
  const lines = errorMessage(error).replace(ANSI_REGEXP, "").split("\n").map((l) => l.trim());
  const first = lines.find((line) => line !== "") ?? "unknown error";
  const stack = error instanceof Error ? (error.stack ?? "").replace(ANSI_REGEXP, "") : "";
  // The first source location inside the project: niceeval's own frames would only mislead.
  const location = [...lines, ...stack.split("\n").map((l) => l.trim())]
    .map((line) => LOCATION_REGEXP.exec(line)?.[1])
    .find((found) => found !== undefined && !isAbsolute(displayPath(found, root)));
  const text = location === undefined ? first : `${first.replace(/\.$/, "")} (at ${location})`;
  return text.replace(FILE_URL_REGEXP, (url) => displayPath(url, root));
}

function displayPath(url: string, root: string): string {
  let path: string;
  try {
    path = fileURLToPath(url);
  } catch {
    return url;
  }
  const rel = relative(root, path);
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) return path;
  return rel.split(sep).join("/");
}
