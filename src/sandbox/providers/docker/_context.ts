/**
 * The build context of a Dockerfile layer (sandboxes.md rule 62): the files of the context
 * directory after `.dockerignore` filtering, in sorted order, with their modes and bytes. The same
 * list feeds the build key and the tar sent to the daemon, so the daemon builds exactly what the
 * key hashed.
 */
import { join } from "node:path";
import { globBody } from "../../ignore.ts";

/** One entry of a build context; paths are POSIX, relative to the context directory. */
export interface ContextEntry {
  readonly path: string;
  readonly type: "file" | "directory" | "symlink";
  /** Permission bits (`mode & 0o7777`). */
  readonly mode: number;
  /** File bytes; empty for directories. */
  readonly bytes: Uint8Array;
  /** Target of a symlink. */
  readonly linkname?: string;
}

/** A compiled `.dockerignore` pattern. */
interface IgnoreRule {
  readonly regexp: RegExp;
  readonly negate: boolean;
}

/**
 * Reads the context directory `root`, leaving out what `.dockerignore` excludes. The Dockerfile
 * (`dockerfilePath`) and `.dockerignore` are always kept, as the daemon needs them.
 */
export async function readBuildContext(
  root: string,
  dockerfilePath: string,
  o: { readonly signal: AbortSignal },
): Promise<ContextEntry[]> {
  const rules = compileDockerignore(await readIgnoreFile(root));
  const keep = new Set([dockerfilePath, ".dockerignore"]);
  const excluded = (path: string) => !keep.has(path) && isExcluded(rules, path);
  // A directory is skipped whole only when no `!` pattern could re-include something below it.
  const canPrune = !rules.some((r) => r.negate);
  const entries: ContextEntry[] = [];
  const walk = async (rel: string): Promise<void> => {
    o.signal.throwIfAborted();
    const names: string[] = [];
    for await (const e of Deno.readDir(rel === "" ? root : join(root, rel))) names.push(e.name);
    for (const name of names.sort()) {
      const path = rel === "" ? name : `${rel}/${name}`;
      const abs = join(root, path);
      const info = await Deno.lstat(abs);
      const skip = excluded(path);
      const mode = (info.mode ?? 0o644) & 0o7777;
      if (info.isDirectory) {
        if (skip && canPrune) continue;
        if (!skip) entries.push({ path, type: "directory", mode, bytes: new Uint8Array() });
        await walk(path);
      } else if (skip) {
        continue;
      } else if (info.isSymlink) {
        const linkname = await Deno.readLink(abs);
        entries.push({ path, type: "symlink", mode, bytes: new Uint8Array(), linkname });
      } else if (info.isFile) {
        entries.push({ path, type: "file", mode, bytes: await Deno.readFile(abs) });
      }
    }
  };
  await walk("");
  return entries.sort((a, b) => a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
}

async function readIgnoreFile(root: string): Promise<string[]> {
  try {
    return (await Deno.readTextFile(join(root, ".dockerignore"))).split(/\r?\n/);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
}

/**
 * `.dockerignore` patterns: anchored at the context root (a leading `/` is optional), `*` and `?`
 * within one segment, `**` across segments, `[…]` classes, `!` re-includes, `#` comments; a
 * pattern also excludes everything below a directory it matches; the last matching pattern wins.
 */
export function compileDockerignore(lines: readonly string[]): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  for (const raw of lines) {
    let pattern = raw.trim();
    if (pattern === "" || pattern.startsWith("#")) continue;
    const negate = pattern.startsWith("!");
    if (negate) pattern = pattern.slice(1).trim();
    pattern = pattern.replace(/^\.?\/+/, "").replace(/\/+$/, "");
    if (pattern === "" || pattern === ".") continue;
    rules.push({ regexp: new RegExp(`^${globBody(pattern)}(?:/.*)?$`), negate });
  }
  return rules;
}

/** True when the last rule matching `path` (or a directory above it) excludes it. */
export function isExcluded(rules: readonly IgnoreRule[], path: string): boolean {
  let excluded = false;
  for (const rule of rules) {
    if (rule.regexp.test(path)) excluded = !rule.negate;
  }
  return excluded;
}
