/**
 * The file-system side of the Record reader: entry kinds, listings, the publish marker check and
 * the `record-invalid` error with its one-line message. Private to the record domain.
 */
import { join, relative, sep } from "node:path";
import { errorMessage, UsageError } from "../_shared/mod.ts";

/** A path that exists but is no regular file (a FIFO, socket, device, directory or link). */
export class NotRegularError extends Error {
  constructor(kind: string) {
    super(`is a ${kind}, not a regular file`);
    this.name = "NotRegularError";
  }
}

/** What a directory entry is, in words for messages. */
export type EntryKind =
  | "symbolic link"
  | "directory"
  | "regular file"
  | "FIFO, socket, device or special file";

export function kindOf(entry: Deno.DirEntry): EntryKind {
  if (entry.isSymlink) return "symbolic link";
  if (entry.isDirectory) return "directory";
  if (entry.isFile) return "regular file";
  return "FIFO, socket, device or special file";
}

export function problemOf(error: unknown): string {
  if (error instanceof NotRegularError) return error.message;
  if (error instanceof Deno.errors.NotFound) return "file is missing";
  return errorMessage(error);
}

/** `<root>/runs/<name>` for a path inside a Run directory, else null. */
export function runDirOf(root: string, path: string): string | null {
  const parts = relative(root, path).split(sep);
  return parts[0] === "runs" && parts.length >= 2 ? join(root, "runs", parts[1]!) : null;
}

/** The entries of a directory inside the root; a failure is `record-invalid` naming it. */
export async function listDir(
  root: string,
  dir: string,
  runDir: string | null = null,
): Promise<Deno.DirEntry[]> {
  const entries: Deno.DirEntry[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) entries.push(entry);
  } catch (error) {
    throw invalid(root, dir, runDir, `cannot list: ${errorMessage(error)}`);
  }
  return entries;
}

/** True iff the Run's `complete` is a zero-byte regular file, which publishes it (REC-10). */
export async function isPublished(dir: string): Promise<boolean> {
  try {
    const info = await Deno.lstat(join(dir, "complete"));
    return info.isFile && info.size === 0;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

export function invalid(
  root: string,
  path: string,
  runDir: string | null,
  detail: string,
): UsageError {
  return new UsageError(
    "record-invalid",
    oneLine(`${path}: ${detail}`),
    oneLine(
      runDir
        ? `move ${relative(root, runDir) || runDir} out of ${root}, then run the command again`
        : `fix or move ${path}, then run the command again`,
    ),
  );
}

// deno-lint-ignore no-control-regex
const CONTROL_REGEXP = /[\u0000-\u001f\u007f]/g;

/** Escapes control characters: names and values from a damaged Record may hold line breaks. */
function oneLine(text: string): string {
  return text.replace(CONTROL_REGEXP, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
