/**
 * The generated import map (toolchain.md §8.11–§8.13): the project's `deno.json` or `deno.jsonc`
 * imports and scopes with absolute targets, and the four `niceeval*` keys pointing at the running
 * API. Pure and free of the `Deno` global: the npm launcher bundles it for Node 20.
 */
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { API_NAMES, type ApiUrls } from "./api.ts";

/** An import map: the `imports` and `scopes` of the import-map standard. */
export interface ImportMap {
  readonly imports: Readonly<Record<string, string>>;
  readonly scopes: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

/** Inputs of {@link buildImportMap}. */
export interface BuildImportMapInput {
  /** The project root (the working directory), an absolute path. */
  readonly root: string;
  /** Returns a file's text, or undefined when it does not exist. */
  readonly readText: (absolutePath: string) => string | undefined;
  /** The URLs of the running niceeval's four public entries. */
  readonly apiUrls: ApiUrls;
}

/** The configuration files looked for in the project root, in order. */
const CONFIG_FILES = ["deno.json", "deno.jsonc"] as const;
/** Targets the import-map standard resolves against the map's own location. */
const RELATIVE_TARGET_REGEXP = /^(?:\.{0,2}\/)/;

/**
 * Builds the import map of a project: the user's `imports` and `scopes` from `<root>/deno.json`
 * (else `<root>/deno.jsonc`, or the `importMap` file named there when `imports` is absent), with
 * relative targets made absolute `file:` URLs against the file's directory, other targets kept
 * verbatim, and the four `niceeval*` keys replaced by the API URLs. Keys are sorted.
 *
 * @throws {Error} when a file is not valid JSON (comments and trailing commas allowed) or has no
 * import-map shape; the message names the file and says how to fix it.
 */
export function buildImportMap(input: BuildImportMapInput): ImportMap {
  const user = readUserMap(input.root, input.readText);
  const imports: Record<string, string> = { ...user.imports };
  for (const name of API_NAMES) imports[name] = input.apiUrls[name];
  const scopes: Record<string, Record<string, string>> = {};
  for (const [scope, entries] of Object.entries(user.scopes)) {
    const kept = Object.fromEntries(
      Object.entries(entries).filter(([key]) => !(API_NAMES as readonly string[]).includes(key)),
    );
    scopes[scope] = kept;
  }
  return sortedMap({ imports, scopes });
}

/** Stable bytes of a map: keys sorted at every level, 2-space JSON, final newline. */
export function importMapText(map: ImportMap): string {
  return `${JSON.stringify(sortedMap(map), null, 2)}\n`;
}

function sortedMap(map: ImportMap): ImportMap {
  const scopes: Record<string, Record<string, string>> = {};
  for (const key of Object.keys(map.scopes).sort()) scopes[key] = sortedRecord(map.scopes[key]!);
  return { imports: sortedRecord(map.imports), scopes };
}

function sortedRecord(record: Readonly<Record<string, string>>): Record<string, string> {
  const sorted: Record<string, string> = {};
  for (const key of Object.keys(record).sort()) sorted[key] = record[key]!;
  return sorted;
}

/** The user's map with absolute targets, or an empty one when the project has no config file. */
function readUserMap(root: string, readText: BuildImportMapInput["readText"]): ImportMap {
  for (const name of CONFIG_FILES) {
    const path = join(root, name);
    const text = readText(path);
    if (text === undefined) continue;
    const config = parseObject(text, path);
    if (config.imports === undefined && typeof config.importMap === "string") {
      return readImportMapFile(config.importMap, path, readText);
    }
    return absoluteMap(config, path);
  }
  return { imports: {}, scopes: {} };
}

function readImportMapFile(
  target: string,
  configPath: string,
  readText: BuildImportMapInput["readText"],
): ImportMap {
  const url = new URL(target, pathToFileURL(configPath));
  if (url.protocol !== "file:") {
    throw new Error(
      `Cannot read the import map "${target}" named in "${configPath}": only local files are ` +
        `supported (hint: copy the map into the project, or move its entries into "imports")`,
    );
  }
  const path = fileURLToPath(url);
  const text = readText(path);
  if (text === undefined) {
    throw new Error(
      `Cannot read the import map "${path}" named in "${configPath}": file not found ` +
        `(hint: fix "importMap" in ${configPath}, or remove it)`,
    );
  }
  return absoluteMap(parseObject(text, path), path);
}

/** Checks the import-map shape of `raw` and resolves its relative targets against `path`. */
function absoluteMap(raw: Record<string, unknown>, path: string): ImportMap {
  const base = pathToFileURL(path);
  const imports = absoluteEntries(raw.imports, base, path, "imports");
  const scopes: Record<string, Record<string, string>> = {};
  if (raw.scopes !== undefined) {
    if (!isRecord(raw.scopes)) throw shapeError(path, `"scopes" must be an object`);
    for (const [scope, entries] of Object.entries(raw.scopes)) {
      scopes[absoluteTarget(scope, base)] = absoluteEntries(
        entries,
        base,
        path,
        `scopes["${scope}"]`,
      );
    }
  }
  return { imports, scopes };
}

function absoluteEntries(
  raw: unknown,
  base: URL,
  path: string,
  where: string,
): Record<string, string> {
  if (raw === undefined) return {};
  if (!isRecord(raw)) throw shapeError(path, `"${where}" must be an object`);
  const entries: Record<string, string> = {};
  for (const [key, target] of Object.entries(raw)) {
    if (typeof target !== "string") {
      throw shapeError(path, `the target of "${key}" in "${where}" must be a string`);
    }
    entries[key] = absoluteTarget(target, base);
  }
  return entries;
}

function absoluteTarget(target: string, base: URL): string {
  return RELATIVE_TARGET_REGEXP.test(target) ? new URL(target, base).href : target;
}

function shapeError(path: string, detail: string): Error {
  return new Error(
    `Cannot read the import map in "${path}": ${detail} ` +
      `(hint: map each bare name to a path or URL string)`,
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function parseObject(text: string, path: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(stripJsonc(text));
  } catch (error) {
    throw new Error(
      `Cannot read "${path}": invalid JSON: ${error instanceof Error ? error.message : error} ` +
        `(hint: fix the syntax; comments and trailing commas are allowed)`,
      { cause: error },
    );
  }
  if (!isRecord(value)) {
    throw new Error(
      `Cannot read "${path}": the top level must be an object (hint: wrap the settings in {})`,
    );
  }
  return value;
}

/**
 * Turns JSONC into JSON: drops `//` and `/* *\/` comments and commas before `}` or `]`, outside
 * strings. Dropped characters become spaces, so JSON.parse positions still point into the file.
 */
export function stripJsonc(text: string): string {
  let out = "";
  let pendingComma = -1;
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === '"') {
      const end = stringEnd(text, i);
      out += text.slice(i, end);
      pendingComma = -1;
      i = end;
    } else if (ch === "/" && (text[i + 1] === "/" || text[i + 1] === "*")) {
      const end = commentEnd(text, i);
      out += text.slice(i, end).replace(/[^\n]/g, " ");
      i = end;
    } else {
      if (ch === ",") pendingComma = out.length;
      else if ((ch === "}" || ch === "]") && pendingComma >= 0) {
        out = `${out.slice(0, pendingComma)} ${out.slice(pendingComma + 1)}`;
        pendingComma = -1;
      } else if (!/\s/.test(ch)) pendingComma = -1;
      out += ch;
      i++;
    }
  }
  return out;
}

/** The index after the string literal that starts at `start` (or the end of an open string). */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length) {
    if (text[i] === "\\") i += 2;
    else if (text[i] === '"') return i + 1;
    else i++;
  }
  return text.length;
}

/** The index after the comment that starts at `start` (the newline of a line comment stays). */
function commentEnd(text: string, start: number): number {
  if (text[start + 1] === "/") {
    const nl = text.indexOf("\n", start);
    return nl < 0 ? text.length : nl;
  }
  const close = text.indexOf("*/", start + 2);
  return close < 0 ? text.length : close + 2;
}
