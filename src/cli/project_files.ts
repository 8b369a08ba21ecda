/**
 * The two project files `niceeval init` keeps in step with the running niceeval
 * (docs/install.md): `deno.json`, whose import map points `niceeval*` at the running copy so that
 * editors and `deno check` type user files, and `.gitignore`, which keeps the Record out of
 * version control. Pure: `init.ts` reads and writes the files.
 */
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { isPlainObject } from "../_shared/mod.ts";
import { API_NAMES, type ApiName, type ApiUrls } from "../loader/mod.ts";

/** The JSR package that every typed project maps `niceeval*` to. */
const JSR_PACKAGE = "@niceeval/cli";
/** The entry URL of a JSR install: `https://jsr.io/@niceeval/cli/<version>/mod.ts`. */
const JSR_ENTRY_REGEXP = /^https:\/\/jsr\.io\/@niceeval\/cli\/([^/]+)\//;
/** An entry inside an installed npm package `niceeval`, also in nested layouts. */
const NPM_ENTRY_REGEXP = /\/node_modules\/niceeval\//;
/** The line `.gitignore` gets, and the spellings that already ignore the same directory. */
const RECORD_IGNORE = ".niceeval/";
const RECORD_IGNORE_SPELLINGS: ReadonlySet<string> = new Set([
  ".niceeval",
  ".niceeval/",
  "/.niceeval",
  "/.niceeval/",
]);

/** Where the running niceeval comes from, as its entry URLs tell. */
export type NiceevalSource =
  /** A `file:` entry outside `node_modules`: a clone, or a compiled binary's virtual files. */
  | { readonly kind: "files"; readonly dir: string }
  | { readonly kind: "jsr"; readonly version: string }
  | { readonly kind: "npm" }
  /** No entry URLs (in-process tests), or URLs of no known shape. */
  | { readonly kind: "unknown"; readonly url: string | undefined };

/** The `deno.json` entries that point `niceeval*` at the running niceeval. */
export interface DenoConfigEntries {
  readonly imports: Readonly<Record<ApiName, string>>;
  /** Local packages Deno links by their `deno.json` name and version (a clone). */
  readonly links?: readonly string[];
}

/** What to do with the project's Deno configuration file. */
export type DenoConfigChange =
  | { readonly kind: "create"; readonly text: string }
  | { readonly kind: "update"; readonly text: string; readonly notes: readonly string[] }
  | { readonly kind: "keep"; readonly notes: readonly string[] }
  /** The file cannot be merged safely; `lines` are what the user adds by hand. */
  | { readonly kind: "manual"; readonly reason: string; readonly lines: readonly string[] };

/** Classifies the running niceeval by the URL of its `niceeval` entry. */
export function sourceOf(apiUrls: ApiUrls | undefined): NiceevalSource {
  const url = apiUrls?.niceeval;
  if (url === undefined) return { kind: "unknown", url };
  const jsr = JSR_ENTRY_REGEXP.exec(url);
  if (jsr !== null) return { kind: "jsr", version: jsr[1]! };
  if (!url.startsWith("file:")) return { kind: "unknown", url };
  if (NPM_ENTRY_REGEXP.test(url)) return { kind: "npm" };
  return { kind: "files", dir: fileURLToPath(new URL(".", url)).replace(/\/$/, "") };
}

/**
 * The entries for a clone: the JSR specifiers of its version, which Deno's `links` resolves to the
 * clone itself (with the clone's own import map for its dependencies), so nothing is downloaded.
 */
export function cloneEntries(dir: string, version: string): DenoConfigEntries {
  return { imports: jsrImports(`^${version}`), links: [dir] };
}

/** The entries for a JSR install, or a copy that is not a clone: that exact published version. */
export function jsrEntries(version: string): DenoConfigEntries {
  return { imports: jsrImports(version) };
}

function jsrImports(range: string): Record<ApiName, string> {
  const imports = {} as Record<ApiName, string>;
  for (const name of API_NAMES) {
    imports[name] = `jsr:${JSR_PACKAGE}@${range}${name.slice("niceeval".length)}`;
  }
  return imports;
}

/**
 * Merges `entries` into the text of an existing `deno.json` (or `deno.jsonc`) in `dir`, or creates
 * one when `text` is undefined. Only missing keys are added: an existing different mapping of a
 * `niceeval*` name is kept with a one-line note, and `links` gets the clone appended. A file that
 * is not plain JSON, or whose `imports`/`links` have another shape, is left untouched and the
 * result lists the lines to add by hand.
 */
export function mergeDenoConfig(
  text: string | undefined,
  entries: DenoConfigEntries,
  dir: string,
): DenoConfigChange {
  if (text === undefined) return { kind: "create", text: `${jsonText(entries, "  ")}\n` };
  const parsed = parseConfig(text);
  if (typeof parsed === "string") {
    return { kind: "manual", reason: parsed, lines: manualLines(entries) };
  }
  const { config, imports, links } = parsed;
  let changed = config.imports === undefined;
  const kept: ApiName[] = [];
  for (const name of API_NAMES) {
    if (imports[name] === undefined) {
      imports[name] = entries.imports[name];
      changed = true;
    } else if (imports[name] !== entries.imports[name]) kept.push(name);
  }
  config.imports = imports;
  // The clone is linked only when one of the imports resolves through it.
  const usesLinks = API_NAMES.some((name) => imports[name] === entries.imports[name]);
  for (const link of usesLinks ? entries.links ?? [] : []) {
    if (links.some((l) => typeof l === "string" && resolve(dir, l) === resolve(link))) continue;
    links.push(link);
    config.links = links;
    changed = true;
  }
  const notes = kept.length === 0 ? [] : [
    `kept your own mapping of ${kept.join(", ")} (this niceeval is "${entries.imports.niceeval}")`,
  ];
  if (!changed) return { kind: "keep", notes };
  return { kind: "update", text: `${jsonText(config, indentOf(text))}\n`, notes };
}

/** A parsed config with its `imports` and `links` (fresh ones when absent), or why it cannot merge. */
function parseConfig(text: string): {
  config: Record<string, unknown>;
  imports: Record<string, unknown>;
  links: unknown[];
} | string {
  let config: unknown;
  try {
    config = JSON.parse(text);
  } catch {
    return "not plain JSON"; // comments or trailing commas: only the user can edit it safely
  }
  if (!isPlainObject(config)) return "not a JSON object";
  if (config.imports === undefined && config.importMap !== undefined) {
    return "it names an import map file";
  }
  const imports = config.imports ?? {};
  if (!isPlainObject(imports)) return 'its "imports" is not an object';
  const links = config.links ?? [];
  if (!Array.isArray(links)) return 'its "links" is not a list';
  return { config, imports, links };
}

/** The text of `.gitignore` with the Record directory added, or undefined when already listed. */
export function gitignoreWithRecord(text: string | undefined): string | undefined {
  if (text === undefined) return `${RECORD_IGNORE}\n`;
  const lines = text.split(/\r?\n/).map((line) => line.trim());
  if (lines.some((line) => RECORD_IGNORE_SPELLINGS.has(line))) return undefined;
  const separator = text === "" || text.endsWith("\n") ? "" : "\n";
  return `${text}${separator}${RECORD_IGNORE}\n`;
}

/** The entries as lines to paste into a config file's top-level object. */
function manualLines(entries: DenoConfigEntries): string[] {
  const body = jsonText(entries, "  ").split("\n");
  // Without the outer braces; a comma after the last entry, since the user's file has others.
  return body.slice(1, -1).map((line, i, all) => i === all.length - 1 ? `${line},` : line);
}

function jsonText(value: unknown, indent: string): string {
  return JSON.stringify(value, null, indent);
}

/** The indentation of the first indented line, so a rewritten file keeps its style. */
function indentOf(text: string): string {
  return /\n([ \t]+)\S/.exec(text)?.[1] ?? "  ";
}
