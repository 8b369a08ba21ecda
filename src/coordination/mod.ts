/**
 * @module coordination
 * Owns every cross-process exclusion and the machine-local state behind it: the flock module
 * (`lock.ts`), the per-user state directory, the Record-root lock, sharedState leases, the teardown
 * registry with its orphan recovery, process identity and liveness (also for sandbox owner stamps),
 * and reading small JSON record files. Nothing else in niceeval locks files.
 * It never runs hooks itself: teardowns arrive as functions, and outcomes go back as values.
 */
export { acquireLock, readLockOwner, tryAcquireLock } from "./lock.ts";
export type { FileLock, LockOwner, TryAcquireLockOptions } from "./lock.ts";
export { stateDirOf } from "./state_dir.ts";
export {
  MACHINE_SLOT_POLL_MS,
  machineSlotLimits,
  machineSlotPath,
  tryAcquireMachineSlot,
} from "./machine_slots.ts";
export type { MachineSlot, MachineSlotOwner } from "./machine_slots.ts";
export { lockRecordRoot } from "./root_lock.ts";
export { coordinationDirOf, leaseDirOf, teardownsDirOf } from "./paths.ts";
export {
  createProcessProbe,
  isoSeconds,
  PROCESS_START_TOLERANCE_MS,
  readProcessIdentity,
  sameProcessStart,
  statFields,
} from "./process_info.ts";
export type { ProcessIdentity, ProcessProbe, ProcessProbeSeams } from "./process_info.ts";
export { readJsonObject } from "./_fs.ts";
export { createKeyedMutex } from "./keyed_mutex.ts";
export type { KeyedMutex } from "./keyed_mutex.ts";
export { deriveLeaseState } from "./lease_state.ts";
export type {
  LeaseOwnerRecord,
  LeaseRecoveryRecord,
  LeaseReleaseRecord,
  LeaseState,
} from "./lease_state.ts";
export { acquireLease, LEASE_POLL_MS } from "./lease.ts";
export type {
  AcquireLeaseOptions,
  HeldLease,
  LeaseReleaseOutcome,
  LeaseWaitingInfo,
} from "./lease.ts";
export { inspectLease, recoverLease } from "./lease_recovery.ts";
export type {
  LeaseEvidence,
  RecoverLeaseFailureCode,
  RecoverLeaseOptions,
  RecoverLeaseResult,
  RecoveryTeardownContext,
} from "./lease_recovery.ts";
export { registerTeardown } from "./teardown_registry.ts";
export type {
  HeldRegistration,
  RegisterTeardownOptions,
  RegisterTeardownResult,
  RemoveOutcome,
  TeardownRegistration,
} from "./teardown_registry.ts";
export {
  claimOrphan,
  findOrphans,
  listPendingOrphans,
  removeOwnerRegistrations,
  scanRegistrations,
} from "./orphans.ts";
export type {
  ClaimedOrphan,
  ClaimOrphanOptions,
  RegistrationEntry,
  RegistrationOwner,
  RegistrationStatus,
  ScanOptions,
} from "./orphans.ts";
