/**
 * One assertion entry from registration to sealing (authoring.md §3.5, §5.1). An entry is
 * mutable only through its handle's configuration calls and its own evaluation.
 */
import { deepFreeze, type JsonValue } from "../_shared/mod.ts";
import { thrownMessage } from "./_describe.ts";
import type { BooleanOutcome, MeasureOutcome } from "./_protocol.ts";
import type { Kind, MatchResult, SealedAssertion } from "./types.ts";

/** What an evaluation settled to. Measurements use `matched` for "a value was measured". */
export interface Settled {
  readonly result: MatchResult | "errored";
  readonly measurement: number | null;
  readonly expected: JsonValue | null;
  readonly received: JsonValue | null;
  readonly reason: string | null;
  readonly error?: string;
  /** The value `orStop()` resolves with instead of the subject. */
  readonly refined?: { readonly value: unknown };
}

/** A registered entry. */
export interface Entry {
  readonly index: number;
  readonly entry: SealedAssertion["entry"];
  readonly matcher: string;
  readonly defaultCriterion: string;
  readonly source: string | null;
  readonly groupPath: readonly string[];
  /** Registered after the body settled: evaluated, never sealed. */
  readonly discarded: boolean;
  /** What `orStop()` resolves with when no matcher refines it. */
  readonly subject: unknown;
  key: string | null;
  label: string | null;
  groupSegment: string | null;
  optional: boolean;
  gateThreshold: number | null;
  atLeast: number | null;
  points: number | null;
  stopRequested: boolean;
  settled: Settled | undefined;
  /** Present while an asynchronous evaluation runs; it never rejects. */
  done: Promise<void> | undefined;
}

/** Settles a Boolean outcome. */
export function settledBoolean(outcome: BooleanOutcome): Settled {
  return {
    result: outcome.result,
    measurement: null,
    expected: outcome.expected ?? null,
    received: outcome.received ?? null,
    reason: outcome.reason ?? null,
    ...(outcome.refined === undefined ? {} : { refined: outcome.refined }),
  };
}

/** Settles a measurement outcome. */
export function settledMeasure(outcome: MeasureOutcome): Settled {
  const base = { expected: outcome.expected ?? null, received: outcome.received ?? null };
  if ("unavailable" in outcome) {
    return { result: "unavailable", measurement: null, reason: outcome.unavailable, ...base };
  }
  return { result: "matched", measurement: outcome.value, reason: null, ...base };
}

/** Settles a thrown evaluation: the entry is `errored` (authoring.md §4.1 rule 3). */
export function settledError(error: unknown): Settled {
  return {
    result: "errored",
    measurement: null,
    expected: null,
    received: null,
    reason: "evaluation-errored",
    error: thrownMessage(error),
  };
}

const STILL_PENDING: Settled = {
  result: "errored",
  measurement: null,
  expected: null,
  received: null,
  reason: "evaluation-pending",
};

/** The threshold `orStop()` and `met` compare with: the gate, else `atLeast`. */
export function thresholdOf(entry: Entry): number | null {
  return entry.gateThreshold ?? entry.atLeast;
}

/** Converts an entry into its persisted form; a still-pending evaluation counts as errored. */
export function sealEntry(entry: Entry, kind: Kind): SealedAssertion {
  const settled = entry.settled ?? STILL_PENDING;
  const known = settled.result !== "errored" && settled.result !== "unavailable";
  const threshold = thresholdOf(entry);
  const value = settled.measurement;
  let status: SealedAssertion["status"] = known ? "passed" : settled.result as "errored";
  if (known && entry.entry === "boolean" && settled.result === "mismatched") status = "failed";
  if (known && entry.entry === "measurement" && entry.gateThreshold !== null) {
    if ((value ?? 0) < entry.gateThreshold) status = "failed";
  }
  const sealed: SealedAssertion = {
    index: entry.index,
    entry: entry.entry,
    criterion: entry.label ?? entry.defaultCriterion,
    matcher: entry.matcher,
    key: entry.key,
    label: entry.label,
    group: [...entry.groupPath, ...(entry.groupSegment === null ? [] : [entry.groupSegment])],
    status,
    result: entry.entry === "boolean" ? settled.result : null,
    measurement: value,
    atLeast: entry.atLeast,
    gateThreshold: entry.gateThreshold,
    met: threshold !== null && value !== null ? value >= threshold : null,
    expected: settled.expected,
    received: settled.received,
    reason: settled.reason,
    ...(settled.error === undefined ? {} : { error: settled.error }),
    optional: entry.optional,
    gate: kind === "pass" && (entry.entry === "boolean" || entry.gateThreshold !== null),
    score: entry.points === null ? null : { points: entry.points, earned: earned(entry, settled) },
    source: entry.source,
  };
  return deepFreeze(sealed);
}

function earned(entry: Entry, settled: Settled): number | null {
  const points = entry.points ?? 0;
  if (entry.entry === "direct-score") return points;
  if (entry.entry === "measurement") {
    return settled.measurement === null ? null : settled.measurement * points;
  }
  if (settled.result === "matched") return points;
  return settled.result === "mismatched" ? 0 : null;
}
