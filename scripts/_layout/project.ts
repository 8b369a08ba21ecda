/**
 * Loads what check_layout inspects: the source files of a repository (fixture projects,
 * examples, tools and build outputs left out), the `deno.json` import map, and the README
 * dependency table.
 *
 * @module
 */

import { readdir, readFile } from "node:fs/promises";
import { posix } from "node:path";
import { findImports, type ImportRef } from "./imports.ts";
import { type Comment, type Token, tokenize } from "./tokens.ts";

/** A problem: the repository-relative path it concerns and what is wrong. */
export interface Problem {
  path: string;
  message: string;
}

/** A parsed source file. */
export interface SourceFile {
  /** Path relative to the root, with `/` separators. */
  path: string;
  text: string;
  tokens: Token[];
  comments: Comment[];
  imports: ImportRef[];
}

/** One row of the README dependency table. */
export interface DependencyRow {
  name: string;
  usedBy: string[];
}

/** Everything check_layout needs to know about a repository. */
export interface Project {
  root: string;
  /** Code files, sorted by path. */
  files: SourceFile[];
  /** Every file and directory seen (relative paths; directories end with `/`). */
  entries: string[];
  /** `deno.json` `imports`. */
  imports: Record<string, string>;
  /** README rows by bare name; `null` when the README has no dependency table. */
  dependencies: Map<string, DependencyRow> | null;
  problems: Problem[];
}

/** Extensions of files that check_layout parses. */
export const CODE_EXTENSIONS = [".ts", ".tsx", ".mts", ".cts", ".js", ".mjs", ".cjs", ".jsx"];

// Never walked: tools, build outputs, run output, fixture projects (deliberately odd) and examples.
const SKIPPED_DIRS = [
  "node_modules/",
  "dist/",
  "npm/dist/",
  "tests/fixtures/",
  "examples/",
];

/** True when `path` names a code file. */
export function isCode(path: string): boolean {
  return CODE_EXTENSIONS.some((ext) => path.endsWith(ext));
}

async function walk(root: string, dir: string, entries: string[]): Promise<void> {
  const items = await readdir(posix.join(root, dir), { withFileTypes: true });
  for (const item of items.sort((a, b) => a.name.localeCompare(b.name))) {
    const rel = dir === "" ? item.name : `${dir}/${item.name}`;
    if (item.name.startsWith(".")) continue; // .git, .tools, .niceeval, .ci, dotfiles
    if (item.isDirectory()) {
      if (SKIPPED_DIRS.includes(`${rel}/`)) continue;
      entries.push(`${rel}/`);
      await walk(root, rel, entries);
    } else {
      entries.push(rel);
    }
  }
}

/** Parses a README `## Dependencies` table (columns "Bare name" and "Used by"). */
export function parseDependencyTable(readme: string): Map<string, DependencyRow> | null {
  const lines = readme.split("\n");
  const heading = lines.findIndex((l) => /^##\s+Dependencies\s*$/.test(l));
  if (heading < 0) return null;
  const rows = new Map<string, DependencyRow>();
  let nameColumn = -1;
  let usedColumn = -1;
  for (let i = heading + 1; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line.startsWith("## ")) break;
    if (!line.startsWith("|")) {
      if (nameColumn >= 0 && rows.size > 0) break;
      continue;
    }
    const cells = line.slice(1, line.endsWith("|") ? -1 : undefined).split("|").map((c) =>
      c.trim()
    );
    if (nameColumn < 0) {
      nameColumn = cells.findIndex((c) => /^bare name$/i.test(c));
      usedColumn = cells.findIndex((c) => /^used by$/i.test(c));
      if (nameColumn < 0 || usedColumn < 0) return null;
      continue;
    }
    if (cells.every((c) => /^:?-+:?$/.test(c))) continue;
    const name = (cells[nameColumn] ?? "").replaceAll("`", "").trim();
    const usedBy = (cells[usedColumn] ?? "").split(",").map((c) => c.replaceAll("`", "").trim())
      .filter((c) => c !== "");
    if (name !== "") rows.set(name, { name, usedBy });
  }
  return rows;
}

/** Reads and parses the repository at `root`. */
export async function loadProject(root: string): Promise<Project> {
  const problems: Problem[] = [];
  const entries: string[] = [];
  await walk(root, "", entries);

  let imports: Record<string, string> = {};
  try {
    const config = JSON.parse(await readFile(posix.join(root, "deno.json"), "utf8")) as {
      imports?: Record<string, string>;
    };
    imports = config.imports ?? {};
  } catch (error) {
    problems.push({ path: "deno.json", message: `cannot read the import map: ${error}` });
  }

  let dependencies: Map<string, DependencyRow> | null = null;
  try {
    dependencies = parseDependencyTable(await readFile(posix.join(root, "README.md"), "utf8"));
  } catch {
    dependencies = null;
  }

  const files: SourceFile[] = [];
  for (const path of entries) {
    if (path.endsWith("/") || !isCode(path)) continue;
    const text = await readFile(posix.join(root, path), "utf8");
    const { tokens, comments } = tokenize(text);
    files.push({ path, text, tokens, comments, imports: findImports(tokens) });
  }
  return { root, files, entries, imports, dependencies, problems };
}

/** The npm-style package name of a bare specifier (`@scope/name/sub` → `@scope/name`). */
export function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
}

/** What a specifier resolves to, as far as check_layout cares. */
export type Resolved =
  | { kind: "file"; path: string }
  | { kind: "package"; name: string }
  | { kind: "self"; name: string }
  | { kind: "builtin" }
  | { kind: "other" };

const SELF_NAME_REGEXP = /^niceeval(\/|$)/;

/** Resolves `specifier` imported from the file at `from` against the import map. */
export function resolveSpecifier(
  specifier: string,
  { from, imports }: { from: string; imports: Record<string, string> },
): Resolved {
  if (specifier.startsWith("./") || specifier.startsWith("../")) {
    return { kind: "file", path: posix.normalize(posix.join(posix.dirname(from), specifier)) };
  }
  if (specifier.startsWith("node:")) return { kind: "builtin" };
  if (/^[a-z][a-z0-9+.-]*:/i.test(specifier) || specifier.startsWith("/")) return { kind: "other" };
  if (SELF_NAME_REGEXP.test(specifier)) return { kind: "self", name: specifier };
  let key: string | undefined = Object.hasOwn(imports, specifier) ? specifier : undefined;
  key ??= Object.keys(imports).filter((k) => k.endsWith("/") && specifier.startsWith(k))
    .sort((a, b) => b.length - a.length)[0];
  const pkg = packageName(specifier);
  if (key === undefined && Object.hasOwn(imports, pkg)) key = pkg;
  if (key === undefined) return { kind: "package", name: pkg };
  const target = imports[key]!;
  if (target.startsWith("./") || target.startsWith("../")) {
    const rest = specifier.slice(key.length);
    return { kind: "file", path: posix.normalize(target + rest) };
  }
  return { kind: "package", name: key.endsWith("/") ? key.slice(0, -1) : key };
}
