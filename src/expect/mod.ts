/**
 * @module expect
 * Owns assertions: the matchers of `niceeval/expect`, the evaluation of scoped assertions over
 * evidence snapshots (counting and coverage rules), assertion entries and their handles, the
 * cost estimate from the price table, and the verdict fold. It is pure: it never does I/O, reads
 * no clock, and knows nothing of sandboxes, queues, the Record or files.
 */
export { and, not, or } from "./combinators.ts";
export { estimateCost, estimateTurnCost, lookupPrice } from "./cost.ts";
export { defineScoreMatch, defineValueMatch } from "./custom_matchers.ts";
export type { ScoreMatchDefinition, ValueMatchDefinition } from "./custom_matchers.ts";
export { eventMatch } from "./event_matchers.ts";
export type { MessageEventOptions, OperationEventOptions } from "./event_matchers.ts";
export type {
  AssertionHandle,
  BoolHandle,
  CountOptions,
  DirectScoreHandle,
  MeasureHandle,
  OrderedAssertions,
  PassBooleanHandle,
  PassMeasurementHandle,
  ScopedAssertions,
  ScoreBooleanHandle,
  ScoreMeasurementHandle,
} from "./handle_types.ts";
export { createAssertionRecorder } from "./recorder.ts";
export type { AssertionRecorder, RecorderOptions, ScopedAssertionMethods } from "./recorder.ts";
export { isStopSignal } from "./stop_signal.ts";
export {
  excludes,
  hasSections,
  includes,
  includesUrl,
  pattern,
  similarity,
} from "./text_matchers.ts";
export type { IncludesOptions } from "./text_matchers.ts";
export { toolMatch } from "./tool_matchers.ts";
export type { ToolConditions } from "./tool_matchers.ts";
export type {
  BooleanMatch,
  EventMatch,
  EvidenceSnapshot,
  Kind,
  MatchOutcome,
  MatchResult,
  PricingTable,
  ScoreMatch,
  SealedAssertion,
  ToolMatch,
} from "./types.ts";
export {
  commandSucceeded,
  equals,
  isDefined,
  isFalse,
  isTrue,
  jsonMatch,
  matches,
  satisfies,
} from "./value_matchers.ts";
export type { JsonMatch, StandardSchemaV1 } from "./value_matchers.ts";
export { belowPassAt, foldVerdict } from "./verdict.ts";
