/**
 * Owner stamps as E2B metadata (sandboxes.md §7.1) and the detached operations of rule 126:
 * `findOwned` lists by metadata over all pages, `destroyDetached` kills by id. Both need only the
 * port, never a Plan or user code (rule 23).
 */
import type { OwnedInstance, OwnerStamp } from "../../types.ts";
import type { E2BPort } from "./port.ts";

/** The metadata keys of §7.1. */
export const E2B_METADATA = Object.freeze({
  host: "niceeval-host",
  pid: "niceeval-pid",
  processStart: "niceeval-start",
  runId: "niceeval-run",
  provisionToken: "niceeval-token",
});

const FIELDS = ["host", "pid", "processStart", "runId", "provisionToken"] as const;

/** The owner stamp as metadata. */
export function e2bMetadata(owner: Partial<OwnerStamp>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const field of FIELDS) {
    const value = owner[field];
    if (value !== undefined) out[E2B_METADATA[field]] = String(value);
  }
  return out;
}

/** Reads the owner stamp back from metadata; absent or malformed fields are left out. */
export function ownerFromMetadata(
  metadata: Readonly<Record<string, string>> | undefined,
): Partial<OwnerStamp> {
  const m = metadata ?? {};
  const pid = Number(m[E2B_METADATA.pid]);
  const text = (field: "host" | "processStart" | "runId" | "provisionToken") => {
    const value = m[E2B_METADATA[field]];
    return value === undefined ? {} : { [field]: value };
  };
  return {
    ...text("host"),
    ...(Number.isSafeInteger(pid) && pid > 0 ? { pid } : {}),
    ...text("processStart"),
    ...text("runId"),
    ...text("provisionToken"),
  };
}

/**
 * Instances stamped with every field of `filter`; an empty filter lists everything and keeps the
 * instances carrying `niceeval-token` (rule 126).
 */
export async function findOwnedSandboxes(
  port: E2BPort,
  filter: Partial<OwnerStamp>,
  signal: AbortSignal,
): Promise<OwnedInstance[]> {
  signal.throwIfAborted();
  const wanted = e2bMetadata(filter);
  const found: OwnedInstance[] = [];
  for await (const sandbox of port.list(wanted, signal)) {
    signal.throwIfAborted();
    const metadata = sandbox.metadata ?? {};
    if (metadata[E2B_METADATA.provisionToken] === undefined) continue;
    // The service filters already; matching here again keeps a lax filter from widening the set.
    if (Object.entries(wanted).some(([k, v]) => metadata[k] !== v)) continue;
    found.push({
      id: sandbox.id,
      owner: ownerFromMetadata(metadata),
      state: sandbox.state === "running"
        ? "running"
        : sandbox.state === "paused"
        ? "stopped"
        : "unknown",
      ...(sandbox.startedAt === undefined ? {} : { createdAt: sandbox.startedAt }),
    });
  }
  return found;
}

/** Kills a sandbox by id; a sandbox the service does not know is already gone. */
export async function destroySandbox(
  port: E2BPort,
  id: string,
  signal: AbortSignal,
): Promise<"destroyed" | "already-gone"> {
  signal.throwIfAborted();
  try {
    return await port.kill(id, signal) ? "destroyed" : "already-gone";
  } catch (error) {
    if (isNotFound(error)) return "already-gone";
    throw error;
  }
}

/** The SDK's not-found answers (by name: errors from another copy of the SDK count too). */
export function isNotFound(error: unknown): boolean {
  const e = (typeof error === "object" && error !== null ? error : {}) as {
    name?: unknown;
    statusCode?: unknown;
  };
  return e.name === "NotFoundError" || e.name === "SandboxNotFoundError" ||
    e.name === "FileNotFoundError" || e.statusCode === 404;
}
