/**
 * Scoped assertions over events and orders (authoring.md §4.3 rules 2 and 5, §4.4): `event`,
 * `notEvent`, `toolOrder` and `eventOrder`.
 */
import { AssertionAuthoringError } from "../_shared/mod.ts";
import type { CoverageChannel } from "../agents/mod.ts";
import { truncate } from "./_describe.ts";
import {
  complete,
  type Count,
  countSuffix,
  countText,
  decideCount,
  type EvidenceAssertion,
  readCount,
  scoped,
  SOURCE_UNAVAILABLE,
  turnContext,
} from "./_evidence_common.ts";
import {
  type BooleanImpl,
  type BooleanOutcome,
  chain,
  collect,
  type EvalContext,
  evaluateBoolean,
  type Maybe,
  requireBooleanMatch,
} from "./_protocol.ts";
import { readToolMatch } from "./evidence.ts";
import type { EvidenceSnapshot, MatchResult } from "./types.ts";

/** One subject of an event or order assertion, with the context of its own turn. */
interface Occurrence {
  readonly subject: unknown;
  readonly label: string;
  readonly context: EvalContext;
}

function eventOccurrences(snapshot: EvidenceSnapshot): Occurrence[] {
  const actionsComplete = complete(snapshot, ["actions"]);
  return snapshot.turns.flatMap((turn) => {
    const context = turnContext(turn, actionsComplete);
    return turn.events.map((event) => ({ subject: event, label: event.type, context }));
  });
}

function toolOccurrences(snapshot: EvidenceSnapshot): Occurrence[] {
  const actionsComplete = complete(snapshot, ["actions"]);
  return snapshot.turns.flatMap((turn) => {
    const context = turnContext(turn, actionsComplete);
    return turn.toolCalls.map((call) => ({ subject: call, label: call.name, context }));
  });
}

function readEventMatch(where: string, match: unknown): { impl: BooleanImpl; short: string } {
  const read = requireBooleanMatch(match, "event", where);
  return { impl: read.impl, short: read.impl.short };
}

/** Channels an event match reads; a match that names none still depends on `events`. */
function eventChannels(impls: readonly BooleanImpl[]): CoverageChannel[] {
  return [...new Set<CoverageChannel>(["events", ...impls.flatMap((impl) => impl.channels)])];
}

function results(occurrences: readonly Occurrence[], impl: BooleanImpl): Maybe<MatchResult[]> {
  return collect(
    occurrences.map(({ subject, context }) =>
      chain(evaluateBoolean(impl, subject, context), (outcome) => outcome.result)
    ),
  );
}

function countedEvents(
  snapshot: EvidenceSnapshot,
  impl: BooleanImpl,
  count: Count,
): Maybe<BooleanOutcome> {
  const unseen = !complete(snapshot, eventChannels([impl]));
  return chain(results(eventOccurrences(snapshot), impl), (found) => {
    const result = decideCount(found, count, unseen);
    const k = found.filter((r) => r === "matched").length;
    return {
      result,
      expected: countText(count, "event"),
      received: `${k} event${k === 1 ? "" : "s"}`,
      ...(result === "unavailable" ? { reason: SOURCE_UNAVAILABLE } : {}),
    };
  });
}

/** `event(match, { count })`: matching events, default at least one. */
export function event(
  snapshot: EvidenceSnapshot,
  match: unknown,
  options?: unknown,
): EvidenceAssertion {
  const read = readEventMatch("event()", match);
  const count = readCount("event()", options, "notEvent");
  return {
    matcher: "event",
    criterion: scoped(snapshot, `event ${read.short}${countSuffix(count)}`),
    run: () => countedEvents(snapshot, read.impl, count),
  };
}

/** `notEvent(match)`: exactly zero matching events. */
export function notEvent(snapshot: EvidenceSnapshot, match: unknown): EvidenceAssertion {
  const read = readEventMatch("notEvent()", match);
  return {
    matcher: "notEvent",
    criterion: scoped(snapshot, `notEvent ${read.short}`),
    run: () => countedEvents(snapshot, read.impl, { mode: "none" }),
  };
}

function readSequence(
  where: string,
  matches: unknown,
  read: (where: string, match: unknown) => { impl: BooleanImpl; short: string },
): { impl: BooleanImpl; short: string }[] {
  if (!Array.isArray(matches) || matches.length < 2) {
    throw new AssertionAuthoringError(
      "invalid-value",
      `Cannot call ${where}: expected an array of at least two matches`,
    );
  }
  return matches.map((match) => read(where, match));
}

/**
 * Decides an ordered subsequence (rule 4.3.5): found → matched; not found → mismatched only when
 * every evaluation was decidable and nothing is unseen.
 */
function ordered(
  occurrences: readonly Occurrence[],
  steps: readonly { impl: BooleanImpl; short: string }[],
  unseen: boolean,
): Maybe<BooleanOutcome> {
  const rows = collect(occurrences.map((occurrence) =>
    collect(steps.map(({ impl }) =>
      chain(
        evaluateBoolean(impl, occurrence.subject, occurrence.context),
        (outcome) => outcome.result,
      )
    ))
  ));
  const expected = truncate(steps.map((step) => step.short).join(" → "));
  const received = truncate(occurrences.map((o) => o.label).join(" → ") || "nothing");
  return chain(rows, (matrix) => {
    let next = 0;
    for (const row of matrix) {
      if (next < steps.length && row[next] === "matched") next++;
    }
    if (next === steps.length) return { result: "matched", expected, received };
    const undecided = unseen || matrix.some((row) => row.includes("unavailable"));
    return undecided
      ? { result: "unavailable", reason: SOURCE_UNAVAILABLE, expected, received }
      : { result: "mismatched", expected, received };
  });
}

/** `toolOrder(matches)`: the tool matches occur as an ordered subsequence, in start order. */
export function toolOrder(snapshot: EvidenceSnapshot, matches: unknown): EvidenceAssertion {
  const steps = readSequence("toolOrder()", matches, readToolMatch);
  return {
    matcher: "toolOrder",
    criterion: scoped(snapshot, `toolOrder ${steps.map((s) => s.short).join(" → ")}`),
    run: () => ordered(toolOccurrences(snapshot), steps, !complete(snapshot, ["actions"])),
  };
}

/** `eventOrder(matches)`: the event matches occur as an ordered subsequence. */
export function eventOrder(snapshot: EvidenceSnapshot, matches: unknown): EvidenceAssertion {
  const steps = readSequence("eventOrder()", matches, readEventMatch);
  const channels = eventChannels(steps.map((step) => step.impl));
  return {
    matcher: "eventOrder",
    criterion: scoped(snapshot, `eventOrder ${steps.map((s) => s.short).join(" → ")}`),
    run: () => ordered(eventOccurrences(snapshot), steps, !complete(snapshot, channels)),
  };
}
