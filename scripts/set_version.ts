/**
 * Sets the one version of niceeval (toolchain.md §2.1) in `deno.json`,
 * `src/_shared/version.ts` and, when it exists, `npm/package.json`.
 *
 * Usage: `deno run -A scripts/set_version.ts <version> [--root <dir>]`
 *
 * Only the version text changes; the rest of each file keeps its formatting.
 *
 * @module
 */

import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** Semantic Versioning 2.0.0 (the regular expression recommended by semver.org). */
const SEMVER_REGEXP =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;
const VERSION_CONST_REGEXP = /^(export const VERSION = ")([^"]*)(";?)$/m;

/** One file the version was written to. */
export interface VersionChange {
  /** Path relative to the root. */
  path: string;
  from: string;
  to: string;
}

/** True when `version` is a valid semantic version. */
export function isSemver(version: string): boolean {
  return SEMVER_REGEXP.test(version);
}

/**
 * Finds the string value of the top-level `"version"` key of a JSON text: its offsets without
 * the quotes, or `null` when the key is absent.
 */
export function findTopLevelVersion(text: string): { start: number; end: number } | null {
  let depth = 0;
  let i = 0;
  let lastKey: string | null = null;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      const value = text.slice(i + 1, j);
      const isValue = lastKey === "version" && depth === 1;
      if (isValue) return { start: i + 1, end: j };
      const rest = text.slice(j + 1).trimStart();
      lastKey = depth === 1 && rest.startsWith(":") ? value : null;
      i = j + 1;
      continue;
    }
    if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") depth--;
    if (c !== ":" && !/\s/.test(c)) lastKey = null;
    i++;
  }
  return null;
}

async function rewriteJson(root: string, path: string, version: string): Promise<VersionChange> {
  const text = await readFile(join(root, path), "utf8");
  const at = findTopLevelVersion(text);
  if (at === null) throw new Error(`${path}: no top-level "version" field`);
  const from = text.slice(at.start, at.end);
  await writeFile(join(root, path), text.slice(0, at.start) + version + text.slice(at.end));
  return { path, from, to: version };
}

async function rewriteConstant(
  root: string,
  path: string,
  version: string,
): Promise<VersionChange> {
  const text = await readFile(join(root, path), "utf8");
  const match = VERSION_CONST_REGEXP.exec(text);
  if (match === null) throw new Error(`${path}: no line 'export const VERSION = "…";'`);
  await writeFile(
    join(root, path),
    text.replace(VERSION_CONST_REGEXP, (_all, head, _old, tail) => `${head}${version}${tail}`),
  );
  return { path, from: match[2]!, to: version };
}

async function exists(path: string): Promise<boolean> {
  try {
    await readFile(path);
    return true;
  } catch {
    return false;
  }
}

/** Writes `version` into every file that carries it; throws on an invalid version. */
export async function setVersion(root: string, version: string): Promise<VersionChange[]> {
  if (!isSemver(version)) throw new RangeError(`Invalid version "${version}": not a semver`);
  const changes = [
    await rewriteJson(root, "deno.json", version),
    await rewriteConstant(root, "src/_shared/version.ts", version),
  ];
  if (await exists(join(root, "npm/package.json"))) {
    changes.push(await rewriteJson(root, "npm/package.json", version));
  }
  return changes;
}

async function writeAll(stream: { write(p: Uint8Array): Promise<number> }, text: string) {
  let bytes = new TextEncoder().encode(text);
  while (bytes.length > 0) bytes = bytes.subarray(await stream.write(bytes));
}

async function main(args: string[]): Promise<number> {
  let root = fileURLToPath(new URL("..", import.meta.url));
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--root" && args[i + 1] !== undefined) root = args[++i]!;
    else positional.push(args[i]!);
  }
  if (positional.length !== 1) {
    await writeAll(Deno.stderr, "usage: set_version.ts <version> [--root <dir>]\n");
    return 2;
  }
  try {
    const changes = await setVersion(root, positional[0]!);
    const lines = changes.map((c) =>
      c.from === c.to ? `${c.path}: ${c.to} (unchanged)\n` : `${c.path}: ${c.from} -> ${c.to}\n`
    );
    await writeAll(Deno.stdout, lines.join(""));
    return 0;
  } catch (error) {
    await writeAll(Deno.stderr, `set_version: ${(error as Error).message}\n`);
    return 1;
  }
}

if (import.meta.main) {
  Deno.exitCode = await main(Deno.args);
}
