/** Eval discovery: entry files, dataset expansion and IDs (authoring.md §1.3). */
import { isBranded, readBrand } from "../_shared/mod.ts";
import { isPlainObject } from "../_shared/mod.ts";
import type { EvalDefinition } from "./definitions.ts";
import { compareCodeUnits, type DiscoveryIssue, importIssue } from "./issues.ts";
import type { WalkedFile } from "./walk.ts";

/** Loads a user module and returns its namespace. */
export type ModuleLoader = (path: string) => Promise<Record<string, unknown>>;

/** One discovered eval. */
export interface DiscoveredEval {
  readonly id: string;
  /** Position in discovery order, from 0. */
  readonly index: number;
  /** Project-relative entry file. */
  readonly file: string;
  readonly definition: EvalDefinition;
  /** Set after group discovery. */
  groupId?: string;
}

const ENTRY_SUFFIX = ".eval.ts";
const GROUP_FILE = "eval-group.ts";
const UNSUPPORTED_ENTRY_REGEXP = /(^|\/)(eval\.ts|eval\.tsx|[^/]*\.eval\.tsx)$/;

/** Splits walked `evals/` files into entry files, group files and unsupported entries. */
export function classifyEvalFiles(files: readonly WalkedFile[], issues: DiscoveryIssue[]) {
  const entries: WalkedFile[] = [];
  const groups: WalkedFile[] = [];
  for (const file of files) {
    const name = file.relative.slice(file.relative.lastIndexOf("/") + 1);
    if (name === GROUP_FILE) groups.push(file);
    else if (UNSUPPORTED_ENTRY_REGEXP.test(file.relative)) {
      issues.push({
        file: file.relative,
        code: "discovery.unsupported-entry",
        level: "error",
        message: `${name} entries are not supported in this release`,
        hint: `rename it to <name>${ENTRY_SUFFIX}`,
      });
    } else if (name.endsWith(ENTRY_SUFFIX)) entries.push(file);
  }
  return { entries, groups };
}

/**
 * Imports entry files in code-unit order and expands each default export into evals, with
 * duplicate IDs reported on every file that produced them.
 */
export async function discoverEvals(
  entries: readonly WalkedFile[],
  load: ModuleLoader,
  issues: DiscoveryIssue[],
): Promise<DiscoveredEval[]> {
  const found: { id: string; file: string; definition: EvalDefinition }[] = [];
  for (const file of entries) {
    let mod: Record<string, unknown>;
    try {
      mod = await load(file.path);
    } catch (error) {
      issues.push(importIssue(file.relative, error));
      continue;
    }
    const base = file.relative.slice("evals/".length, -ENTRY_SUFFIX.length);
    for (const item of expandExport(base, file.relative, mod, issues)) {
      found.push({ ...item, file: file.relative });
    }
  }
  return dropDuplicates(found, issues).map((item, index) => ({ ...item, index }));
}

function expandExport(
  base: string,
  file: string,
  mod: Record<string, unknown>,
  issues: DiscoveryIssue[],
): { id: string; definition: EvalDefinition }[] {
  const value = mod.default;
  const bad = (message: string) => {
    issues.push({
      file,
      code: "discovery.invalid-export",
      level: "error",
      message,
      hint: "export default defineEval({...}), an array of them, or a keyed record of them",
    });
    return [];
  };
  if (!("default" in mod)) return bad("the entry file has no default export");
  if (readBrand(value) !== undefined) {
    return isEval(value, file, issues) ? [{ id: base, definition: value as EvalDefinition }] : [];
  }
  if (Array.isArray(value)) {
    if (value.length === 0) return emptyDataset(file, issues);
    if (!value.every((item) => isBranded(item, "eval"))) {
      return bad("the exported array contains a value that is not an eval definition");
    }
    return value.map((definition, i) => ({
      id: `${base}/${i < 10_000 ? String(i).padStart(4, "0") : String(i)}`,
      definition: definition as EvalDefinition,
    }));
  }
  if (isPlainObject(value)) {
    const keys = Object.keys(value).sort(compareCodeUnits);
    if (keys.length === 0) return emptyDataset(file, issues);
    if (!keys.every((key) => isBranded(value[key], "eval"))) {
      return bad("the exported record contains a value that is not an eval definition");
    }
    const badKey = keys.find((key) => !validDatasetKey(key));
    if (badKey !== undefined) {
      issues.push({
        file,
        code: "discovery.invalid-dataset-key",
        level: "error",
        message: `dataset key ${JSON.stringify(badKey)} must be a single non-empty path segment`,
        hint: "use keys without /, \\, control characters, and not . or ..",
      });
      return [];
    }
    return keys.map((key) => ({ id: `${base}/${key}`, definition: value[key] as EvalDefinition }));
  }
  return bad("the default export is not an eval definition");
}

function isEval(value: unknown, file: string, issues: DiscoveryIssue[]): boolean {
  const found = readBrand(value);
  if (found?.kind === "eval" && found.version === 1) return true;
  issues.push({
    file,
    code: "discovery.invalid-export",
    level: "error",
    message: found?.kind === "eval"
      ? `the eval was made by an API of format version ${found.version}; this niceeval reads version 1`
      : `the default export is a ${found?.kind ?? "value"} definition, not an eval`,
    hint: found?.kind === "eval"
      ? "use the niceeval version that matches the project's API mapping (format 1)"
      : "export default defineEval({...}) or defineScoreEval({...})",
  });
  return false;
}

function emptyDataset(file: string, issues: DiscoveryIssue[]): [] {
  issues.push({
    file,
    code: "discovery.empty-dataset",
    level: "warning",
    message: "the exported dataset is empty; it yields no eval",
  });
  return [];
}

function validDatasetKey(key: string): boolean {
  // deno-lint-ignore no-control-regex
  return key !== "." && key !== ".." && key.length > 0 && !/[/\\\u0000-\u001f\u007f]/.test(key);
}

function dropDuplicates<T extends { id: string; file: string }>(
  found: readonly T[],
  issues: DiscoveryIssue[],
): T[] {
  const byId = new Map<string, T[]>();
  for (const item of found) byId.set(item.id, [...(byId.get(item.id) ?? []), item]);
  const duplicated = new Set<string>();
  for (const [id, items] of byId) {
    if (items.length < 2) continue;
    duplicated.add(id);
    for (const file of new Set(items.map((item) => item.file))) {
      issues.push({
        file,
        code: "discovery.duplicate-id",
        level: "error",
        message: `eval ID "${id}" is produced by ${
          [...new Set(items.map((i) => i.file))].join(" and ")
        }`,
        hint: "rename a file or a dataset key so that every eval ID is unique",
      });
    }
  }
  return found.filter((item) => !duplicated.has(item.id));
}
