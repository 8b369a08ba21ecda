/** zod schemas of the Record documents niceeval reads back (REC-11: invalid → `record-invalid`). */
import { z } from "zod";
import { isRecordUuid, isSlotId } from "./ids.ts";

const iso = z.string().min(1);
const sha = z.string().regex(/^sha256:[0-9a-f]{64}$/);
/** RunIds, AttemptIds and the like: checked before any of them becomes part of a path (REC-1). */
const uuid = z.string().refine(isRecordUuid, "must be a lowercase UUID v4");
const slotId = z.string().refine(isSlotId, "must be a SlotId (16 hex digits, -, ordinal)");

/** `record.json`. */
export const RECORD_SCHEMA = z.object({
  format: z.literal("niceeval.record"),
  schemaVersion: z.number().int().positive(),
  recordId: uuid,
  createdAt: iso,
});

/** `run.json` (the fields readers use; others are allowed). */
export const RUN_SCHEMA = z.object({
  format: z.literal("niceeval.run"),
  schemaVersion: z.literal(1),
  runId: uuid,
  invocationId: uuid,
  experimentId: z.string().min(1),
  niceevalVersion: z.string(),
  startedAt: iso,
  completedAt: iso.nullable(),
  completion: z.enum(["completed", "interrupted"]).nullable(),
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
  diagnostics: z.array(z.object({
    code: z.string(),
    level: z.enum(["info", "warning", "error"]),
    message: z.string(),
    evalId: z.string().nullable(),
    data: z.record(z.string(), z.unknown()).nullable(),
  })),
}).loose();

/** `members/<SlotId>.json`. */
export const MEMBER_SCHEMA = z.object({
  format: z.literal("niceeval.member"),
  schemaVersion: z.literal(1),
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
  schemaVersion: z.literal(1),
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
  schemaVersion: z.literal(1),
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
  schemaVersion: z.literal(1),
  turns: z.array(z.object({}).loose()),
  phases: z.array(z.unknown()),
  diagnostics: z.array(z.unknown()),
  logs: z.array(z.unknown()),
}).loose();

/** A parsed run document. */
export type RunDoc = z.infer<typeof RUN_SCHEMA>;
/** A parsed member document. */
export type MemberDoc = z.infer<typeof MEMBER_SCHEMA>;
/** A parsed attempt document. */
export type AttemptDoc = z.infer<typeof ATTEMPT_SCHEMA>;
/** A parsed assertions document. */
export type AssertionsDoc = z.infer<typeof ASSERTIONS_SCHEMA>;
