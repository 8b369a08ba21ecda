/** Durable small-file helpers for coordination records (no locking here: that is `lock.ts`). */
import { basename, dirname, join } from "node:path";
import { realRandom } from "../_shared/mod.ts";

/**
 * Exclusive-creates `path` with `text`: the text goes into a temporary file beside it, which is
 * fsynced and then hard-linked to `path` (failing with `AlreadyExists` like an exclusive create),
 * then the directory is fsynced. A process killed at any moment leaves either no `path` or a
 * complete one, never an empty file; at most a stray temporary file, which no reader lists.
 */
export async function createFileExclusive(path: string, text: string): Promise<void> {
  const temp = await writeSyncedTemp(path, text);
  try {
    await Deno.link(temp, path);
  } finally {
    await Deno.remove(temp).catch(() => undefined);
  }
  await syncDir(dirname(path));
}

/**
 * Replaces `path` with `text` atomically: the text goes into a temporary file beside it, which is
 * fsynced and renamed over `path`, then the directory is fsynced. A reader sees the old file or
 * the new one, never a torn one.
 */
export async function replaceFile(path: string, text: string): Promise<void> {
  const temp = await writeSyncedTemp(path, text);
  await Deno.rename(temp, path);
  await syncDir(dirname(path));
}

/**
 * Writes `text` to a new hidden temporary file beside `path` (`.<name>.<uuid>.tmp`, which no
 * reader lists), fsyncs it and returns its path; the file is removed when the write fails.
 */
async function writeSyncedTemp(path: string, text: string): Promise<string> {
  const temp = join(dirname(path), `.${basename(path)}.${realRandom.uuid()}.tmp`);
  const file = await Deno.open(temp, { write: true, createNew: true });
  try {
    try {
      const bytes = new TextEncoder().encode(text);
      let offset = 0;
      while (offset < bytes.length) offset += await file.write(bytes.subarray(offset));
      await file.sync();
    } finally {
      file.close();
    }
  } catch (error) {
    await Deno.remove(temp).catch(() => undefined);
    throw error;
  }
  return temp;
}

/** Fsyncs a directory so that a create, rename or delete in it survives a crash. */
export async function syncDir(dir: string): Promise<void> {
  const handle = await Deno.open(dir, { read: true });
  try {
    await handle.sync();
  } finally {
    handle.close();
  }
}

/** Names in `dir`, or an empty list when it does not exist. */
export async function listNames(dir: string): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) names.push(entry.name);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
  return names.sort();
}

/** Parses a JSON object file; undefined when it is missing, unreadable or not an object. */
export async function readJsonObject(path: string): Promise<Record<string, unknown> | undefined> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch {
    return undefined; // missing or unreadable: the caller decides (fail closed)
  }
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? parsed as Record<string, unknown>
      : undefined;
  } catch {
    return undefined; // a torn or foreign file is treated like an unreadable one
  }
}

/** Formats a generation or recovery index as the 10-digit decimal of LEASE-4. */
export function pad10(n: number): string {
  return String(n).padStart(10, "0");
}

/** True for a positive safe integer (a plausible pid or generation). */
export function isPositiveInt(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0;
}

/** The on-disk form of a coordination record: pretty JSON plus a final newline. */
export function recordJson(value: unknown): string {
  return JSON.stringify(value, null, 2) + "\n";
}
