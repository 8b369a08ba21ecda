/**
 * @module record
 * Owns the on-disk Record: layout, atomic writes, document schemas, the writer that publishes
 * Runs, locators and slot IDs, and reuse identity. It holds no locks and never renders output.
 */
export {
  createExclusive,
  isTempName,
  recordJson,
  syncDirectory,
  writeJsonAtomic,
  writeTextAtomic,
} from "./atomic.ts";
export { locatorOf, parseLocator, slotIdOf } from "./ids.ts";
export {
  configHashOf,
  digestOf,
  executionDigestOf,
  FingerprintCache,
  planIdentityOf,
  slotIdentifier,
} from "./identity.ts";
export type { PlanIdentity, PlanIdentityOptions, SlotIdentity, SlotRef } from "./identity.ts";
export { SCHEMA_VERSION } from "./documents.ts";
export type { ExpectedSlot, MemberAction, RunHeader } from "./documents.ts";
export { RecordWriteError, RecordWriter } from "./writer.ts";
export type { RunSpec, WriterSlot } from "./documents.ts";
export { RecordReader, verdictOf } from "./reader.ts";
export type { PublishedRun, RecordScan, StoredAttempt } from "./reader.ts";
export { candidateOf, carryDecider, loadCandidates } from "./carry.ts";
export type { Candidate, Candidates, CurrentIdentity } from "./carry.ts";
export type { AssertionsDoc, AttemptDoc, MemberDoc, RunDoc } from "./schema.ts";
