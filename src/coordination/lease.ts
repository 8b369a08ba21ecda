/**
 * sharedState leases (LEASE-1 … LEASE-9): acquire, release, retain. Waiting polls and never takes
 * a lease over, whatever the time, the heartbeat, the owner's pid or the flock say (LEASE-5).
 */
import { join } from "node:path";
import { type Clock, isoTime, type Random, realRandom, sleep } from "../_shared/mod.ts";
import { createFileExclusive, recordJson } from "./_fs.ts";
import type { KeyedMutex } from "./keyed_mutex.ts";
import {
  deriveLeaseState,
  leaseFileNames,
  type LeaseOwnerRecord,
  readLeaseFiles,
  writeReleaseRecord,
} from "./lease_state.ts";
import { type FileLock, tryAcquireLock } from "./lock.ts";
import { leaseDirOf } from "./paths.ts";
import type { ProcessIdentity } from "./process_info.ts";

/** LEASE_POLL_MS of `scheduling.md` §27. */
const LEASE_POLL_MS = 2_000;

/** What a waiter learns each time it starts waiting (LEASE-6 `state-lease-waiting`). */
export interface LeaseWaitingInfo {
  /** True when the lease is retained and only explicit recovery (LEASE-10) frees it. */
  readonly retained: boolean;
}

/** Options of {@link acquireLease}. */
interface AcquireLeaseOptions {
  /** The project root; the lease lives under `.niceeval/coordination/leases/`. */
  projectRoot: string;
  experimentId: string;
  invocationId: string;
  /** This process, read once at startup. */
  identity: ProcessIdentity;
  /** Aborting rejects the wait with `signal.reason`; no lease is then held. */
  signal: AbortSignal;
  clock: Clock;
  /** Source of the owner token. @default realRandom */
  random?: Random;
  /** The Invocation's in-process mutex (LEASE-2); without one, only the flock serialises. */
  mutex?: KeyedMutex;
  /** @default LEASE_POLL_MS */
  pollMs?: number;
  /**
   * Called when waiting starts, and once more if the lease turns retained while waiting; never
   * more than twice per acquisition. Never carries the owner token.
   */
  onWaiting?: (info: LeaseWaitingInfo) => void;
}

/** Result of {@link HeldLease.release}; a failure means the lease was retained instead. */
type LeaseReleaseOutcome = { readonly ok: true } | {
  readonly ok: false;
  readonly error: unknown;
};

/** A held lease: the flock on `lock` plus `owner-<g>.json`. Disposing it retains it. */
export interface HeldLease extends AsyncDisposable {
  readonly key: string;
  readonly generation: number;
  readonly owner: LeaseOwnerRecord;
  /** The lease directory. */
  readonly dir: string;
  /**
   * Releases the lease (LEASE-8): writes `released-<g>.json` (`by: "owner"`), then drops the
   * flock. When the write fails the flock is dropped anyway and the lease stays retained
   * (`release-failed`). Idempotent: later calls return the first outcome.
   */
  release(): Promise<LeaseReleaseOutcome>;
  /** Drops the flock and writes nothing; idempotent, a no-op after release (LEASE-8 retain). */
  retain(): void;
}

/**
 * Acquires the sharedState lease `key` (LEASE-5): waits while another process holds it or while it
 * is retained, polling on `clock`, with no timeout.
 * @throws `signal.reason` on abort; an I/O error of the lease directory.
 */
export async function acquireLease(key: string, options: AcquireLeaseOptions): Promise<HeldLease> {
  const { signal, clock, mutex, pollMs = LEASE_POLL_MS } = options;
  const dir = leaseDirOf(options.projectRoot, key);
  let notified: boolean | undefined;
  const notify = (retained: boolean) => {
    if (notified === true || notified === retained) return;
    notified = retained;
    options.onWaiting?.({ retained });
  };
  if (mutex?.isHeld(key)) notify(false);
  const permit = mutex ? await mutex.acquire(key, { signal }) : undefined;
  try {
    for (;;) {
      signal.throwIfAborted();
      const attempt = await tryTakeLease(dir, key, options);
      if ("lock" in attempt) return heldLease(key, dir, attempt, clock, permit);
      notify(attempt.retained);
      await sleep(clock, pollMs, { signal });
    }
  } catch (error) {
    permit?.[Symbol.dispose]();
    throw error;
  }
}

type TakeAttempt = { lock: FileLock; owner: LeaseOwnerRecord } | { retained: boolean };

async function tryTakeLease(
  dir: string,
  key: string,
  options: AcquireLeaseOptions,
): Promise<TakeAttempt> {
  const lock = await tryAcquireLock(join(dir, "lock"));
  if (!lock) return { retained: false };
  try {
    const files = await readLeaseFiles(dir);
    if (deriveLeaseState({ ...files, lockTaken: false }) !== "free") {
      lock.release();
      return { retained: true };
    }
    await writeKeyOnce(dir, key);
    const generation = (files.generation ?? 0) + 1;
    const { identity } = options;
    const owner: LeaseOwnerRecord = {
      schema: "niceeval.shared-state-owner/v1",
      key,
      generation,
      ownerToken: (options.random ?? realRandom).uuid(),
      experimentId: options.experimentId,
      invocationId: options.invocationId,
      host: identity.host,
      pid: identity.pid,
      processStartedAt: identity.processStartedAt,
      acquiredAt: isoTime(options.clock.now()),
    };
    await createFileExclusive(join(dir, leaseFileNames(generation).owner), recordJson(owner));
    return { lock, owner };
  } catch (error) {
    lock.release();
    // Someone planted or raced an owner record for g+1: never overwrite it; it is now retained.
    if (error instanceof Deno.errors.AlreadyExists) return { retained: true };
    throw error;
  }
}

async function writeKeyOnce(dir: string, key: string): Promise<void> {
  try {
    await createFileExclusive(join(dir, "key"), key + "\n");
  } catch (error) {
    if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
  }
}

function heldLease(
  key: string,
  dir: string,
  taken: { lock: FileLock; owner: LeaseOwnerRecord },
  clock: Clock,
  permit: Disposable | undefined,
): HeldLease {
  const { lock, owner } = taken;
  let outcome: Promise<LeaseReleaseOutcome> | undefined;
  const drop = () => {
    lock.release();
    permit?.[Symbol.dispose]();
  };
  const release = () => {
    outcome ??= writeReleased(dir, owner, clock).finally(drop);
    return outcome;
  };
  const retain = () => {
    if (outcome) return; // already released, or a release is writing before it drops the flock
    outcome = Promise.resolve({ ok: false, error: new Error("the lease was retained") });
    drop();
  };
  return {
    key,
    generation: owner.generation,
    owner,
    dir,
    release,
    retain,
    [Symbol.asyncDispose]: () => Promise.resolve(retain()),
  };
}

async function writeReleased(
  dir: string,
  owner: LeaseOwnerRecord,
  clock: Clock,
): Promise<LeaseReleaseOutcome> {
  try {
    await writeReleaseRecord(dir, { owner, by: "owner", at: isoTime(clock.now()) });
    return { ok: true };
  } catch (error) {
    return { ok: false, error };
  }
}
