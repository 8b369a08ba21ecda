/** Directory walking for discovery: code-unit order, fixed skip list (authoring.md §1.3 rule 1). */
import { join } from "node:path";
import { compareCodeUnits, type DiscoveryIssue } from "./issues.ts";

const SKIPPED_DIRECTORIES = new Set(["node_modules", ".git", ".niceeval"]);

/** One file found under a walked directory. */
export interface WalkedFile {
  /** Absolute path of the project root. */
  readonly root: string;
  /** Absolute path. */
  readonly path: string;
  /** Path relative to the project root, `/`-separated. */
  readonly relative: string;
}

/**
 * Lists every file under `<root>/<dir>` in code-unit order of relative path. A missing directory
 * yields nothing; an unreadable one yields a `discovery.filesystem` issue.
 */
export async function walkFiles(
  root: string,
  dir: string,
  issues: DiscoveryIssue[],
): Promise<WalkedFile[]> {
  const out: WalkedFile[] = [];
  await walkInto(root, dir, out, issues, true);
  return out.sort((a, b) => compareCodeUnits(a.relative, b.relative));
}

async function walkInto(
  root: string,
  relative: string,
  out: WalkedFile[],
  issues: DiscoveryIssue[],
  top: boolean,
): Promise<void> {
  const entries: Deno.DirEntry[] = [];
  try {
    for await (const entry of Deno.readDir(join(root, relative))) entries.push(entry);
  } catch (error) {
    if (top && error instanceof Deno.errors.NotFound) return;
    issues.push({
      file: relative,
      code: "discovery.filesystem",
      level: "error",
      message: `cannot read directory: ${(error as Error).message}`,
      hint: "check the directory's permissions",
    });
    return;
  }
  for (const entry of entries) {
    const child = `${relative}/${entry.name}`;
    const kind = entry.isSymlink ? await linkTarget(join(root, child)) : entry;
    if (kind.isDirectory) {
      if (!SKIPPED_DIRECTORIES.has(entry.name) && !entry.isSymlink) {
        await walkInto(root, child, out, issues, false);
      }
    } else if (kind.isFile) {
      out.push({ root, path: join(root, child), relative: child });
    }
  }
}

/**
 * What a symlink points at. Linked directories are not followed (no cycles); a dangling link is
 * listed as a file so that importing it reports the problem.
 */
async function linkTarget(path: string): Promise<{ isDirectory: boolean; isFile: boolean }> {
  try {
    const info = await Deno.stat(path);
    return { isDirectory: info.isDirectory, isFile: info.isFile };
  } catch {
    return { isDirectory: false, isFile: true };
  }
}
