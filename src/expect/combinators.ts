/** Combinators (authoring.md §4.2 rule 3): `and`, `or`, `not` within one match domain. */
import { AssertionAuthoringError, type JsonValue } from "../_shared/mod.ts";
import type { CoverageChannel } from "../agents/mod.ts";
import {
  type BooleanImpl,
  type BooleanOutcome,
  chain,
  createBooleanMatch,
  type EvalContext,
  evaluateBoolean,
  type Maybe,
  readMatch,
} from "./_protocol.ts";
import type { BooleanMatch, EventMatch, ToolMatch, ValueMatch } from "./types.ts";

interface Child {
  readonly name: string;
  readonly impl: BooleanImpl;
}

function readChildren(who: string, matches: readonly unknown[]): {
  domain: "value" | "tool" | "event";
  children: Child[];
} {
  if (matches.length === 0) {
    throw new AssertionAuthoringError("not-a-match", `Cannot create ${who}: expected a match`);
  }
  const children: Child[] = [];
  let domain: "value" | "tool" | "event" | undefined;
  for (const [i, value] of matches.entries()) {
    const match = readMatch(value);
    if (match === undefined) {
      throw new AssertionAuthoringError(
        "not-a-match",
        `Cannot create ${who}: argument ${i + 1} is not a match`,
      );
    }
    if (match.kind === "score") {
      throw new AssertionAuthoringError(
        "match-domain-mismatch",
        `Cannot create ${who}: ${match.name} is a measurement, and measurements cannot be combined`,
      );
    }
    const childDomain = match.domain as "value" | "tool" | "event";
    domain ??= childDomain;
    if (childDomain !== domain) {
      throw new AssertionAuthoringError(
        "match-domain-mismatch",
        `Cannot create ${who}: ${match.name} is a ${childDomain} match, expected a ${domain} match`,
      );
    }
    children.push({ name: match.name, impl: match.impl });
  }
  return { domain: domain ?? "value", children };
}

function channelsOf(children: readonly Child[]): CoverageChannel[] {
  return [...new Set(children.flatMap((child) => child.impl.channels))];
}

/** Shared state of a left-to-right walk over the children. */
interface Walk {
  firstUnavailable?: BooleanOutcome;
  refined?: { readonly value: unknown };
  last?: BooleanOutcome;
}

function walk(
  children: readonly Child[],
  stopOn: "mismatched" | "matched",
  subject: unknown,
  context: EvalContext,
  index = 0,
  state: Walk = {},
): Maybe<BooleanOutcome | Walk> {
  const child = children[index];
  if (child === undefined) return state;
  return chain(evaluateBoolean(child.impl, subject, context), (outcome) => {
    if (outcome.result === stopOn) {
      if (stopOn === "matched") return outcome;
      const { refined: _refined, ...mismatched } = outcome;
      return { ...mismatched, reason: outcome.reason ?? `${child.name} mismatched` };
    }
    state.last = outcome;
    if (outcome.result === "unavailable") state.firstUnavailable ??= outcome;
    if (outcome.refined !== undefined) state.refined = outcome.refined;
    return walk(children, stopOn, subject, context, index + 1, state);
  });
}

function isOutcome(value: BooleanOutcome | Walk): value is BooleanOutcome {
  return "result" in value;
}

// The value overload comes first and names the value domain: a generic child such as
// `isDefined()` is inferred against the first candidate signature, and inferring it against a
// tool or event signature first would fix its subject type to `ToolCall` or `StreamEvent`.
/**
 * Matches when every child matches; stops at the first `mismatched` child. Otherwise the result
 * is `unavailable` if any child was.
 *
 * @param first The first child; every child must share its domain.
 * @param rest Further children, evaluated left to right.
 * @returns A match of the children's domain.
 * @throws {AssertionAuthoringError} `match-domain-mismatch` when domains differ or a child is a
 * measurement.
 * @example
 * ```ts
 * import { and, includes, pattern } from "niceeval/expect";
 * const polite = and(includes("please"), pattern(/thank(s| you)/i));
 * ```
 */
export function and<T, R>(
  first: ValueMatch<T, R>,
  ...rest: readonly ValueMatch<T, unknown>[]
): ValueMatch<T, R>;
export function and(first: ToolMatch, ...rest: readonly ToolMatch[]): ToolMatch;
export function and(first: EventMatch, ...rest: readonly EventMatch[]): EventMatch;
export function and(...matches: readonly unknown[]): BooleanMatch<never, unknown> {
  const { domain, children } = readChildren("and()", matches);
  return createBooleanMatch(domain, `and(${children.map((c) => c.name).join(", ")})`, {
    base: "and",
    short: `and(${children.map((c) => c.impl.short).join(", ")})`,
    channels: channelsOf(children),
    evaluate(subject, context) {
      return chain(walk(children, "mismatched", subject, context), (done) => {
        if (isOutcome(done)) return done;
        if (done.firstUnavailable !== undefined) return done.firstUnavailable;
        return { result: "matched", ...(done.refined ? { refined: done.refined } : {}) };
      });
    },
  });
}

// Value overload first, as for `and`. The refined type is that of whichever child matched.
/**
 * Matches when any child matches; stops at the first `matched` child. Otherwise the result is
 * `unavailable` if any child was, else `mismatched`.
 *
 * @param first The first child; every child must share its domain.
 * @param rest Further children, evaluated left to right.
 * @returns A match of the children's domain.
 * @throws {AssertionAuthoringError} `match-domain-mismatch` when domains differ or a child is a
 * measurement.
 * @example
 * ```ts
 * import { includes, or } from "niceeval/expect";
 * const mentionsWeather = or(includes("sunny"), includes("rain"));
 * ```
 */
export function or<T, R, S = R>(
  first: ValueMatch<T, R>,
  ...rest: readonly ValueMatch<T, S>[]
): ValueMatch<T, R | S>;
export function or<T>(
  first: ValueMatch<T, unknown>,
  ...rest: readonly ValueMatch<T, unknown>[]
): ValueMatch<T, unknown>;
export function or(first: ToolMatch, ...rest: readonly ToolMatch[]): ToolMatch;
export function or(first: EventMatch, ...rest: readonly EventMatch[]): EventMatch;
export function or(...matches: readonly unknown[]): BooleanMatch<never, unknown> {
  const { domain, children } = readChildren("or()", matches);
  return createBooleanMatch(domain, `or(${children.map((c) => c.name).join(", ")})`, {
    base: "or",
    short: `or(${children.map((c) => c.impl.short).join(", ")})`,
    channels: channelsOf(children),
    evaluate(subject, context) {
      return chain(walk(children, "matched", subject, context), (done) => {
        if (isOutcome(done)) return done;
        if (done.firstUnavailable !== undefined) return done.firstUnavailable;
        const received = done.last?.received;
        return {
          result: "mismatched",
          reason: "no alternative matched",
          ...(received === undefined ? {} : { received }),
        };
      });
    },
  });
}

function negated(value: JsonValue | undefined): JsonValue | undefined {
  return value === undefined ? undefined : `not ${JSON.stringify(value)}`;
}

// Value overload first, as for `and`.
/**
 * Swaps `matched` and `mismatched`; `unavailable` stays `unavailable`.
 *
 * @param match The match to negate.
 * @returns A match of the same domain.
 * @example
 * ```ts
 * import { includes, not } from "niceeval/expect";
 * const noError = not(includes("error"));
 * ```
 */
export function not<T>(match: ValueMatch<T, unknown>): ValueMatch<T, T>;
export function not(match: ToolMatch): ToolMatch;
export function not(match: EventMatch): EventMatch;
export function not(match: unknown): BooleanMatch<never, unknown> {
  const { domain, children } = readChildren("not()", [match]);
  const child = children[0] as Child;
  return createBooleanMatch(domain, `not(${child.name})`, {
    base: "not",
    short: `not(${child.impl.short})`,
    channels: child.impl.channels,
    evaluate(subject, context) {
      return chain(evaluateBoolean(child.impl, subject, context), (outcome) => {
        if (outcome.result === "unavailable") {
          const { refined: _refined, ...unavailable } = outcome;
          return unavailable;
        }
        const expected = negated(outcome.expected);
        const out: BooleanOutcome = {
          result: outcome.result === "matched" ? "mismatched" : "matched",
          ...(expected === undefined ? {} : { expected }),
          ...(outcome.received === undefined ? {} : { received: outcome.received }),
        };
        if (out.result === "mismatched") out.reason = `${child.name} matched`;
        return out;
      });
    },
  });
}
