/**
 * The index of a layout-v2 Run (docs/record.md), built in one sequential pass over its log:
 * members by SlotId, settled Attempts by AttemptId (their document, recomputed verdict and where
 * their record lies, so assertions and events are read again only when asked for), diagnostics and
 * the end record. Every record is validated; the first problem is returned as a message.
 */
import { foldVerdict, type SealedAssertion } from "../expect/mod.ts";
import { frameAt } from "./log.ts";
import { slotIdOf } from "./ids.ts";
import {
  ASSERTIONS_SCHEMA,
  type AssertionsDoc,
  ATTEMPT_SCHEMA,
  type AttemptDoc,
  DIAGNOSTIC_SCHEMA,
  END_SCHEMA,
  EVENTS_SCHEMA,
  MEMBER_SCHEMA,
  type MemberDoc,
  type RunDoc,
} from "./schema.ts";
import type { ZodType } from "zod";

/** A recomputed verdict (REC-6). */
export type StoredVerdict = "passed" | "failed" | "errored" | "skipped" | "scored" | "interrupted";

/** A settled Attempt of the log. */
export interface IndexedAttempt {
  readonly doc: AttemptDoc;
  readonly verdict: StoredVerdict;
  /** Where its record's frame lies in the log. */
  readonly offset: number;
  readonly length: number;
  /** Its assertions and events documents, when the index was asked to keep them. */
  readonly documents?: {
    readonly assertions: AssertionsDoc;
    readonly events: Record<string, unknown>;
  };
}

/** What one pass over a Run's log found. */
export interface RunIndex {
  readonly members: ReadonlyMap<string, MemberDoc>;
  readonly attempts: ReadonlyMap<string, IndexedAttempt>;
  readonly diagnostics: RunDoc["diagnostics"];
  readonly end: { readonly completedAt: string; readonly completion: RunDoc["completion"] } | null;
  /** End of the last whole frame, and the torn bytes after it. */
  readonly validEnd: number;
  readonly tornBytes: number;
}

/** A settled Attempt's three documents, as one record holds them. */
export interface AttemptRecord {
  readonly attempt: AttemptDoc;
  readonly assertions: AssertionsDoc;
  readonly events: Record<string, unknown>;
}

/** Thrown for a log that is not a valid Run log; the message names the record. */
export class LogProblem extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LogProblem";
  }
}

/**
 * Indexes the log of Run `runId`. `published`: the log must end with the end record, with no torn
 * tail; otherwise (salvage) a torn tail is ignored and the end record may be missing.
 * `keepDocuments`: each indexed Attempt keeps its assertions and events (a report of them all).
 */
export function indexRunLog(
  bytes: Uint8Array,
  runId: string,
  published: boolean,
  keepDocuments = false,
): RunIndex {
  // Frame by frame: only the index is kept, never every parsed record at once.
  let offset = 0;
  const members = new Map<string, MemberDoc>();
  const attempts = new Map<string, IndexedAttempt>();
  const diagnostics: RunDoc["diagnostics"][number][] = [];
  let end: RunIndex["end"] = null;
  for (let i = 0;; i++) {
    const entry = offset < bytes.length ? frameAt(bytes, offset) : undefined;
    if (entry === undefined) break;
    offset += entry.length;
    const at = `record ${i + 1}`;
    if (end !== null) throw new LogProblem(`${at}: follows the end record`);
    const value = entry.value;
    switch (value.record) {
      case "attempt": {
        const { attempt, assertions, events } = attemptRecordOf(value, runId, at);
        if (attempts.has(attempt.attemptId)) {
          throw new LogProblem(`${at}: Attempt ${attempt.attemptId} is recorded twice`);
        }
        attempts.set(attempt.attemptId, {
          doc: attempt,
          verdict: verdictOf(attempt, assertions),
          offset: entry.offset,
          length: entry.length,
          ...(keepDocuments ? { documents: { assertions, events } } : {}),
        });
        break;
      }
      case "member": {
        const member = parse(MEMBER_SCHEMA, value.member, `${at}: member`);
        const problem = memberProblem(member, member.slotId, runId);
        if (problem) throw new LogProblem(`${at}: ${problem}`);
        if (members.has(member.slotId)) {
          throw new LogProblem(`${at}: slot ${member.slotId} has a second member`);
        }
        members.set(member.slotId, member);
        break;
      }
      case "diagnostic":
        diagnostics.push(parse(DIAGNOSTIC_SCHEMA, value.diagnostic, `${at}: diagnostic`));
        break;
      case "end":
        end = parse(END_SCHEMA, value, at);
        break;
      default:
        throw new LogProblem(`${at}: unknown record ${JSON.stringify(value.record)}`);
    }
  }
  const tornBytes = bytes.length - offset;
  if (published && tornBytes > 0) {
    throw new LogProblem(`ends with ${tornBytes} byte(s) that are no whole record`);
  }
  if (published && end === null) throw new LogProblem("has no end record");
  return {
    members,
    attempts,
    diagnostics,
    end,
    validEnd: offset,
    tornBytes,
  };
}

/** The documents of one `attempt` record, checked against its Run. */
export function attemptRecordOf(
  value: Record<string, unknown>,
  runId: string,
  at: string,
): AttemptRecord {
  const attempt = parse(ATTEMPT_SCHEMA, value.attempt, `${at}: attempt`);
  if (attempt.originRunId !== runId) {
    throw new LogProblem(`${at}: Attempt ${attempt.attemptId} names run ${attempt.originRunId}`);
  }
  if (attempt.slotId !== slotIdOf(attempt.evalId, attempt.ordinal)) {
    throw new LogProblem(`${at}: slotId does not match its evalId and ordinal`);
  }
  const assertions = parse(ASSERTIONS_SCHEMA, value.assertions, `${at}: assertions`);
  // Nothing in a verdict comes from events, but an Attempt that is reused or reported must be
  // whole: a damaged transcript fails here, not later in `show @<locator>`.
  const events = parse(EVENTS_SCHEMA, value.events, `${at}: events`) as Record<string, unknown>;
  return { attempt, assertions, events };
}

/** Reads the `attempt` record framed at `offset` of a log again (`show @locator`). */
export async function readAttemptRecord(
  path: string,
  offset: number,
  length: number,
  runId: string,
): Promise<AttemptRecord> {
  const bytes = new Uint8Array(length);
  {
    using file = await Deno.open(path, { read: true });
    await file.seek(offset, Deno.SeekMode.Start);
    let read = 0;
    while (read < length) {
      const n = await file.read(bytes.subarray(read));
      if (n === null) break;
      read += n;
    }
  }
  const entry = frameAt(bytes, 0);
  if (!entry) throw new LogProblem(`the record at offset ${offset} changed while being read`);
  return attemptRecordOf(entry.value, runId, `offset ${offset}`);
}

function parse<T>(schema: ZodType<T>, value: unknown, at: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new LogProblem(
    `${at}: ${issue?.path.join(".") || "document"}: ${issue?.message ?? "invalid"}`,
  );
}

/** Why a member document contradicts its slot or REC-5, or undefined when it does not. */
export function memberProblem(doc: MemberDoc, slotId: string, runId: string): string | undefined {
  if (doc.slotId !== slotId) return `slotId "${doc.slotId}" does not match its file name`;
  const ref = doc.attempt;
  switch (doc.action) {
    case "executed":
      return ref?.originRunId === runId ? undefined : "an executed member must reference this Run";
    case "carried":
      return ref && ref.originRunId !== runId
        ? undefined
        : "a carried member must reference another Run";
    default:
      return ref === null ? undefined : `a ${doc.action} member must not reference an Attempt`;
  }
}

/** Recomputes a verdict from a stored Attempt (REC-6). */
export function verdictOf(doc: AttemptDoc, assertions: AssertionsDoc): StoredVerdict {
  if (doc.outcome === "interrupted") return "interrupted";
  if (doc.outcome === "errored") return "errored";
  if (doc.outcome === "cancelled" || doc.skipReason !== null) return "skipped";
  const folded = foldVerdict({
    kind: doc.kind,
    executionError: false,
    skipped: false,
    entries: assertions.entries as unknown as readonly SealedAssertion[],
    // A score below the passAt it ran with is failed (docs/scores.md); older Records have none.
    maxPoints: doc.possible ?? null,
    passAt: doc.passAt ?? null,
  });
  return folded.verdict;
}
