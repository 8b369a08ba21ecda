/**
 * Atomic file writes (REC-8): serialize, write `.<name>.tmp-<8 hex>` beside the target, fsync it,
 * rename it over the target, fsync the directory. Nothing is written in place.
 */
import { basename, dirname, join } from "node:path";
import { type Random, randomHex8 } from "../_shared/mod.ts";

/** JSON text as the Record stores it: 2-space indent and a trailing newline. */
export function recordJson(value: unknown): string {
  return JSON.stringify(value, null, 2) + "\n";
}

/** Writes `text` to `path` atomically. */
export async function writeTextAtomic(path: string, text: string, random: Random): Promise<void> {
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.tmp-${randomHex8(random)}`);
  const file = await Deno.open(temp, { write: true, createNew: true });
  try {
    await writeAll(file, new TextEncoder().encode(text));
    await file.sync();
  } finally {
    file.close();
  }
  try {
    await Deno.rename(temp, path);
  } catch (error) {
    await Deno.remove(temp).catch(() => undefined);
    throw error;
  }
  await syncDirectory(dir);
}

/** Writes `value` as Record JSON to `path` atomically. */
export function writeJsonAtomic(path: string, value: unknown, random: Random): Promise<void> {
  return writeTextAtomic(path, recordJson(value), random);
}

/**
 * Creates `path` exclusively with `text` (empty for markers), fsyncs it and its directory.
 * Throws `Deno.errors.AlreadyExists` when the file exists.
 */
export async function createExclusive(path: string, text = ""): Promise<void> {
  const file = await Deno.open(path, { write: true, createNew: true });
  try {
    if (text !== "") await writeAll(file, new TextEncoder().encode(text));
    await file.sync();
  } finally {
    file.close();
  }
  await syncDirectory(dirname(path));
}

/** fsyncs a directory so that renames and creations inside it are durable. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await Deno.open(dir, { read: true });
  try {
    await handle.sync();
  } finally {
    handle.close();
  }
}

async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) offset += await file.write(bytes.subarray(offset));
}

/** True for the temporary file names of {@link writeTextAtomic}. */
export function isTempName(name: string): boolean {
  return /^\..+\.tmp-[0-9a-f]{8}$/.test(name);
}
