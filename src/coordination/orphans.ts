/**
 * Orphaned teardown registrations (ORPH-2, ORPH-3, ORPH-6, ORPH-7): classification, claim by
 * rename, and removal of a lease owner's registrations during explicit recovery (LEASE-10).
 */
import { dirname, join } from "node:path";
import { type Clock, sleep } from "../_shared/mod.ts";
import { listNames, syncDir } from "./_fs.ts";
import { type FileLock, tryAcquireLock } from "./lock.ts";
import { registrationPrefixOf, teardownsDirOf } from "./paths.ts";
import { type ProcessIdentity, type ProcessProbe, sameProcessStart } from "./process_info.ts";
import {
  readRegistration,
  type RemoveOutcome,
  removeThenUnlock,
  type TeardownRegistration,
} from "./teardown_registry.ts";

/**
 * A registration's status (ORPH-2). `orphan`: same host, free flock, pid dead or reused. `live`:
 * flock taken, or the pid still runs with the recorded start. `other-host`: never touched.
 * `unverified`: a check could not be made (unreadable file, unknown liveness or start time), so it
 * is left alone (fail closed).
 */
type RegistrationStatus = "orphan" | "live" | "other-host" | "unverified";

/** One registration file as seen by a scan. */
export interface RegistrationEntry {
  readonly path: string;
  /** True for a `<name>.claimed` file (a claim whose claimer died is an orphan again). */
  readonly claimed: boolean;
  /** Undefined when the file could not be parsed. */
  readonly registration: TeardownRegistration | undefined;
  readonly status: RegistrationStatus;
}

/** What a scan needs to classify registrations. */
export interface ScanOptions {
  projectRoot: string;
  /** This process, read once at startup. */
  identity: ProcessIdentity;
  probe: ProcessProbe;
  /**
   * With a clock, a busy flock is tried again {@link SCAN_BUSY_RETRIES} times
   * {@link SCAN_BUSY_RETRY_MS} apart before the registration counts as live: another process's
   * scan holds an orphan's flock for a moment only, while its owner holds it for good. Without
   * one, a busy flock is live at once.
   */
  clock?: Clock;
}

/** Extra flock tries of a scan with a clock. */
const SCAN_BUSY_RETRIES = 3;
/** Pause between those tries. */
const SCAN_BUSY_RETRY_MS = 50;

/** A registration this process claimed; it holds the flock until `done()` or `abandon()`. */
interface ClaimedOrphan {
  /** The `.claimed` path. */
  readonly path: string;
  readonly registration: TeardownRegistration;
  /** `ctx.selectedEvalIds` for the orphan teardown. */
  readonly selectedEvalIds: readonly string[];
  /** Deletes the claimed file (whatever the teardown's outcome, ORPH-3), then drops the flock. */
  done(): Promise<RemoveOutcome>;
  /** Drops the flock and keeps the file (interrupted before the teardown ran). */
  abandon(): void;
}

const REGISTRATION_REGEXP = /^[0-9a-f]{16}-.+\.json(\.claimed)?$/;

/**
 * Classifies every registration of `experimentId` (all Experiments when undefined), in file-name
 * order. Only same-host files are flock-tested; files that vanish during the scan are skipped.
 */
export async function scanRegistrations(
  experimentId: string | undefined,
  options: ScanOptions,
): Promise<RegistrationEntry[]> {
  const dir = teardownsDirOf(options.projectRoot);
  const prefix = experimentId === undefined ? "" : registrationPrefixOf(experimentId);
  const entries: RegistrationEntry[] = [];
  for (const name of await listNames(dir)) {
    if (!REGISTRATION_REGEXP.test(name) || !name.startsWith(prefix)) continue;
    const path = join(dir, name);
    const registration = await readRegistration(path);
    if (registration && experimentId !== undefined && registration.experimentId !== experimentId) {
      continue; // a hash-prefix collision with another Experiment
    }
    const status = await classify(path, registration, options);
    if (status === "gone") continue;
    entries.push({ path, claimed: name.endsWith(".claimed"), registration, status });
  }
  return entries;
}

async function classify(
  path: string,
  registration: TeardownRegistration | undefined,
  options: ScanOptions,
): Promise<RegistrationStatus | "gone"> {
  if (!registration) return "unverified";
  if (registration.host !== options.identity.host) return "other-host";
  let lock = await lockExisting(path);
  for (let retry = 0; lock === null && options.clock && retry < SCAN_BUSY_RETRIES; retry++) {
    await sleep(options.clock, SCAN_BUSY_RETRY_MS);
    lock = await lockExisting(path);
  }
  if (lock === "gone") return "gone";
  if (lock === null) return "live";
  try {
    const alive = await options.probe.isAlive(registration.pid);
    if (alive === undefined) return "unverified";
    if (!alive) return "orphan";
    const now = await options.probe.startTimeOf(registration.pid);
    const same = sameProcessStart(registration.processStartedAt, now);
    if (same === undefined) return "unverified";
    return same ? "live" : "orphan";
  } finally {
    lock.release();
  }
}

/** The orphans of one Experiment (ORPH-2). */
export async function findOrphans(
  experimentId: string,
  options: ScanOptions,
): Promise<RegistrationEntry[]> {
  return (await scanRegistrations(experimentId, options)).filter((e) => e.status === "orphan");
}

/** Experiment IDs with at least one orphan, sorted and unique, for ORPH-6 reminders. */
export async function listPendingOrphans(options: ScanOptions): Promise<string[]> {
  const ids = new Set<string>();
  for (const entry of await scanRegistrations(undefined, options)) {
    if (entry.status === "orphan" && entry.registration) ids.add(entry.registration.experimentId);
  }
  return [...ids].sort();
}

/** Options of {@link claimOrphan}. */
interface ClaimOrphanOptions {
  /**
   * With a clock, a busy flock is retried `busyRetries` times `busyRetryMs` apart: another
   * process's scan holds it for a moment only, while a real claimer holds it for its teardown.
   */
  clock?: Clock;
  signal?: AbortSignal;
  /** @default 3 */
  busyRetries?: number;
  /** @default 50 */
  busyRetryMs?: number;
}

/**
 * Claims an orphan (ORPH-3): takes its flock and renames it to `<name>.claimed` (a `.claimed`
 * orphan keeps its name). Returns null when another process won: the flock stays taken, the file
 * is gone, or the rename fails.
 * @throws `signal.reason` when aborted while retrying a busy flock.
 */
export async function claimOrphan(
  entry: RegistrationEntry,
  options: ClaimOrphanOptions = {},
): Promise<ClaimedOrphan | null> {
  if (entry.status !== "orphan" || !entry.registration) return null;
  const registration = entry.registration;
  const { clock, signal, busyRetries = 3, busyRetryMs = 50 } = options;
  let lock = await lockExisting(entry.path);
  for (let retry = 0; lock === null && clock && retry < busyRetries; retry++) {
    await sleep(clock, busyRetryMs, signal ? { signal } : {});
    lock = await lockExisting(entry.path);
  }
  if (lock === null || lock === "gone") return null;
  const path = entry.claimed ? entry.path : `${entry.path}.claimed`;
  try {
    if (!entry.claimed) await Deno.rename(entry.path, path);
    if (!await isSameFile(lock, path)) throw new Error("the claimed path names another file");
    await syncDir(dirname(path));
  } catch {
    lock.release(); // the rename or the identity check failed: another claimer won
    return null;
  }
  return claimedOrphan(path, registration, lock);
}

function claimedOrphan(
  path: string,
  registration: TeardownRegistration,
  lock: FileLock,
): ClaimedOrphan {
  let finished: Promise<RemoveOutcome> | undefined;
  return {
    path,
    registration,
    selectedEvalIds: registration.selectedEvalIds,
    done: () => {
      finished ??= removeThenUnlock(path, lock);
      return finished;
    },
    abandon: () => {
      if (finished) return;
      finished = Promise.resolve({ ok: false, error: new Error("the claim was abandoned") });
      lock.release();
    },
  };
}

/** The recorded lease owner whose registrations explicit recovery removes (LEASE-10). */
interface RegistrationOwner {
  readonly experimentId: string;
  readonly host: string;
  readonly pid: number;
  readonly processStartedAt: string;
}

/** Registrations provably written by `owner` (same experimentId, host, pid and process start). */
export async function findOwnerRegistrations(
  owner: RegistrationOwner,
  projectRoot: string,
): Promise<Array<{ path: string; registration: TeardownRegistration }>> {
  const dir = teardownsDirOf(projectRoot);
  const prefix = registrationPrefixOf(owner.experimentId);
  const found: Array<{ path: string; registration: TeardownRegistration }> = [];
  for (const name of await listNames(dir)) {
    if (!REGISTRATION_REGEXP.test(name) || !name.startsWith(prefix)) continue;
    const registration = await readRegistration(join(dir, name));
    if (
      registration?.experimentId === owner.experimentId && registration.host === owner.host &&
      registration.pid === owner.pid && registration.processStartedAt === owner.processStartedAt
    ) found.push({ path: join(dir, name), registration });
  }
  return found;
}

/**
 * Deletes the owner's registrations whose flock is free (held ones are being claimed elsewhere and
 * are left alone). Returns how many were deleted.
 * @throws an I/O error other than the file vanishing.
 */
export async function removeOwnerRegistrations(
  owner: RegistrationOwner,
  projectRoot: string,
): Promise<number> {
  let removed = 0;
  for (const { path } of await findOwnerRegistrations(owner, projectRoot)) {
    const lock = await lockExisting(path);
    if (lock === null || lock === "gone") continue;
    const outcome = await removeThenUnlock(path, lock);
    if (outcome.ok) removed++;
    else if (!(outcome.error instanceof Deno.errors.NotFound)) throw outcome.error;
  }
  return removed;
}

/** Locks an existing file without ever creating it: null when busy, `gone` when missing. */
async function lockExisting(path: string): Promise<FileLock | null | "gone"> {
  try {
    return await tryAcquireLock(path, { create: false });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return "gone";
    throw error;
  }
}

async function isSameFile(lock: FileLock, path: string): Promise<boolean> {
  const [held, named] = await Promise.all([lock.stat(), Deno.stat(path)]);
  return held.ino === named.ino && held.dev === named.dev;
}
