/**
 * Teardown registrations (ORPH-1): written before `setup`, locked by the writing process until
 * `teardown` ran, then removed. A SIGKILLed writer leaves an orphan (see `orphans.ts`).
 */
import { dirname, join } from "node:path";
import {
  type Clock,
  errorMessage,
  isoTime,
  type Random,
  randomHex8,
  realRandom,
} from "../_shared/mod.ts";
import { isPositiveInt, readJsonObject, recordJson, syncDir } from "./_fs.ts";
import { type FileLock, tryAcquireLock } from "./lock.ts";
import { registrationPrefixOf, teardownsDirOf } from "./paths.ts";
import type { ProcessIdentity } from "./process_info.ts";

/** `coordination/teardowns/<d>-<invocationId>.json`. */
export interface TeardownRegistration {
  readonly schema: "niceeval.teardown-registration/v1";
  readonly experimentId: string;
  readonly selectedEvalIds: readonly string[];
  readonly invocationId: string;
  readonly host: string;
  readonly pid: number;
  readonly processStartedAt: string;
  readonly startedAt: string;
}

/** Outcome of removing a coordination file; a failure is data for a warning. */
export type RemoveOutcome = { readonly ok: true } | { readonly ok: false; readonly error: unknown };

/** A registration this process wrote and still locks. */
export interface HeldRegistration {
  readonly path: string;
  readonly registration: TeardownRegistration;
  /**
   * Deletes the file, then drops the flock (LIFE-6 step 4). A failure is
   * `teardown-registration-remove-failed`; the flock is dropped either way. Idempotent.
   */
  remove(): Promise<RemoveOutcome>;
  /**
   * Drops the flock and keeps the file, for ORPH-3 to find later (INT-2). Idempotent; a later
   * `remove()` then fails without touching the file.
   */
  abandon(): void;
}

/** Result of {@link registerTeardown}; a failure becomes `teardown-registration-write-failed`. */
type RegisterTeardownResult =
  | { readonly ok: true; readonly held: HeldRegistration }
  | { readonly ok: false; readonly error: unknown; readonly message: string };

/** Options of {@link registerTeardown}. */
export interface RegisterTeardownOptions {
  projectRoot: string;
  experimentId: string;
  selectedEvalIds: readonly string[];
  invocationId: string;
  identity: ProcessIdentity;
  clock: Clock;
  /** Source of the temporary name. @default realRandom */
  random?: Random;
}

/**
 * Writes the registration under a temporary name, locks it, writes and fsyncs it, renames it into
 * place and fsyncs the directory (ORPH-1). Never throws for I/O: returns a failure value.
 */
export async function registerTeardown(
  options: RegisterTeardownOptions,
): Promise<RegisterTeardownResult> {
  const { experimentId, identity } = options;
  const dir = teardownsDirOf(options.projectRoot);
  const name = `${registrationPrefixOf(experimentId)}${options.invocationId}.json`;
  const path = join(dir, name);
  const temp = join(dir, `.${name}.${randomHex8(options.random ?? realRandom)}.tmp`);
  const registration: TeardownRegistration = {
    schema: "niceeval.teardown-registration/v1",
    experimentId,
    selectedEvalIds: [...options.selectedEvalIds],
    invocationId: options.invocationId,
    host: identity.host,
    pid: identity.pid,
    processStartedAt: identity.processStartedAt,
    startedAt: isoTime(options.clock.now()),
  };
  let lock: FileLock | null = null;
  try {
    lock = await tryAcquireLock(temp, { create: "new" });
    if (!lock) throw new Error("its temporary file is locked by another process");
    await lock.writeContent(recordJson(registration));
    await Deno.rename(temp, path);
    await syncDir(dir);
  } catch (error) {
    lock?.release();
    await Deno.remove(temp).catch(() => undefined); // best effort; it may never have existed
    return {
      ok: false,
      error,
      message: `Cannot write the teardown registration of "${experimentId}": ${
        errorMessage(error)
      }`,
    };
  }
  return { ok: true, held: heldRegistration(path, registration, lock) };
}

function heldRegistration(
  path: string,
  registration: TeardownRegistration,
  lock: FileLock,
): HeldRegistration {
  let removed: Promise<RemoveOutcome> | undefined;
  return {
    path,
    registration,
    remove: () => {
      removed ??= removeThenUnlock(path, lock);
      return removed;
    },
    abandon: () => {
      if (removed) return;
      removed = Promise.resolve({ ok: false, error: new Error("the registration was abandoned") });
      lock.release();
    },
  };
}

/** Deletes `path` (and fsyncs its directory), then drops `lock` whatever happened. */
export async function removeThenUnlock(path: string, lock: FileLock): Promise<RemoveOutcome> {
  try {
    await Deno.remove(path);
    await syncDir(dirname(path));
    return { ok: true };
  } catch (error) {
    return { ok: false, error };
  } finally {
    lock.release();
  }
}

/** Parses a registration file; undefined when it is missing, torn or malformed. */
export async function readRegistration(path: string): Promise<TeardownRegistration | undefined> {
  const raw = await readJsonObject(path);
  if (!raw || raw.schema !== "niceeval.teardown-registration/v1") return undefined;
  const strings = ["experimentId", "invocationId", "host", "processStartedAt"];
  if (!strings.every((field) => typeof raw[field] === "string")) return undefined;
  if (!isPositiveInt(raw.pid)) return undefined;
  const ids = raw.selectedEvalIds;
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === "string")) return undefined;
  return raw as unknown as TeardownRegistration;
}
