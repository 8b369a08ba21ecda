/**
 * @module coordination
 * Owns every cross-process exclusion and the machine-local state behind it: the flock module
 * (`lock.ts`), the per-user state directory, the Record-root lock, sharedState leases, the teardown
 * registry with its orphan recovery, process identity and liveness (also for sandbox owner stamps),
 * and reading small JSON record files. Nothing else in niceeval locks files.
 * It never runs hooks itself: teardowns arrive as functions, and outcomes go back as values.
 */
export { readLockOwner, tryAcquireLock } from "./lock.ts";
export { stateDirOf } from "./state_dir.ts";
export {
  MACHINE_SLOT_POLL_MS,
  machineSlotLimits,
  machineSlotPath,
  tryAcquireMachineSlot,
} from "./machine_slots.ts";
export type { MachineSlotOwner } from "./machine_slots.ts";
export { isRecordRootBusy, lockRecordRoot } from "./root_lock.ts";
export { coordinationDirOf, leaseDirOf, teardownsDirOf } from "./paths.ts";
export {
  createProcessProbe,
  isoSeconds,
  readProcessIdentity,
  sameProcessStart,
  statFields,
} from "./process_info.ts";
export type { ProcessIdentity, ProcessProbe } from "./process_info.ts";
export { readJsonObject } from "./_fs.ts";
export { createKeyedMutex } from "./keyed_mutex.ts";
export type { KeyedMutex } from "./keyed_mutex.ts";
export { deriveLeaseState } from "./lease_state.ts";
export type { LeaseOwnerRecord } from "./lease_state.ts";
export { acquireLease } from "./lease.ts";
export type { HeldLease, LeaseWaitingInfo } from "./lease.ts";
export { inspectLease, recoverLease } from "./lease_recovery.ts";
export type { LeaseEvidence, RecoverLeaseOptions, RecoverLeaseResult } from "./lease_recovery.ts";
export { registerTeardown } from "./teardown_registry.ts";
export type { HeldRegistration, RegisterTeardownOptions } from "./teardown_registry.ts";
export { claimOrphan, findOrphans, listPendingOrphans, scanRegistrations } from "./orphans.ts";
export type { RegistrationEntry, ScanOptions } from "./orphans.ts";
export {
  listLiveRamps,
  openLiveRamp,
  RAMP_CONTROL_SCHEMA,
  RAMP_REASON_MAX,
  rampDirOf,
  readRampControl,
  updateRampControl,
} from "./ramp_files.ts";
export type { LiveRamp, LiveRampEntry, RampControlFile, RampRangeOverride } from "./ramp_files.ts";
