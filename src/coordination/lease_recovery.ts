/**
 * Explicit sharedState recovery (LEASE-10): read-only inspection, and recovery of a retained
 * lease by the operator who proves ownership with the owner token and two confirmations.
 * Refusals with exit 2 throw `UsageError`; every other outcome is a returned value.
 */
import { join } from "node:path";
import { type Clock, errorMessage, isoTime, UsageError } from "../_shared/mod.ts";
import {
  deriveLeaseState,
  type LeaseFiles,
  type LeaseOwnerRecord,
  type LeaseRecoveryRecord,
  type LeaseReleaseRecord,
  type LeaseState,
  readLeaseFiles,
  writeRecoveryRecord,
  writeReleaseRecord,
} from "./lease_state.ts";
import { type FileLock, tryAcquireLock } from "./lock.ts";
import { findOwnerRegistrations, removeOwnerRegistrations } from "./orphans.ts";
import { leaseDirOf } from "./paths.ts";
import { type ProcessIdentity, type ProcessProbe, sameProcessStart } from "./process_info.ts";

/** The LEASE-10 evidence; the only surface that shows an owner token. */
export interface LeaseEvidence {
  readonly key: string;
  readonly dir: string;
  readonly state: LeaseState;
  /** Latest owner generation, null when the key was never taken. */
  readonly generation: number | null;
  /** The latest owner record (token, experiment, host, pid, process start, acquisition time). */
  readonly owner: LeaseOwnerRecord | undefined;
  readonly released: LeaseReleaseRecord | undefined;
  readonly lockTaken: boolean;
  /** Recovery attempts of the latest generation. */
  readonly recoveries: readonly LeaseRecoveryRecord[];
}

/** Reads the evidence without changing or creating anything (COORD-2). Exit 0 iff `free`. */
export async function inspectLease(
  key: string,
  options: { projectRoot: string },
): Promise<LeaseEvidence> {
  const dir = leaseDirOf(options.projectRoot, key);
  const lock = await lockIfExists(join(dir, "lock"));
  const lockTaken = lock === null;
  if (lock !== null && lock !== "missing") lock.release();
  const files = await readLeaseFiles(dir);
  return {
    key,
    dir,
    state: deriveLeaseState({ ...files, lockTaken }),
    generation: files.generation,
    owner: files.owner,
    released: files.released,
    lockTaken,
    recoveries: files.recoveries,
  };
}

/** What the recovery teardown learns about the owner it compensates for. */
interface RecoveryTeardownContext {
  readonly owner: LeaseOwnerRecord;
  /** From the owner's teardown registration; undefined when none is left. */
  readonly selectedEvalIds: readonly string[] | undefined;
}

/** Options of {@link recoverLease}. */
export interface RecoverLeaseOptions {
  projectRoot: string;
  ownerToken: string;
  confirmOwnerTerminated: boolean;
  confirmRemoteQuiesced: boolean;
  /** The Experiments the selector resolved to; must be exactly the owner's one. */
  selectedExperimentIds: readonly string[];
  /** The operator's process. */
  identity: ProcessIdentity;
  probe: ProcessProbe;
  clock: Clock;
  /** The Experiment's `teardown`, bounded by the caller (CLEANUP_TIMEOUT_MS); absent if none. */
  runTeardown?: (context: RecoveryTeardownContext) => Promise<void>;
}

/** Exit-1 refusals and failures of {@link recoverLease}. */
type RecoverLeaseFailureCode =
  | "shared-state-owner-alive"
  | "shared-state-token-mismatch"
  | "shared-state-recovery-failed";

/** Outcome of {@link recoverLease}: exit 0 when `ok`, else 1. */
export type RecoverLeaseResult =
  | {
    readonly ok: true;
    readonly outcome: "recovered";
    readonly key: string;
    readonly experimentId: string;
    readonly generation: number;
    readonly teardownRan: boolean;
    readonly removedRegistrations: number;
  }
  | {
    readonly ok: true;
    readonly outcome: "already-free";
    readonly key: string;
    readonly removedRegistrations: number;
  }
  | {
    readonly ok: false;
    readonly code: RecoverLeaseFailureCode;
    readonly message: string;
    readonly error?: unknown;
  };

/**
 * Recovers a retained lease (LEASE-10), refusing in the spec's order and changing nothing then.
 * On success, holding the flock: `recovery-<g>-<n>.json`, teardown once, the owner's registration
 * removed, `released-<g>.json` with `by: "recovery"`. A failure leaves the lease retained.
 * @throws {UsageError} `shared-state-recovery-confirmation-required` or
 * `shared-state-experiment-mismatch` (exit 2).
 */
export async function recoverLease(
  key: string,
  options: RecoverLeaseOptions,
): Promise<RecoverLeaseResult> {
  requireConfirmations(key, options);
  const dir = leaseDirOf(options.projectRoot, key);
  // In an existing lease directory the flock is always taken (creating an empty `lock` if needed),
  // so no recovery step ever runs unlocked; a missing directory means the key was never used.
  const lock = await dirExists(dir) ? await tryAcquireLock(join(dir, "lock")) : "missing";
  try {
    const files = await readLeaseFiles(dir);
    requireOwnerExperiment(key, files.owner, options.selectedExperimentIds);
    if (lock === null) return ownerAlive(key, "another process holds its lock");
    const { owner } = files;
    if (deriveLeaseState({ ...files, lockTaken: false }) === "free") {
      const removed = owner ? await removeOwnerRegistrations(owner, options.projectRoot) : 0;
      return { ok: true, outcome: "already-free", key, removedRegistrations: removed };
    }
    if (!owner || owner.ownerToken !== options.ownerToken) {
      return {
        ok: false,
        code: "shared-state-token-mismatch",
        message: `Cannot recover sharedState key "${key}": the owner token does not match ${
          owner ? "the latest unreleased owner" : "any readable owner record"
        }`,
      };
    }
    const alive = await ownerStillRuns(owner, options);
    if (alive) return ownerAlive(key, alive);
    return await performRecovery(
      key,
      dir,
      { ...files, owner },
      options,
    );
  } finally {
    if (lock !== null && lock !== "missing") lock.release();
  }
}

function requireConfirmations(key: string, options: RecoverLeaseOptions): void {
  const missing = [
    ...(options.confirmOwnerTerminated ? [] : ["--confirm-owner-terminated"]),
    ...(options.confirmRemoteQuiesced ? [] : ["--confirm-remote-quiesced"]),
  ];
  if (missing.length === 0) return;
  throw new UsageError(
    "shared-state-recovery-confirmation-required",
    `Cannot recover sharedState key "${key}": missing ${missing.join(" and ")}`,
    "confirm that the owner process has ended and that no remote work still uses the state, then pass both flags",
  );
}

function requireOwnerExperiment(
  key: string,
  owner: LeaseOwnerRecord | undefined,
  selected: readonly string[],
): void {
  if (selected.length === 1 && (!owner || owner.experimentId === selected[0])) return;
  const wanted = owner ? `"${owner.experimentId}"` : "one Experiment";
  throw new UsageError(
    "shared-state-experiment-mismatch",
    `Cannot recover sharedState key "${key}": the selector must resolve to exactly ${wanted}, got ${
      selected.length === 0 ? "none" : selected.map((id) => `"${id}"`).join(", ")
    }`,
    owner
      ? `select the owner's experiment: niceeval exp ${owner.experimentId} --teardown --recover-shared-state ${key}`
      : "select exactly one experiment",
  );
}

/** Why the owner counts as running (fail closed when it cannot be told), or undefined. */
async function ownerStillRuns(
  owner: LeaseOwnerRecord,
  options: RecoverLeaseOptions,
): Promise<string | undefined> {
  if (owner.host !== options.identity.host) return undefined;
  const alive = await options.probe.isAlive(owner.pid);
  if (alive === false) return undefined;
  if (alive === undefined) return `cannot tell whether pid ${owner.pid} still runs`;
  const same = sameProcessStart(owner.processStartedAt, await options.probe.startTimeOf(owner.pid));
  if (same === false) return undefined;
  return `pid ${owner.pid} on ${owner.host} still runs${
    same === undefined ? " (its start time cannot be compared)" : ""
  }`;
}

function ownerAlive(key: string, why: string): RecoverLeaseResult {
  return {
    ok: false,
    code: "shared-state-owner-alive",
    message: `Cannot recover sharedState key "${key}": the owner is alive: ${why}`,
  };
}

async function performRecovery(
  key: string,
  dir: string,
  files: LeaseFiles & { owner: LeaseOwnerRecord },
  options: RecoverLeaseOptions,
): Promise<RecoverLeaseResult> {
  const { owner } = files;
  const { identity, clock, projectRoot } = options;
  try {
    await writeRecoveryRecord(dir, {
      owner,
      n: files.lastRecoveryIndex + 1,
      operator: identity,
      at: isoTime(clock.now()),
    });
    const registrations = await findOwnerRegistrations(owner, projectRoot);
    const selectedEvalIds = registrations[0]?.registration.selectedEvalIds;
    if (options.runTeardown) await options.runTeardown({ owner, selectedEvalIds });
    const removed = await removeOwnerRegistrations(owner, projectRoot);
    await writeReleaseRecord(dir, { owner, by: "recovery", at: isoTime(clock.now()) });
    return {
      ok: true,
      outcome: "recovered",
      key,
      experimentId: owner.experimentId,
      generation: owner.generation,
      teardownRan: options.runTeardown !== undefined,
      removedRegistrations: removed,
    };
  } catch (error) {
    return {
      ok: false,
      code: "shared-state-recovery-failed",
      message: `Cannot recover sharedState key "${key}": ${errorMessage(error)}`,
      error,
    };
  }
}

/** Tries the flock of an existing lock file: null when taken, `missing` when there is none. */
async function lockIfExists(path: string): Promise<FileLock | null | "missing"> {
  try {
    return await tryAcquireLock(path, { create: false });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return "missing";
    throw error;
  }
}

async function dirExists(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isDirectory;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}
