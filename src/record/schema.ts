/** zod schemas of the Record documents niceeval reads back (REC-11: invalid → `record-invalid`). */
import { z } from "zod";
import { isRecordUuid, isSlotId } from "./ids.ts";

const iso = z.string().min(1);
const sha = z.string().regex(/^sha256:[0-9a-f]{64}$/);
/** RunIds, AttemptIds and the like: checked before any of them becomes part of a path (REC-1). */
const uuid = z.string().refine(isRecordUuid, "must be a lowercase UUID v4");
const slotId = z.string().refine(isSlotId, "must be a SlotId (16 hex digits, -, ordinal)");
/** Documents of layout v1 (files) and v2 (log records) differ only in their version. */
const docVersion = z.union([z.literal(1), z.literal(2)]);

const diagnostic = z.object({
  code: z.string(),
  level: z.enum(["info", "warning", "error"]),
  message: z.string(),
  evalId: z.string().nullable(),
  data: z.record(z.string(), z.unknown()).nullable(),
});

/** How a Run ended; `crashed`: sealed by salvage after its process was gone (layout v2). */
const completion = z.enum(["completed", "interrupted", "crashed"]);

/** `record.json`. */
export const RECORD_SCHEMA = z.object({
  format: z.literal("niceeval.record"),
  schemaVersion: z.number().int().positive(),
  recordId: uuid,
  createdAt: iso,
});

/** The fields of `run.json` that both layouts share. */
const runHeader = {
  format: z.literal("niceeval.run"),
  runId: uuid,
  invocationId: uuid,
  experimentId: z.string().min(1),
  niceevalVersion: z.string(),
  startedAt: iso,
  config: z.object({
    agent: z.string(),
    model: z.string().nullable(),
    flags: z.record(z.string(), z.unknown()),
    provider: z.string().nullable(),
    configHash: sha,
  }).loose(),
  options: z.object({
    attempts: z.number().int().positive(),
    earlyExit: z.boolean(),
    timeoutMs: z.number().nullable(),
    budgetUSD: z.number().nullable(),
    rerun: z.enum(["none", "failed", "all"]),
  }),
  expectedSlots: z.array(z.object({
    slotId,
    evalId: z.string(),
    ordinal: z.number().int().nonnegative(),
    kind: z.enum(["pass", "score"]),
    groupId: z.string().nullable(),
    inputFingerprint: sha,
    executionIdentityDigest: sha,
  })),
};

/** `run.json` of layout v1 (the fields readers use; others are allowed). */
export const RUN_SCHEMA = z.object({
  ...runHeader,
  schemaVersion: z.literal(1),
  completedAt: iso.nullable(),
  completion: completion.nullable(),
  diagnostics: z.array(diagnostic),
}).loose();

/** `run.json` of layout v2: the header; completion and diagnostics are log records. */
export const RUN_HEADER_SCHEMA = z.object({ ...runHeader, schemaVersion: z.literal(2) }).loose();

/** A `diagnostic` log record's diagnostic. */
export const DIAGNOSTIC_SCHEMA = diagnostic;

/** The `end` log record. */
export const END_SCHEMA = z.object({ completedAt: iso, completion });

/** `members/<SlotId>.json`. */
export const MEMBER_SCHEMA = z.object({
  format: z.literal("niceeval.member"),
  schemaVersion: docVersion,
  slotId,
  evalId: z.string(),
  ordinal: z.number().int().nonnegative(),
  action: z.enum(["executed", "carried", "not-dispatched", "interrupted"]),
  attempt: z.object({ originRunId: uuid, attemptId: uuid }).nullable(),
  reason: z.string().nullable(),
});

const usage = z.object({
  inputTokens: z.number().nullable(),
  outputTokens: z.number().nullable(),
}).loose();

/** `attempts/<AttemptId>/attempt.json` (final form). */
export const ATTEMPT_SCHEMA = z.object({
  format: z.literal("niceeval.attempt"),
  schemaVersion: docVersion,
  attemptId: uuid,
  originRunId: uuid,
  experimentId: z.string(),
  evalId: z.string(),
  ordinal: z.number().int().nonnegative(),
  slotId,
  executionIdentityDigest: sha,
  kind: z.enum(["pass", "score"]),
  outcome: z.enum(["completed", "errored", "cancelled", "interrupted"]),
  skipReason: z.string().nullable(),
  score: z.number().nullable(),
  // possible and passAt were added within schemaVersion 1, score evals only (docs/scores.md).
  possible: z.number().nullable().optional(),
  passAt: z.number().nullable().optional(),
  startedAt: iso,
  endedAt: iso,
  durationMs: z.number().nonnegative(),
  timedMs: z.number().nonnegative(),
  usage: usage.nullable(),
  estimatedCostUSD: z.number().nullable(),
  // location and stack were added within schemaVersion 1: older Records lack them (optional).
  error: z.object({
    code: z.string(),
    phase: z.string(),
    message: z.string(),
    scope: z.string(),
    location: z.string().nullable().optional(),
    stack: z.string().nullable().optional(),
  }).nullable(),
  retries: z.array(z.unknown()),
}).loose();

/** `assertions.json`: entries are checked for the fields the verdict fold reads. */
export const ASSERTIONS_SCHEMA = z.object({
  format: z.literal("niceeval.assertions"),
  schemaVersion: docVersion,
  entries: z.array(
    z.object({
      status: z.enum(["passed", "failed", "unavailable", "errored"]),
      optional: z.boolean(),
      gate: z.boolean(),
      criterion: z.string(),
    }).loose(),
  ),
});

/** `events.json`. */
export const EVENTS_SCHEMA = z.object({
  format: z.literal("niceeval.events"),
  schemaVersion: docVersion,
  turns: z.array(z.object({}).loose()),
  phases: z.array(z.unknown()),
  diagnostics: z.array(z.unknown()),
  logs: z.array(z.unknown()),
}).loose();

/**
 * A Run as readers see it: `run.json` of v1, or the v2 header with completion and diagnostics
 * (filled from the log when the Run's index is read).
 */
export type RunDoc = z.infer<typeof RUN_VIEW>;

const RUN_VIEW = z.object({
  ...runHeader,
  schemaVersion: docVersion,
  completedAt: iso.nullable(),
  completion: completion.nullable(),
  diagnostics: z.array(diagnostic),
}).loose();
/** A parsed member document. */
export type MemberDoc = z.infer<typeof MEMBER_SCHEMA>;
/** A parsed attempt document. */
export type AttemptDoc = z.infer<typeof ATTEMPT_SCHEMA>;
/** A parsed assertions document. */
export type AssertionsDoc = z.infer<typeof ASSERTIONS_SCHEMA>;
