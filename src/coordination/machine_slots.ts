/**
 * Machine sandbox slots (scheduling.md MSB-1 … MSB-5, sandboxes.md rules 54–56): one flock per
 * unit of a provider's per-user, per-host `maxSandboxes` budget, in
 * `<state dir>/slots/<provider>/slot-<i>.lock`. A process tries its indices in ascending order and
 * never uses an index at or above its own budget; the kernel frees the slots of a killed process.
 * Waiting (polling, in-process priority) belongs to the caller.
 */
import { join } from "node:path";
import { tryAcquireLock } from "./lock.ts";

/** How often a process retries the slot files while it waits (MACHINE_SLOT_POLL_MS). */
export const MACHINE_SLOT_POLL_MS = 1000;

const PROVIDER_NAME_REGEXP = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** What a held slot file records (diagnostics only, rule 55). */
export interface MachineSlotOwner {
  readonly pid: number;
  readonly host: string;
  /** The Run that holds the slot, when known. */
  readonly runId?: string;
}

/** One held machine slot; released by closing its file. */
interface MachineSlot {
  readonly provider: string;
  readonly index: number;
  /** Idempotent. */
  release(): void;
}

/** `<state dir>/slots/<provider>/slot-<i>.lock`. */
export function machineSlotPath(stateDir: string, provider: string, index: number): string {
  if (!PROVIDER_NAME_REGEXP.test(provider)) {
    throw new RangeError(`Cannot use machine slots of provider "${provider}": invalid name`);
  }
  return join(stateDir, "slots", provider, `slot-${index}.lock`);
}

/**
 * Tries each slot index `0 … limit − 1` once, in order; the first free one is taken and stamped
 * with `{ pid, host, runId, since }`. Resolves null when every index is held.
 */
export async function tryAcquireMachineSlot(
  o: {
    readonly stateDir: string;
    readonly provider: string;
    readonly limit: number;
    readonly owner: MachineSlotOwner;
    /** ISO-8601 time written as `since`. */
    readonly since: string;
  },
): Promise<MachineSlot | null> {
  for (let index = 0; index < o.limit; index++) {
    const lock = await tryAcquireLock(machineSlotPath(o.stateDir, o.provider, index));
    if (lock === null) continue;
    try {
      await lock.writeContent(JSON.stringify({ ...o.owner, since: o.since }) + "\n");
    } catch (error) {
      lock.release();
      throw error;
    }
    return { provider: o.provider, index, release: () => lock.release() };
  }
  return null;
}

/**
 * Budgets by provider (MSB-1): the configured values, and `docker` = 2 × logical CPUs unless
 * configured. Providers not listed are unlimited and take no slot files.
 */
export function machineSlotLimits(
  configured: Readonly<Record<string, number>>,
  o: { readonly cpus: number },
): Readonly<Record<string, number>> {
  return Object.freeze({ docker: 2 * Math.max(1, o.cpus), ...configured });
}
