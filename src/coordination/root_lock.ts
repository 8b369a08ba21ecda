/** Record-root exclusivity (ROOT-1 … ROOT-3): one writing Invocation per Record root. */
import { join } from "node:path";
import { sha256Hex, UsageError } from "../_shared/mod.ts";
import { type FileLock, type LockOwner, readLockOwner, tryAcquireLock } from "./lock.ts";

/**
 * Creates the root if missing, resolves its real path and takes `<state>/roots/<sha256>.lock`.
 * Fails at once with `record-root-busy` when another process holds it.
 */
export async function lockRecordRoot(
  root: string,
  stateDir: string,
  owner: LockOwner,
): Promise<FileLock> {
  await Deno.mkdir(root, { recursive: true });
  const real = await Deno.realPath(root);
  const path = join(stateDir, "roots", `${sha256Hex(real)}.lock`);
  const lock = await tryAcquireLock(path, { owner });
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
