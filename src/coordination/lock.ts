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
  options: { owner?: LockOwner } = {},
): Promise<FileLock | null> {
  await Deno.mkdir(dirname(path), { recursive: true });
  const file = await Deno.open(path, { read: true, write: true, create: true, truncate: false });
  let locked = false;
  try {
    locked = await file.tryLock(true);
  } finally {
    if (!locked) file.close();
  }
  if (!locked) return null;
  if (options.owner) {
    const bytes = new TextEncoder().encode(JSON.stringify(options.owner) + "\n");
    await file.truncate(0);
    await file.seek(0, Deno.SeekMode.Start);
    let offset = 0;
    while (offset < bytes.length) offset += await file.write(bytes.subarray(offset));
  }
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    file.close();
  };
  return { path, release, [Symbol.asyncDispose]: () => Promise.resolve(release()) };
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
