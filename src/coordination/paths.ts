/** Project-scoped coordination paths (`scheduling.md` §26, `cli.md` COORD-1). */
import { join } from "node:path";
import { sha256Hex } from "../_shared/mod.ts";

/** `<project>/.niceeval/coordination`, machine-local and never committed. */
export function coordinationDirOf(projectRoot: string): string {
  return join(projectRoot, ".niceeval", "coordination");
}

/** `coordination/leases/<k>` with k = first 32 hex chars of SHA-256 of the key (LEASE-4). */
export function leaseDirOf(projectRoot: string, key: string): string {
  return join(coordinationDirOf(projectRoot), "leases", sha256Hex(key).slice(0, 32));
}

/** `coordination/teardowns` (ORPH-1). */
export function teardownsDirOf(projectRoot: string): string {
  return join(coordinationDirOf(projectRoot), "teardowns");
}

/** The `<d>-` file-name prefix of an Experiment's registrations: d = first 16 hex of SHA-256. */
export function registrationPrefixOf(experimentId: string): string {
  return `${sha256Hex(experimentId).slice(0, 16)}-`;
}
