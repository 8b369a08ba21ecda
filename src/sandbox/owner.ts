/**
 * Owner stamps and their classification (sandboxes.md §7.1–§7.2). The process identity is read
 * once at startup by coordination (rule 92); liveness and start times come from its injectable
 * {@link ProcessProbe}, with its pid-reuse tolerance.
 */
import { type ProcessIdentity, type ProcessProbe, sameProcessStart } from "../coordination/mod.ts";
import type { OwnerStamp } from "./types.ts";

/** The part of the owner stamp that is fixed for the whole process. */
export interface OwnerIdentity {
  readonly host: string;
  readonly pid: number;
  /** ISO-8601, whole seconds, or `unknown`. */
  readonly processStart: string;
}

/** `alive` instances are never pruned; `orphan` ones are; `unverified` only with `--force`. */
export type OwnerStatus = "alive" | "orphan" | "unverified";

/** The owner-stamp form of this process's identity (read once at startup, rule 92). */
export function ownerIdentityOf(identity: ProcessIdentity): OwnerIdentity {
  return { host: identity.host, pid: identity.pid, processStart: identity.processStartedAt };
}

/**
 * Classifies an owner stamp by the §7.2 table, checked in order. A pid whose liveness cannot be
 * told is `unverified`.
 */
export async function classifyOwner(
  stamp: Partial<OwnerStamp>,
  o: { host: string; probe: ProcessProbe },
): Promise<OwnerStatus> {
  const { host, pid, processStart } = stamp;
  const complete = typeof host === "string" && typeof pid === "number" &&
    Number.isSafeInteger(pid) && pid > 0 && typeof processStart === "string" &&
    typeof stamp.runId === "string" && typeof stamp.provisionToken === "string";
  if (!complete || host !== o.host) return "unverified";
  const alive = await o.probe.isAlive(pid);
  if (alive === false) return "orphan";
  if (alive === undefined || Number.isNaN(Date.parse(processStart))) return "unverified";
  const same = sameProcessStart(processStart, await o.probe.startTimeOf(pid));
  if (same === undefined) return "unverified";
  return same ? "alive" : "orphan";
}
