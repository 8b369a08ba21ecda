/**
 * The one cross-process lock module (toolchain.md §6, LOCK-1): exclusive, non-blocking flocks via
 * `Deno.FsFile.tryLock`. Waiting is polling on the injected clock; nothing blocks in `lock()`.
 */
import { dirname } from "node:path";
import { type Clock, sleep } from "../_shared/mod.ts";

/** A held lock; released when closed, or by the kernel when the process dies. */
export interface FileLock extends AsyncDisposable {
  readonly path: string;
  /** Idempotent. */
  release(): void;
  /** Replaces the locked file's content with `text` and fsyncs it (for records that carry a lock). */
  writeContent(text: string): Promise<void>;
  /** Stats the locked open file (its inode, even after the path was renamed or removed). */
  stat(): Promise<Deno.FileInfo>;
}

/** Options of {@link tryAcquireLock}. */
interface TryAcquireLockOptions {
  /** Written into the file once the lock is held (diagnostics only). */
  owner?: LockOwner;
  /**
   * `true` (default): create the file and its parents when missing. `false`: open only an existing
   * file and throw `Deno.errors.NotFound` when there is none (records that other processes rename
   * or delete must never be recreated by a lock attempt). `"new"`: exclusive create; throws
   * `Deno.errors.AlreadyExists` when the file exists.
   * @default true
   */
  create?: boolean | "new";
}

/** Diagnostics written into a lock file after it is taken; never used to decide ownership. */
export interface LockOwner {
  readonly pid: number;
  readonly hostname: string;
  readonly startedAt: string;
  readonly invocationId?: string;
}

/**
 * Tries to take an exclusive lock on `path` (created with its parents, never truncated before the
 * lock is held). Returns null at once when another holder has it.
 */
export async function tryAcquireLock(
  path: string,
  options: TryAcquireLockOptions = {},
): Promise<FileLock | null> {
  const create = options.create ?? true;
  if (create !== false) await Deno.mkdir(dirname(path), { recursive: true });
  const file = await Deno.open(path, {
    read: true,
    write: true,
    truncate: false,
    ...(create === "new" ? { createNew: true } : { create }),
  });
  let locked = false;
  try {
    locked = await file.tryLock(true);
  } finally {
    if (!locked) file.close();
  }
  if (!locked) return null;
  try {
    if (options.owner) await replaceContent(file, JSON.stringify(options.owner) + "\n");
  } catch (error) {
    unlockAndClose(file);
    throw error;
  }
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    unlockAndClose(file);
  };
  return {
    path,
    release,
    writeContent: async (text) => {
      await replaceContent(file, text);
      await file.sync();
    },
    stat: () => file.stat(),
    [Symbol.asyncDispose]: () => Promise.resolve(release()),
  };
}

/**
 * Unlocks before closing: a child being spawned by another thread holds a copy of every descriptor
 * until its exec, and a close alone would leave the lock held by that copy for that moment.
 */
function unlockAndClose(file: Deno.FsFile): void {
  try {
    file.unlockSync();
  } finally {
    file.close();
  }
}

async function replaceContent(file: Deno.FsFile, text: string): Promise<void> {
  const bytes = new TextEncoder().encode(text);
  await file.truncate(0);
  await file.seek(0, Deno.SeekMode.Start);
  let offset = 0;
  while (offset < bytes.length) offset += await file.write(bytes.subarray(offset));
}

/** Waits for the lock by polling every `pollMs` on `clock`; rejects with `signal.reason` on abort. */
export async function acquireLock(
  path: string,
  options: { signal: AbortSignal; clock: Clock; pollMs?: number; owner?: LockOwner },
): Promise<FileLock> {
  const { signal, clock, pollMs = 200 } = options;
  for (;;) {
    signal.throwIfAborted();
    const lock = await tryAcquireLock(path, options.owner ? { owner: options.owner } : {});
    if (lock) return lock;
    await sleep(clock, pollMs, { signal });
  }
}

/** Reads the owner JSON of a lock file, if any (diagnostics only). */
export async function readLockOwner(path: string): Promise<Partial<LockOwner> | undefined> {
  try {
    const parsed = JSON.parse(await Deno.readTextFile(path));
    return typeof parsed === "object" && parsed !== null ? parsed as Partial<LockOwner> : undefined;
  } catch {
    return undefined;
  }
}
