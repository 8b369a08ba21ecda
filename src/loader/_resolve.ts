/**
 * Specifier resolution of the embedded loader (toolchain.md §8.7): API names, runtime built-ins,
 * files, bare names through the generated import map, then `<root>/node_modules` by Node's rules.
 */
import { readFile, realpath, stat } from "node:fs/promises";
import { isBuiltin } from "node:module";
import { dirname, extname, isAbsolute, join, relative, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { API_NAMES, type ApiName } from "./api.ts";
import type { ImportMap } from "./import_map.ts";

/** Where a specifier leads. */
export type Target =
  | { readonly kind: "api"; readonly name: ApiName }
  | { readonly kind: "builtin"; readonly name: string }
  | { readonly kind: "file"; readonly path: string };

/** Extensions of user files the loader runs. */
const USER_EXTENSIONS = [".ts", ".tsx", ".mts", ".js", ".mjs", ".jsx", ".json"];
/** Extensions of package files (JavaScript and JSON packages only). */
const PACKAGE_EXTENSIONS = [".js", ".mjs", ".cjs", ".json"];
/** Extensions tried, in order, for an extensionless path inside a package (Node's rules). */
const PACKAGE_PROBES = ["", ".js", ".json", "/index.js", "/index.json"];
/** Conditions of a package's `exports`, in order of preference. */
const CONDITIONS = ["import", "require", "default"];
const SCHEME_REGEXP = /^[a-z][a-z0-9+.-]*:/i;

/** A specifier that cannot be resolved; the message says why, without the file. */
export class UnresolvedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UnresolvedError";
  }
}

/** Resolves specifiers of user and package files for one project. */
export class Resolver {
  readonly #root: string;
  readonly #map: ImportMap;

  constructor(root: string, map: ImportMap) {
    this.#root = root;
    this.#map = map;
  }

  /** Resolves `specifier` imported by the file at `importer`; throws {@link UnresolvedError}. */
  async resolve(specifier: string, importer: string): Promise<Target> {
    if ((API_NAMES as readonly string[]).includes(specifier)) {
      return { kind: "api", name: specifier as ApiName };
    }
    if (specifier.startsWith("node:")) {
      if (!isBuiltin(specifier)) throw new UnresolvedError("no such runtime built-in module");
      return { kind: "builtin", name: specifier };
    }
    const inPackage = this.#inPackage(importer);
    if (isPathLike(specifier)) {
      const path = specifier.startsWith("file:")
        ? fileURLToPath(specifier)
        : isAbsolute(specifier)
        ? specifier
        : join(dirname(importer), specifier);
      return { kind: "file", path: await this.#file(path, inPackage) };
    }
    if (SCHEME_REGEXP.test(specifier)) {
      throw new UnresolvedError(
        `${specifier.split(":")[0]}: specifiers are not supported (nothing is downloaded)`,
      );
    }
    if (inPackage && isBuiltin(specifier)) return { kind: "builtin", name: `node:${specifier}` };
    const mapped = this.#mapped(specifier, importer);
    if (mapped !== undefined && mapped.startsWith("file:")) {
      return { kind: "file", path: await this.#file(fileURLToPath(mapped), false) };
    }
    return { kind: "file", path: await this.#package(specifier, importer) };
  }

  /** The import-map target of a bare specifier: the importer's scopes first, then `imports`. */
  #mapped(specifier: string, importer: string): string | undefined {
    const url = pathToFileURL(importer).href;
    const scopes = Object.keys(this.#map.scopes)
      .filter((scope) => url.startsWith(scope))
      .sort((a, b) => b.length - a.length);
    for (const scope of scopes) {
      const found = matchEntries(this.#map.scopes[scope]!, specifier);
      if (found !== undefined) return found;
    }
    return matchEntries(this.#map.imports, specifier);
  }

  /** A path as messages show it: project-relative inside the root. */
  #display(path: string): string {
    const rel = relative(this.#root, path);
    return rel.startsWith("..") || isAbsolute(rel) ? path : rel.split(sep).join("/");
  }

  /** True when `path` lies in a `node_modules` directory of the project. */
  #inPackage(path: string): boolean {
    return relative(this.#root, path).split(sep).includes("node_modules");
  }

  /** The file `path` names, checked for existence and a supported extension. */
  async #file(path: string, inPackage: boolean): Promise<string> {
    if (inPackage) {
      for (const probe of PACKAGE_PROBES) {
        const candidate = path + probe;
        // One module per file: package managers link packages into node_modules.
        if (await isFile(candidate)) {
          return this.#checked(await realpath(candidate), PACKAGE_EXTENSIONS);
        }
      }
      throw new UnresolvedError(`file not found: ${this.#display(path)}`);
    }
    if (!(await isFile(path))) throw new UnresolvedError(`file not found: ${this.#display(path)}`);
    return this.#checked(path, USER_EXTENSIONS);
  }

  #checked(path: string, extensions: readonly string[]): string {
    const ext = extname(path);
    if (ext === ".node") throw new UnresolvedError("native addons are not supported");
    if (!extensions.includes(ext)) {
      throw new UnresolvedError(
        `unsupported file type "${ext}" (supported: ${extensions.join(" ")})`,
      );
    }
    return path;
  }

  /** A bare name from the `node_modules` directories between the importer and the root. */
  async #package(specifier: string, importer: string): Promise<string> {
    const { name, subpath } = splitPackage(specifier);
    for (const dir of this.#ancestors(dirname(importer))) {
      const packageDir = join(dir, "node_modules", name);
      const manifest = await readManifest(packageDir);
      if (manifest === undefined) continue;
      const entry = packageEntry(manifest, subpath);
      if (entry === undefined) {
        throw new UnresolvedError(`package "${name}" exports no "${subpath}"`);
      }
      return await this.#file(join(packageDir, entry), true);
    }
    throw new UnresolvedError(
      "not in the project's import map and not installed in node_modules",
    );
  }

  /** `dir` and its ancestors, up to and including the project root. */
  #ancestors(dir: string): string[] {
    const dirs: string[] = [];
    let current = dir;
    for (;;) {
      const rel = relative(this.#root, current);
      if (rel.startsWith("..") || isAbsolute(rel)) break;
      dirs.push(current);
      if (rel === "") break;
      current = dirname(current);
    }
    return dirs;
  }
}

function isPathLike(specifier: string): boolean {
  return specifier.startsWith("./") || specifier.startsWith("../") ||
    specifier.startsWith("/") || specifier.startsWith("file:") || isAbsolute(specifier);
}

/** Import-map matching: an exact key, else the longest key ending in `/` that prefixes it. */
function matchEntries(
  entries: Readonly<Record<string, string>>,
  specifier: string,
): string | undefined {
  if (Object.hasOwn(entries, specifier)) return entries[specifier];
  let best: string | undefined;
  for (const key of Object.keys(entries)) {
    if (key.endsWith("/") && specifier.startsWith(key) && key.length > (best?.length ?? 0)) {
      best = key;
    }
  }
  if (best === undefined) return undefined;
  const target = entries[best]!;
  return target.endsWith("/") ? target + specifier.slice(best.length) : undefined;
}

function splitPackage(specifier: string): { name: string; subpath: string } {
  const parts = specifier.split("/");
  const count = specifier.startsWith("@") ? 2 : 1;
  const name = parts.slice(0, count).join("/");
  const rest = parts.slice(count).join("/");
  return { name, subpath: rest === "" ? "." : `./${rest}` };
}

type Manifest = Record<string, unknown>;

async function readManifest(dir: string): Promise<Manifest | undefined> {
  let text: string;
  try {
    text = await readFile(join(dir, "package.json"), "utf8");
  } catch {
    return undefined;
  }
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null ? value as Manifest : {};
  } catch (error) {
    throw new UnresolvedError(
      `invalid package.json in ${dir}: ${error instanceof Error ? error.message : error}`,
    );
  }
}

/** The package-relative entry of `subpath` (`"."` for the package itself), by Node's rules. */
function packageEntry(manifest: Manifest, subpath: string): string | undefined {
  const exports = manifest.exports;
  if (exports !== undefined && exports !== null) {
    const table = typeof exports === "string" || Array.isArray(exports) ||
        !Object.keys(exports).some((key) => key.startsWith("."))
      ? { ".": exports }
      : exports as Record<string, unknown>;
    if (Object.hasOwn(table, subpath)) return conditionTarget(table[subpath]);
    for (const [key, value] of Object.entries(table)) {
      const star = key.indexOf("*");
      if (star < 0) continue;
      const prefix = key.slice(0, star);
      const suffix = key.slice(star + 1);
      if (subpath.startsWith(prefix) && subpath.endsWith(suffix)) {
        const middle = subpath.slice(prefix.length, subpath.length - suffix.length);
        return conditionTarget(value)?.replaceAll("*", middle);
      }
    }
    return undefined;
  }
  if (subpath !== ".") return subpath;
  return typeof manifest.main === "string" ? manifest.main : "index.js";
}

function conditionTarget(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = conditionTarget(item);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const conditions = value as Record<string, unknown>;
  for (const condition of CONDITIONS) {
    if (Object.hasOwn(conditions, condition)) {
      const found = conditionTarget(conditions[condition]);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}
