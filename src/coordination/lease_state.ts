/** sharedState lease records and state derivation (LEASE-4). Records are never modified. */
import { join } from "node:path";
import {
  createFileExclusive,
  isPositiveInt,
  listNames,
  pad10,
  readJsonObject,
  recordJson,
} from "./_fs.ts";

/** The derived state of a lease. */
export type LeaseState = "free" | "held" | "retained";

/** `owner-<g>.json`: who took generation g. */
export interface LeaseOwnerRecord {
  readonly schema: "niceeval.shared-state-owner/v1";
  readonly key: string;
  readonly generation: number;
  readonly ownerToken: string;
  readonly experimentId: string;
  readonly invocationId: string;
  readonly host: string;
  readonly pid: number;
  readonly processStartedAt: string;
  readonly acquiredAt: string;
}

/** `released-<g>.json`: generation g ended, by its owner or by explicit recovery. */
export interface LeaseReleaseRecord {
  readonly schema: "niceeval.shared-state-release/v1";
  readonly generation: number;
  readonly ownerToken: string;
  readonly releasedAt: string;
  readonly by: "owner" | "recovery";
}

/** `recovery-<g>-<n>.json`: one explicit recovery attempt of generation g. */
export interface LeaseRecoveryRecord {
  readonly schema: "niceeval.shared-state-recovery/v1";
  readonly generation: number;
  readonly ownerToken: string;
  readonly operatorHost: string;
  readonly operatorPid: number;
  readonly startedAt: string;
}

/** What the files of a lease directory say, without the flock. */
export interface LeaseFiles {
  /** Latest owner generation g, or null when no owner record exists. */
  readonly generation: number | null;
  /** The parsed `owner-<g>.json`; undefined when there is none or it is unreadable. */
  readonly owner: LeaseOwnerRecord | undefined;
  /** The parsed `released-<g>.json`; undefined when absent. */
  readonly released: LeaseReleaseRecord | undefined;
  /** Whether `released-<g>.json` exists (even if unreadable). */
  readonly isReleased: boolean;
  /** Recovery records of generation g, by increasing n. */
  readonly recoveries: readonly LeaseRecoveryRecord[];
  /** Highest recovery index n of generation g, 0 when none. */
  readonly lastRecoveryIndex: number;
}

const OWNER_REGEXP = /^owner-(\d{10})\.json$/;
const RECOVERY_REGEXP = /^recovery-(\d{10})-(\d{10})\.json$/;

/**
 * The LEASE-4 table. A taken `lock` always means `held` (a live owner, a recovery, or an acquirer
 * between flock and owner record); a free one means `free` when no generation is open, else
 * `retained`.
 */
export function deriveLeaseState(
  facts: { generation: number | null; isReleased: boolean; lockTaken: boolean },
): LeaseState {
  if (facts.lockTaken) return "held";
  return facts.generation === null || facts.isReleased ? "free" : "retained";
}

/** `owner-<g>.json` and friends inside a lease directory. */
export function leaseFileNames(g: number): { owner: string; released: string } {
  return { owner: `owner-${pad10(g)}.json`, released: `released-${pad10(g)}.json` };
}

/** `recovery-<g>-<n>.json`. */
function recoveryFileName(g: number, n: number): string {
  return `recovery-${pad10(g)}-${pad10(n)}.json`;
}

/** Reads the records of a lease directory (missing directory: no generation). */
export async function readLeaseFiles(dir: string): Promise<LeaseFiles> {
  const names = await listNames(dir);
  let generation: number | null = null;
  for (const name of names) {
    const g = Number(OWNER_REGEXP.exec(name)?.[1] ?? NaN);
    if (Number.isSafeInteger(g) && (generation === null || g > generation)) generation = g;
  }
  if (generation === null) {
    return {
      generation,
      owner: undefined,
      released: undefined,
      isReleased: false,
      recoveries: [],
      lastRecoveryIndex: 0,
    };
  }
  const files = leaseFileNames(generation);
  const recoveryIndexes = names.flatMap((name) => {
    const m = RECOVERY_REGEXP.exec(name);
    return m && Number(m[1]) === generation ? [Number(m[2])] : [];
  });
  const recoveries: LeaseRecoveryRecord[] = [];
  for (const n of recoveryIndexes) {
    const parsed = await readJsonObject(join(dir, recoveryFileName(generation, n)));
    if (parsed) recoveries.push(parsed as unknown as LeaseRecoveryRecord);
  }
  return {
    generation,
    owner: parseOwner(await readJsonObject(join(dir, files.owner)), generation),
    released: parseReleased(await readJsonObject(join(dir, files.released))),
    isReleased: names.includes(files.released),
    recoveries,
    lastRecoveryIndex: Math.max(0, ...recoveryIndexes),
  };
}

function parseOwner(
  raw: Record<string, unknown> | undefined,
  generation: number,
): LeaseOwnerRecord | undefined {
  if (!raw) return undefined;
  const strings = ["key", "ownerToken", "experimentId", "invocationId", "host", "processStartedAt"];
  if (!strings.every((field) => typeof raw[field] === "string")) return undefined;
  if (raw.generation !== generation || !isPositiveInt(raw.pid)) return undefined;
  return raw as unknown as LeaseOwnerRecord;
}

function parseReleased(raw: Record<string, unknown> | undefined): LeaseReleaseRecord | undefined {
  if (!raw || (raw.by !== "owner" && raw.by !== "recovery")) return undefined;
  return raw as unknown as LeaseReleaseRecord;
}

/** Exclusive-creates `released-<g>.json` for `owner`'s generation, fsynced with its directory. */
export async function writeReleaseRecord(
  dir: string,
  release: { owner: LeaseOwnerRecord; by: "owner" | "recovery"; at: string },
): Promise<void> {
  const { owner } = release;
  const record: LeaseReleaseRecord = {
    schema: "niceeval.shared-state-release/v1",
    generation: owner.generation,
    ownerToken: owner.ownerToken,
    releasedAt: release.at,
    by: release.by,
  };
  await createFileExclusive(
    join(dir, leaseFileNames(owner.generation).released),
    recordJson(record),
  );
}

/** Exclusive-creates `recovery-<g>-<n>.json` for `owner`'s generation. */
export async function writeRecoveryRecord(
  dir: string,
  recovery: {
    owner: LeaseOwnerRecord;
    n: number;
    operator: { host: string; pid: number };
    at: string;
  },
): Promise<void> {
  const { owner } = recovery;
  const record: LeaseRecoveryRecord = {
    schema: "niceeval.shared-state-recovery/v1",
    generation: owner.generation,
    ownerToken: owner.ownerToken,
    operatorHost: recovery.operator.host,
    operatorPid: recovery.operator.pid,
    startedAt: recovery.at,
  };
  await createFileExclusive(
    join(dir, recoveryFileName(owner.generation, recovery.n)),
    recordJson(record),
  );
}
