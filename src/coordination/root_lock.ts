/** Record-root exclusivity (ROOT-1 … ROOT-3): one writing Invocation per Record root. */
import { join } from "node:path";
import { isOsError, osErrorReason, sha256Hex, UsageError } from "../_shared/mod.ts";
import { type FileLock, type LockOwner, readLockOwner, tryAcquireLock } from "./lock.ts";

/**
 * Creates the root if missing, resolves its real path and takes `<state>/roots/<sha256>.lock`.
 * Fails at once with `record-root-busy` when another process holds it, and with
 * `state-dir-unwritable` when the state directory cannot hold the lock (before the root is made),
 * and with `record-root-unwritable` when the root cannot be created.
 */
export async function lockRecordRoot(
  root: string,
  stateDir: string,
  owner: LockOwner,
): Promise<FileLock> {
  const roots = join(stateDir, "roots");
  await inStateDir(stateDir, () => Deno.mkdir(roots, { recursive: true }));
  const real = await createRoot(root);
  const path = join(roots, `${sha256Hex(real)}.lock`);
  const lock = await inStateDir(stateDir, () => tryAcquireLock(path, { owner }));
  if (lock) return lock;
  const holder = await readLockOwner(path);
  throw new UsageError(
    "record-root-busy",
    `record root ${real} is in use by another niceeval process${
      holder?.pid ? ` (pid ${holder.pid})` : ""
    }`,
    `wait for it, or use another root: --record ${root}-2`,
  );
}

/**
 * Runs a file-system step inside the state directory; a file-system failure (read-only, not a
 * directory, permission denied) becomes `state-dir-unwritable` naming the directory and the
 * variable that moves it (LOCK-2).
 */
async function inStateDir<T>(stateDir: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (!isOsError(error)) throw error;
    throw new UsageError(
      "state-dir-unwritable",
      `Cannot write the state directory ${JSON.stringify(stateDir)}: ${osErrorReason(error)}`,
      "make it writable, or set NICEEVAL_STATE_DIR to a writable directory",
      { cause: error },
    );
  }
}

/** Creates the Record root if missing and returns its real path; an OS failure is a usage error. */
async function createRoot(root: string): Promise<string> {
  try {
    await Deno.mkdir(root, { recursive: true });
    return await Deno.realPath(root);
  } catch (error) {
    if (!isOsError(error)) throw error;
    throw new UsageError(
      "record-root-unwritable",
      `Cannot create the Record root ${JSON.stringify(root)}: ${osErrorReason(error)}`,
      "pass --record with a directory niceeval can create, or fix the path",
      { cause: error },
    );
  }
}

/**
 * True when another process holds the root's lock (a run writing it); false when the root or its
 * lock file does not exist or the lock is free. Creates nothing: `exp --dry` uses it to tell Runs
 * in progress from Runs a dead process left (salvage).
 */
export async function isRecordRootBusy(root: string, stateDir: string): Promise<boolean> {
  let real: string;
  try {
    real = await Deno.realPath(root);
  } catch {
    return false;
  }
  try {
    const lock = await tryAcquireLock(join(stateDir, "roots", `${sha256Hex(real)}.lock`), {
      create: false,
    });
    lock?.release();
    return lock === null;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}
