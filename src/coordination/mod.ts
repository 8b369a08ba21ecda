/**
 * @module coordination
 * Owns every cross-process exclusion: the flock module (`lock.ts`), the per-user state directory
 * and the Record-root lock. Nothing else in niceeval locks files.
 */
export { acquireLock, readLockOwner, tryAcquireLock } from "./lock.ts";
export type { FileLock, LockOwner } from "./lock.ts";
export { stateDirOf } from "./state_dir.ts";
export { lockRecordRoot } from "./root_lock.ts";
