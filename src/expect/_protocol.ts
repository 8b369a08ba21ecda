/**
 * The match protocol. A match is a frozen object whose evaluation lives under the registry key
 * `Symbol.for("niceeval.match")`, so that a match created by another copy of the API module (a
 * user's editor mapping, the npm shim) is still recognised. Nothing here uses `instanceof` or
 * module-local symbols; the protocol object carries a version instead.
 */
import { AssertionAuthoringError, isJsonValue, type JsonValue } from "../_shared/mod.ts";
import { preview } from "./_describe.ts";
import type { CoverageChannel, ToolCall } from "../agents/mod.ts";
import type { BooleanMatch, MatchOutcome, MatchResult, ScoreMatch } from "./types.ts";

/** Registry key of the match protocol. */
const MATCH_KEY: unique symbol = Symbol.for("niceeval.match") as never;

/** Version of the protocol object; bumped when its shape changes incompatibly. */
const MATCH_PROTOCOL_VERSION = 1;

/** A value or a promise of it: matchers are synchronous unless a user function is async. */
export type Maybe<T> = T | PromiseLike<T>;

/** What tool and event conditions need to know about the evidence around a subject. */
export interface EvalContext {
  /** The `actions` channel is complete over the scope (decides pending tool conditions). */
  readonly actionsComplete: boolean;
  /** The tool occurrence of an operation id in the subject's own turn. */
  toolCall(operationId: string): ToolCall | undefined;
}

/** The context of `t.check`: no evidence channel is involved. */
export const VALUE_CONTEXT: EvalContext = Object.freeze({
  actionsComplete: true,
  toolCall: () => undefined,
});

/** A Boolean outcome plus the refined subject that `orStop()` resolves with. */
export interface BooleanOutcome extends MatchOutcome {
  /** Present when the matcher transforms the subject (Standard Schema output). */
  refined?: { readonly value: unknown };
}

/** A measurement outcome. */
export type MeasureOutcome =
  | { value: number; expected?: JsonValue; received?: JsonValue }
  | { unavailable: string; expected?: JsonValue; received?: JsonValue };

interface ImplBase {
  readonly version: number;
  /** Matcher name without arguments, e.g. `includes`; the sealed entry's `matcher`. */
  readonly base: string;
  /** Short text for criteria of scoped assertions, e.g. the tool name. */
  readonly short: string;
}

/** Protocol object of a Boolean match. */
export interface BooleanImpl extends ImplBase {
  readonly kind: "boolean";
  /** Evidence channels an event match depends on (empty for other domains). */
  readonly channels: readonly CoverageChannel[];
  evaluate(subject: unknown, context: EvalContext): Maybe<BooleanOutcome>;
}

/** Protocol object of a measurement. */
interface ScoreImpl extends ImplBase {
  readonly kind: "score";
  measure(subject: unknown): Maybe<MeasureOutcome>;
}

/** Creates a frozen Boolean match. */
export function createBooleanMatch<M extends BooleanMatch<never, unknown>>(
  domain: M["domain"],
  name: string,
  impl: Omit<BooleanImpl, "version" | "kind" | "channels" | "short"> & {
    readonly channels?: readonly CoverageChannel[];
    readonly short?: string;
  },
): M {
  const protocol: BooleanImpl = Object.freeze({
    version: MATCH_PROTOCOL_VERSION,
    kind: "boolean",
    base: impl.base,
    short: impl.short ?? name,
    channels: Object.freeze([...(impl.channels ?? [])]),
    evaluate: impl.evaluate,
  });
  return Object.freeze({ kind: "boolean", domain, name, [MATCH_KEY]: protocol }) as unknown as M;
}

/** Creates a frozen measurement. */
export function createScoreMatch<T>(
  name: string,
  impl: Omit<ScoreImpl, "version" | "kind" | "short">,
): ScoreMatch<T> {
  const protocol: ScoreImpl = Object.freeze({
    version: MATCH_PROTOCOL_VERSION,
    kind: "score",
    base: impl.base,
    short: name,
    measure: impl.measure,
  });
  return Object.freeze({
    kind: "score",
    domain: "value",
    name,
    [MATCH_KEY]: protocol,
  }) as unknown as ScoreMatch<T>;
}

/** A recognised match: its public face and its protocol object. */
type ReadMatch =
  | { readonly kind: "boolean"; readonly domain: string; readonly name: string; impl: BooleanImpl }
  | { readonly kind: "score"; readonly domain: "value"; readonly name: string; impl: ScoreImpl };

/** Reads any value as a match, or returns `undefined` when it is not one of this version. */
export function readMatch(value: unknown): ReadMatch | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const impl = (value as Record<symbol, unknown>)[MATCH_KEY] as Record<string, unknown> | undefined;
  if (typeof impl !== "object" || impl === null) return undefined;
  if (impl.version !== MATCH_PROTOCOL_VERSION) return undefined;
  if (typeof impl.base !== "string" || typeof impl.short !== "string") return undefined;
  const { kind, domain, name } = value as Record<string, unknown>;
  if (typeof name !== "string" || kind !== impl.kind) return undefined;
  if (kind === "boolean" && typeof impl.evaluate === "function" && Array.isArray(impl.channels)) {
    if (domain !== "value" && domain !== "tool" && domain !== "event") return undefined;
    return { kind, domain, name, impl: impl as unknown as BooleanImpl };
  }
  if (kind === "score" && domain === "value" && typeof impl.measure === "function") {
    return { kind, domain, name, impl: impl as unknown as ScoreImpl };
  }
  return undefined;
}

/**
 * Reads a match that must be Boolean and of `domain`; throws `AssertionAuthoringError`
 * (`match-domain-mismatch`, or `not-a-match`) naming `where` otherwise.
 */
export function requireBooleanMatch(
  value: unknown,
  domain: "value" | "tool" | "event",
  where: string,
): ReadMatch & { kind: "boolean" } {
  const match = readMatch(value);
  if (match === undefined) {
    throw new AssertionAuthoringError(
      "not-a-match",
      `Cannot use ${describeKind(value)} in ${where}: expected a ${domain} match`,
    );
  }
  if (match.kind !== "boolean" || match.domain !== domain) {
    const got = match.kind === "score" ? "a measurement" : `a ${match.domain} match`;
    throw new AssertionAuthoringError(
      "match-domain-mismatch",
      `Cannot use ${got} ${match.name} in ${where}: expected a ${domain} match`,
    );
  }
  return match;
}

function describeKind(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "string") return `the string ${JSON.stringify(value.slice(0, 40))}`;
  return typeof value === "object" ? "an object that is not a match" : `a ${typeof value}`;
}

const RESULTS: readonly string[] = ["matched", "mismatched", "unavailable"];

/** Validates what a Boolean matcher returned; a `boolean` becomes matched / mismatched. */
export function toBooleanOutcome(raw: unknown, who: string): BooleanOutcome {
  if (raw === true) return { result: "matched" };
  if (raw === false) return { result: "mismatched" };
  if (typeof raw !== "object" || raw === null) {
    throw new TypeError(`${who} returned ${typeof raw}, expected a boolean or a MatchOutcome`);
  }
  const outcome = raw as Record<string, unknown>;
  if (typeof outcome.result !== "string" || !RESULTS.includes(outcome.result)) {
    throw new TypeError(
      `${who} returned result ${JSON.stringify(outcome.result) ?? "undefined"}, ` +
        `expected "matched", "mismatched" or "unavailable"`,
    );
  }
  const out: BooleanOutcome = { result: outcome.result as MatchResult };
  if (outcome.reason !== undefined) {
    if (typeof outcome.reason !== "string") throw new TypeError(`${who}: reason is no string`);
    out.reason = outcome.reason;
  }
  for (const field of ["expected", "received"] as const) {
    const value = outcome[field];
    if (value === undefined) continue;
    if (!isJsonValue(value)) throw new TypeError(`${who}: ${field} is not JSON`);
    // A bounded copy: the sealed entry is frozen and persisted, the matcher's value is not ours.
    out[field] = preview(value);
  }
  const refined = outcome.refined;
  if (typeof refined === "object" && refined !== null && "value" in refined) {
    out.refined = { value: (refined as { value: unknown }).value };
  }
  return out;
}

/** Validates a measurement outcome: a value in [0, 1] or an `unavailable` reason. */
export function toMeasureOutcome(raw: unknown, who: string): MeasureOutcome {
  if (typeof raw === "number") raw = { value: raw };
  if (typeof raw !== "object" || raw === null) {
    throw new TypeError(`${who} returned ${typeof raw}, expected a number in [0, 1]`);
  }
  const outcome = raw as Record<string, unknown>;
  const extra: { expected?: JsonValue; received?: JsonValue } = {};
  for (const field of ["expected", "received"] as const) {
    const value = outcome[field];
    if (value !== undefined && isJsonValue(value)) extra[field] = preview(value);
  }
  if (typeof outcome.unavailable === "string") {
    return { unavailable: outcome.unavailable, ...extra };
  }
  const value = outcome.value;
  if (typeof value !== "number" || !(value >= 0 && value <= 1)) {
    throw new TypeError(`${who} returned ${String(value)}, expected a number in [0, 1]`);
  }
  return { value, ...extra };
}

/** Evaluates a Boolean protocol object and validates what it returns, sync or async. */
export function evaluateBoolean(
  impl: BooleanImpl,
  subject: unknown,
  context: EvalContext,
): Maybe<BooleanOutcome> {
  return chain(impl.evaluate(subject, context), (raw) => toBooleanOutcome(raw, impl.base));
}

/** True for any thenable. */
export function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === "object" || typeof value === "function") && value !== null &&
    typeof (value as { then?: unknown }).then === "function";
}

/** Applies `next` now when `value` is ready, or after it resolves. */
export function chain<T, U>(value: Maybe<T>, next: (value: T) => Maybe<U>): Maybe<U> {
  return isPromiseLike(value) ? Promise.resolve(value).then(next) : next(value);
}

/** Collects several maybe-async values, staying synchronous when all of them are ready. */
export function collect<T>(values: readonly Maybe<T>[]): Maybe<T[]> {
  return values.some(isPromiseLike) ? Promise.all(values) : (values as T[]);
}
