/** Eval discovery: entry files, dataset expansion and IDs (authoring.md §1.3). */
import { API_FORMAT_VERSION, readBrand } from "../_shared/mod.ts";
import { describe, isPlainObject } from "../_shared/mod.ts";
import type { EvalDefinition, SandboxLayer } from "./definitions.ts";
import { evalShapeProblem } from "./_revalidate.ts";
import { madeHere } from "./definitions.ts";
import { compareCodeUnits, type DiscoveryIssue, importIssue, unreadableExport } from "./issues.ts";
import type { WalkedFile } from "./walk.ts";
import type { ModuleLoader } from "../loader/mod.ts";

/** Loads a user module and returns its namespace (with `loadAll` for one module graph). */
export type { ModuleLoader } from "../loader/mod.ts";

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
  /** The sandbox layer of the eval's group, set after group discovery. */
  groupSandbox?: SandboxLayer;
}

const ENTRY_SUFFIX = ".eval.ts";
const GROUP_FILE = "eval-group.ts";
const UNSUPPORTED_ENTRY_REGEXP = /(^|\/)(eval\.ts|eval\.tsx|[^/]*\.eval\.tsx)$/;

/** Splits walked `evals/` files into entry files, group files and unsupported entries. */
export function classifyEvalFiles(
  files: readonly WalkedFile[],
  issues: DiscoveryIssue[],
): { entries: WalkedFile[]; groups: WalkedFile[] } {
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
  const found: Found[] = [];
  for (const file of entries) {
    let mod: Record<string, unknown>;
    try {
      mod = await load(file.path);
    } catch (error) {
      issues.push(importIssue(file, error));
      continue;
    }
    const base = file.relative.slice("evals/".length, -ENTRY_SUFFIX.length);
    try {
      for (const item of expandExport(base, file.relative, mod, issues)) found.push(item);
    } catch (error) {
      // A Proxy with throwing traps, a throwing getter or a revoked Proxy in the export.
      issues.push(unreadableExport(file.relative, error));
    }
  }
  const kept = dropDuplicates(found, issues);
  kept.forEach((item, index) => item.index = index);
  return kept;
}

/** A discovered eval before its discovery index is known (set once duplicates are dropped). */
type Found = { -readonly [K in keyof DiscoveredEval]: DiscoveredEval[K] };

function foundEval(id: string, definition: unknown, file: string): Found {
  return { id, definition: definition as EvalDefinition, file, index: -1 };
}

function expandExport(
  base: string,
  file: string,
  mod: Record<string, unknown>,
  issues: DiscoveryIssue[],
): Found[] {
  const value = mod.default;
  const bad = (message: string, hint = EXPORT_HINT) => {
    issues.push({ file, code: "discovery.invalid-export", level: "error", message, hint });
    return [];
  };
  if (!("default" in mod)) return bad("the entry file has no default export");
  if (readBrand(value) !== undefined || !isDataset(value)) {
    const problem = evalProblem(value);
    if (problem !== undefined) return bad(`the default export is ${problem.message}`, problem.hint);
    return [foundEval(base, value, file)];
  }
  const rows: [string, unknown][] = Array.isArray(value)
    ? Array.from(value, (item, i) => [String(i), item])
    : Object.keys(value).sort(compareCodeUnits).map((key) => [key, value[key]]);
  if (rows.length === 0) return emptyDataset(file, issues);
  for (const [key, item] of rows) {
    const problem = evalProblem(item);
    const where = Array.isArray(value)
      ? `item [${key}] of the exported array`
      : `key ${JSON.stringify(key)} of the exported record`;
    if (problem !== undefined) return bad(`${where} is ${problem.message}`, problem.hint);
  }
  if (Array.isArray(value)) {
    return rows.map(([key, definition]) =>
      foundEval(`${base}/${Number(key) < 10_000 ? key.padStart(4, "0") : key}`, definition, file)
    );
  }
  const badKey = rows.find(([key]) => !validDatasetKey(key))?.[0];
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
  return rows.map(([key, definition]) => foundEval(`${base}/${key}`, definition, file));
}

const EXPORT_HINT = "export default defineEval({...}), an array of them, or a keyed record of them";

/** An array, or a plain object that is neither a definition nor an eval look-alike. */
function isDataset(value: unknown): value is unknown[] | Record<string, unknown> {
  return Array.isArray(value) || (isPlainObject(value) && typeof value.test !== "function");
}

/** Why `value` is not a current eval definition, or undefined when it is one. */
function evalProblem(value: unknown): { message: string; hint: string } | undefined {
  if (madeHere(value)) return undefined;
  const found = readBrand(value);
  if (found?.kind === "eval" && found.version === API_FORMAT_VERSION) {
    const problem = evalShapeProblem(value as object);
    if (problem === undefined) return undefined;
    return {
      message: `an invalid eval definition: ${problem}`,
      hint: "export default defineEval({...}) or defineScoreEval({...})",
    };
  }
  if (found?.kind === "eval") {
    return {
      message:
        `an eval made by an API of format version ${found.version}; this niceeval reads version ${API_FORMAT_VERSION}`,
      hint: `map "niceeval" to the running niceeval's version (API format ${API_FORMAT_VERSION})`,
    };
  }
  if (found !== undefined) {
    return {
      message: `${found.kind === "experiment" || found.kind === "eval-group" ? "an" : "a"} ${
        found.kind.replace("-", " ")
      } definition, not an eval`,
      hint: "export default defineEval({...}) or defineScoreEval({...})",
    };
  }
  if (isPlainObject(value) && typeof value.test === "function") {
    return {
      message: "an unbranded object that looks like an eval",
      hint: "create evals with defineEval({...}) or defineScoreEval({...}) from niceeval",
    };
  }
  return { message: `not an eval definition (got ${describe(value)})`, hint: EXPORT_HINT };
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
  found: T[],
  issues: DiscoveryIssue[],
): T[] {
  const first = new Map<string, T>();
  const duplicates = new Map<string, T[]>();
  for (const item of found) {
    const earlier = first.get(item.id);
    if (earlier === undefined) first.set(item.id, item);
    else {
      const list = duplicates.get(item.id);
      if (list) list.push(item);
      else duplicates.set(item.id, [earlier, item]);
    }
  }
  if (duplicates.size === 0) return found;
  const reported = new Set<string>();
  for (const { id } of found) {
    const items = duplicates.get(id);
    if (items === undefined || reported.has(id)) continue;
    reported.add(id);
    const files = [...new Set(items.map((i) => i.file))];
    for (const file of files) {
      issues.push({
        file,
        code: "discovery.duplicate-id",
        level: "error",
        message: `eval ID "${id}" is produced by ${files.join(" and ")}`,
        hint: "rename a file or a dataset key so that every eval ID is unique",
      });
    }
  }
  return found.filter((item) => !duplicates.has(item.id));
}
