/**
 * File and folder naming rules of STYLE.md §4 and where tests and benchmarks live
 * (toolchain.md §5.2, §5.11).
 *
 * @module
 */

import { isCode, type Problem } from "./project.ts";

const SNAKE_REGEXP = /^_?[a-z0-9]+(_[a-z0-9]+)*$/;
// Folders in which every code file follows the naming rules and must be TypeScript.
const TS_ONLY_ROOTS = ["src/", "tests/", "bench/"];
// Folders whose sub-folder names are checked too.
const NAMED_FOLDER_ROOTS = ["src/", "tests/", "bench/", "scripts/", "npm/"];
// Folders written by tools, not by hand.
const TOOL_FOLDERS = new Set(["__snapshots__"]);

function baseName(path: string): string {
  const file = path.slice(path.lastIndexOf("/") + 1);
  return file.endsWith(".d.ts") ? file.slice(0, -5) : file.slice(0, file.lastIndexOf("."));
}

function isUnderPrivateFolder(path: string): boolean {
  return path.split("/").slice(0, -1).some((part) => part.startsWith("_"));
}

function folderProblem(path: string): Problem | null {
  const parts = path.slice(0, -1).split("/");
  const name = parts.at(-1)!;
  if (!NAMED_FOLDER_ROOTS.some((root) => path.startsWith(root)) || parts.length < 2) return null;
  if (TOOL_FOLDERS.has(name) || parts.some((p) => TOOL_FOLDERS.has(p))) return null;
  if (SNAKE_REGEXP.test(name)) return null;
  const what = name.includes("-") ? "kebab-case" : "not snake_case";
  return { path, message: `folder name is ${what}; use snake_case (STYLE.md §4)` };
}

function fileProblems(path: string): Problem[] {
  const problems: Problem[] = [];
  const add = (message: string) => problems.push({ path, message });
  if (path.split("/").some((p) => TOOL_FOLDERS.has(p))) return problems;
  const base = baseName(path);
  if (base === "index") add("index files are not used; entry files are mod.ts (STYLE.md §4)");
  else if (base.includes("-")) add("kebab-case file name; use snake_case (STYLE.md §4)");
  else if (!SNAKE_REGEXP.test(base)) add("file name is not snake_case (STYLE.md §4)");

  const inTsRoot = TS_ONLY_ROOTS.some((root) => path.startsWith(root));
  if (inTsRoot && !path.endsWith(".ts")) add("code here is TypeScript with the .ts extension");
  if (path.endsWith(".d.ts") && path.startsWith("src/")) {
    add("declaration files do not live in src/");
  }

  const isTest = base.endsWith("_test");
  const isBench = base.endsWith("_bench");
  const isPrivate = base.startsWith("_") || isUnderPrivateFolder(path);
  if (isTest && !path.startsWith("tests/")) add("tests live under tests/ (toolchain.md §5.2)");
  if (isBench && !path.startsWith("bench/")) {
    add("benchmarks live under bench/ (toolchain.md §5.11)");
  }
  if (path.startsWith("tests/") && !isTest && !isPrivate) {
    add(
      "files in tests/ are <name>_test.ts; helpers go in tests/_helpers/ or tests/_fakes/ or start with _ (STYLE.md §4)",
    );
  }
  if (path.startsWith("bench/") && !isBench && !isPrivate) {
    add("files in bench/ are <area>_bench.ts (STYLE.md §4)");
  }
  return problems;
}

/** Naming problems among the walked entries (files and folders ending in `/`). */
export function checkNames(entries: readonly string[]): Problem[] {
  const problems: Problem[] = [];
  for (const entry of entries) {
    if (entry.endsWith("/")) {
      const problem = folderProblem(entry);
      if (problem !== null) problems.push(problem);
    } else if (isCode(entry)) {
      problems.push(...fileProblems(entry));
    }
  }
  return problems;
}
