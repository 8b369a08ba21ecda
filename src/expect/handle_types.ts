/** Types of assertion handles and scoped assertions (authoring.md §3.2, §3.5). */
import type { CountOption, EventMatch, Kind, ToolMatch } from "./types.ts";

/** What every handle can configure; each method at most once, before `orStop()`. */
export interface AssertionHandle {
  /** Stable identifier for cross-run comparison: `/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/`. */
  key(k: string): this;
  /** Human text used as the criterion. */
  label(s: string): this;
  /** Appends one segment to the inherited group path. */
  group(title: string): this;
}

/** A Boolean entry of a pass eval. */
export interface PassBooleanHandle<R = unknown> extends AssertionHandle {
  /** Unavailable or errored results no longer error the verdict; a mismatch still fails. */
  optional(): this;
  /** Explicit gating; Boolean entries gate by default. */
  gate(): this;
  /** Resolves with the (refined) subject when matched; rejects with a stop signal otherwise. */
  orStop(): Promise<R>;
}

/** A measurement entry of a pass eval. */
export interface PassMeasurementHandle extends AssertionHandle {
  /** Unavailable or errored results no longer error the verdict. */
  optional(): this;
  /** Local met/below note in [0, 1]; never changes the verdict. */
  atLeast(n: number): this;
  /** Threshold in [0, 1]; below it the verdict fails. */
  gate(n: number): this;
  /** Resolves with the value at or above the gate (else atLeast) threshold; requires one. */
  orStop(): Promise<number>;
}

/** A Boolean entry of a score eval. */
export interface ScoreBooleanHandle<R = unknown> extends AssertionHandle {
  /** Matched earns `points` (finite, > 0), mismatched earns 0. */
  score(points: number): this;
  /** Resolves with the (refined) subject when matched; rejects with a stop signal otherwise. */
  orStop(): Promise<R>;
}

/** A measurement entry of a score eval. */
export interface ScoreMeasurementHandle extends AssertionHandle {
  /** Threshold in [0, 1] for `orStop()` and the met/below note. */
  atLeast(n: number): this;
  /** Contributes measurement × `points` (finite, > 0). */
  score(points: number): this;
  /** Resolves with the value at or above the atLeast threshold; requires it. */
  orStop(): Promise<number>;
}

/** The handle of `t.score(points)`. */
export interface DirectScoreHandle extends AssertionHandle {}

/** The Boolean handle of an eval kind. */
export type BoolHandle<K extends Kind, R = unknown> = K extends "pass" ? PassBooleanHandle<R>
  : ScoreBooleanHandle<R>;

/** The measurement handle of an eval kind. */
export type MeasureHandle<K extends Kind> = K extends "pass" ? PassMeasurementHandle
  : ScoreMeasurementHandle;

/** Options of counted tool and event assertions. */
export interface CountOptions {
  /** Exactly `n` (positive integer) or `{ atLeast: n }`; default `{ atLeast: 1 }`. */
  readonly count?: CountOption;
}

/** Scoped assertions on `t`, sessions and turns; each registers one entry at the call. */
export interface ScopedAssertions<K extends Kind> {
  /** Every turn in scope completed; a scope without turns is mismatched. */
  succeeded(): BoolHandle<K>;
  /** Matching tool occurrences; a string means `toolMatch(name)`. */
  calledTool(match: ToolMatch | string, opts?: CountOptions): BoolHandle<K>;
  /** No matching tool occurrence. */
  notCalledTool(match: ToolMatch | string): BoolHandle<K>;
  /** No tool occurrence at all. */
  usedNoTools(): BoolHandle<K>;
  /** At most `max` tool occurrences. */
  maxToolCalls(max: number): BoolHandle<K>;
  /** No occurrence finished `failed`. */
  noFailedActions(): BoolHandle<K>;
  /** Matching events. */
  event(match: EventMatch, opts?: CountOptions): BoolHandle<K>;
  /** No matching event. */
  notEvent(match: EventMatch): BoolHandle<K>;
  /** Input plus output tokens at most `max`. */
  maxTokens(max: number): BoolHandle<K>;
  /** Price-table cost estimate at most `usd`. */
  maxCost(usd: number): BoolHandle<K>;
}

/** Order assertions on sessions and turns. */
export interface OrderedAssertions<K extends Kind> {
  /** The tool matches occur as an ordered subsequence (start order). */
  toolOrder(matches: readonly [ToolMatch, ToolMatch, ...ToolMatch[]]): BoolHandle<K>;
  /** The event matches occur as an ordered subsequence. */
  eventOrder(matches: readonly [EventMatch, EventMatch, ...EventMatch[]]): BoolHandle<K>;
}
