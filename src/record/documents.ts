/**
 * Builders of the Record documents (cli.md §9.2, layout v2 of docs/record.md); keys appear in the
 * order the spec shows.
 */
import { isoTime } from "../_shared/mod.ts";
import type { AttemptResult, RecordedDiagnostic } from "../_shared/mod.ts";
import type { JsonValue } from "../_shared/mod.ts";

/** Schema version of every document this niceeval writes (and the newest it reads). */
export const SCHEMA_VERSION = 2;

/** Name of a Run's append-only log (layout v2). */
export const LOG_NAME = "records.log";

/** One expected slot of a Run. */
interface ExpectedSlot {
  readonly slotId: string;
  readonly evalId: string;
  readonly ordinal: number;
  readonly kind: "pass" | "score";
  readonly groupId: string | null;
  readonly inputFingerprint: string;
  readonly executionIdentityDigest: string;
}

/** Everything `run.json` holds besides completion. */
interface RunHeader {
  readonly runId: string;
  readonly invocationId: string;
  readonly experimentId: string;
  readonly niceevalVersion: string;
  readonly startedAt: number;
  readonly config: {
    readonly agent: string;
    readonly model: string | null;
    readonly flags: Readonly<Record<string, JsonValue>>;
    readonly provider: string | null;
    readonly configHash: string;
  };
  readonly options: {
    readonly attempts: number;
    readonly earlyExit: boolean;
    readonly timeoutMs: number | null;
    readonly budgetUSD: number | null;
    readonly rerun: "none" | "failed" | "all";
  };
  /** May hold richer objects (the writer's slots): `run.json` takes only these fields. */
  readonly expectedSlots: readonly ExpectedSlot[];
}

/** One planned slot as the writer needs it. */
export interface WriterSlot {
  readonly position: number;
  readonly slotId: string;
  readonly evalId: string;
  readonly ordinal: number;
  readonly kind: "pass" | "score";
  readonly executionIdentityDigest: string;
  /** Set for carried slots: the origin Attempt. */
  readonly carried: { readonly originRunId: string; readonly attemptId: string } | null;
}

/** One Run to write. */
export interface RunSpec {
  readonly header: RunHeader;
  readonly slots: readonly WriterSlot[];
}

/**
 * `run.json` of layout v2: the Run's header, written once before anything is appended to its log.
 * Completion and diagnostics are records of the log.
 */
export function runHeaderDocument(header: RunHeader): Record<string, unknown> {
  return {
    format: "niceeval.run",
    schemaVersion: SCHEMA_VERSION,
    runId: header.runId,
    invocationId: header.invocationId,
    experimentId: header.experimentId,
    niceevalVersion: header.niceevalVersion,
    startedAt: isoTime(header.startedAt),
    config: {
      agent: header.config.agent,
      model: header.config.model,
      reasoningEffort: null,
      flags: header.config.flags,
      labels: {},
      provider: header.config.provider,
      configHash: header.config.configHash,
    },
    options: header.options,
    expectedSlots: header.expectedSlots.map(expectedSlotOf),
  };
}

/**
 * Only the ExpectedSlot fields of a slot, in this order: the caller may pass richer slot objects
 * (the writer's own, so a Run does not hold a second object per slot).
 */
export function expectedSlotOf(slot: unknown): ExpectedSlot {
  const s = slot as ExpectedSlot;
  return {
    slotId: s.slotId,
    evalId: s.evalId,
    ordinal: s.ordinal,
    kind: s.kind,
    groupId: s.groupId,
    inputFingerprint: s.inputFingerprint,
    executionIdentityDigest: s.executionIdentityDigest,
  };
}

/** How a Run ended: `crashed` is a Run sealed by salvage after its process was gone. */
export type RunCompletion = "completed" | "interrupted" | "crashed";

/** The log record of a settled Attempt: its three documents. */
export function settledAttemptRecord(
  header: AttemptHeader,
  result: AttemptResult,
): Record<string, unknown> {
  return {
    record: "attempt",
    attempt: attemptDocument(header, result),
    assertions: assertionsDocument(result),
    events: eventsDocument(result),
  };
}

/** The log record of a member. */
export function memberRecord(m: Parameters<typeof memberDocument>[0]): Record<string, unknown> {
  return { record: "member", member: memberDocument(m) };
}

/** The log record of a persisted diagnostic. */
export function diagnosticRecord(
  d: RecordedDiagnostic & { readonly evalId: string | null },
): Record<string, unknown> {
  return {
    record: "diagnostic",
    diagnostic: {
      code: d.code,
      level: d.level,
      message: d.message,
      evalId: d.evalId,
      data: d.data,
    },
  };
}

/** The last record of a Run's log: how and when it ended. */
export function endRecord(completedAt: number, completion: RunCompletion): Record<string, unknown> {
  return { record: "end", completedAt: isoTime(completedAt), completion };
}

/** How a member filled its slot. */
export type MemberAction = "executed" | "carried" | "not-dispatched" | "interrupted";

/** `members/<SlotId>.json`. */
export function memberDocument(m: {
  slotId: string;
  evalId: string;
  ordinal: number;
  action: MemberAction;
  attempt: { originRunId: string; attemptId: string } | null;
  reason: string | null;
}): Record<string, unknown> {
  return {
    format: "niceeval.member",
    schemaVersion: SCHEMA_VERSION,
    slotId: m.slotId,
    evalId: m.evalId,
    ordinal: m.ordinal,
    action: m.action,
    attempt: m.attempt,
    reason: m.reason,
  };
}

/** What `attempt.json` needs besides the result. */
export interface AttemptHeader {
  readonly attemptId: string;
  readonly originRunId: string;
  readonly experimentId: string;
  readonly evalId: string;
  readonly ordinal: number;
  readonly slotId: string;
  readonly executionIdentityDigest: string;
  readonly kind: "pass" | "score";
  readonly startedAt: number;
}

/** `attempt.json`, reserved (`result` null) or final. */
export function attemptDocument(
  h: AttemptHeader,
  result: AttemptResult | null,
): Record<string, unknown> {
  return {
    format: "niceeval.attempt",
    schemaVersion: SCHEMA_VERSION,
    attemptId: h.attemptId,
    originRunId: h.originRunId,
    experimentId: h.experimentId,
    evalId: h.evalId,
    ordinal: h.ordinal,
    slotId: h.slotId,
    executionIdentityDigest: h.executionIdentityDigest,
    kind: h.kind,
    outcome: result?.outcome ?? null,
    skipReason: result?.skipReason ?? null,
    score: result?.score ?? null,
    // Score evals only (docs/scores.md); readers of older Records find neither.
    ...(h.kind === "score"
      ? { possible: result?.possible ?? null, passAt: result?.passAt ?? null }
      : {}),
    startedAt: isoTime(h.startedAt),
    endedAt: result ? isoTime(result.endedAt) : null,
    durationMs: result ? result.endedAt - result.startedAt : null,
    timedMs: result?.timedMs ?? null,
    usage: result?.usage ? usageDocument(result.usage) : null,
    estimatedCostUSD: result?.estimatedCostUSD ?? null,
    error: result?.error ? errorDocument(result.error) : null,
    retries: result?.retries ?? [],
  };
}

/** The `error` of `attempt.json`: keys in REC-2 order, `location` and `stack` last. */
function errorDocument(e: NonNullable<AttemptResult["error"]>): Record<string, string | null> {
  return {
    code: e.code,
    phase: e.phase,
    message: e.message,
    scope: e.scope,
    location: e.location ?? null,
    stack: e.stack ?? null,
  };
}

function usageDocument(u: NonNullable<AttemptResult["usage"]>): Record<string, number | null> {
  return {
    inputTokens: u.inputTokens ?? null,
    outputTokens: u.outputTokens ?? null,
    cacheReadTokens: u.cacheReadTokens ?? null,
    cacheCreationTokens: u.cacheCreationTokens ?? null,
    reasoningTokens: u.reasoningTokens ?? null,
    requests: u.requests ?? null,
    costUSD: u.costUSD ?? null,
  };
}

/** `assertions.json`. */
export function assertionsDocument(result: AttemptResult): Record<string, unknown> {
  return {
    format: "niceeval.assertions",
    schemaVersion: SCHEMA_VERSION,
    entries: result.details.assertions,
  };
}

/** `events.json`. */
export function eventsDocument(result: AttemptResult): Record<string, unknown> {
  const d = result.details;
  return {
    format: "niceeval.events",
    schemaVersion: SCHEMA_VERSION,
    turns: d.turns.map((turn) => ({
      sessionId: turn.sessionId,
      session: turn.session,
      index: turn.index,
      input: turn.input,
      status: turn.status,
      events: turn.events,
      usage: turn.usage,
      startedAt: isoTime(turn.startedAt),
      endedAt: isoTime(turn.endedAt),
    })),
    phases: d.phases.map((p) => ({
      phase: p.phase,
      startedAt: isoTime(p.startedAt),
      endedAt: isoTime(p.endedAt),
    })),
    diagnostics: d.diagnostics,
    logs: d.logs.map((l) => ({ at: isoTime(l.at), text: l.text })),
  };
}

/** `record.json`. */
export function recordDocument(recordId: string, createdAt: number): Record<string, unknown> {
  return {
    format: "niceeval.record",
    schemaVersion: SCHEMA_VERSION,
    recordId,
    createdAt: isoTime(createdAt),
  };
}
