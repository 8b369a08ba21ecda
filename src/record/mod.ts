/**
 * @module record
 * Owns the on-disk Record: layout, atomic writes, document schemas, the writer that publishes
 * Runs, locators and slot IDs, and reuse identity. It holds no locks and never renders output.
 */
export { createExclusive, isTempName, redactedJson, writeTextAtomic } from "./atomic.ts";
export { locatorOf, parseLocator, slotIdOf } from "./ids.ts";
export {
  configHashOf,
  digestOf,
  executionDigestOf,
  FingerprintCache,
  planIdentityOf,
  slotIdentifier,
} from "./identity.ts";
export type { PlanIdentity } from "./identity.ts";
export { RecordWriteError, RecordWriter } from "./writer.ts";
export type { RunSpec } from "./documents.ts";
export { RecordReader } from "./reader.ts";
export { salvageRuns } from "./salvage.ts";
export type { SalvageOutcome } from "./salvage.ts";
export type { PublishedRun } from "./reader.ts";
export { candidateOf, carriedResults, carryDecider, loadCandidates } from "./carry.ts";
export type { CurrentIdentity } from "./carry.ts";
