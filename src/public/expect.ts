/**
 * @module
 * `niceeval/expect`: matchers for `t.check` and the scoped assertions of turns and sessions.
 *
 * @example
 * ```ts
 * import { includes, toolMatch } from "niceeval/expect";
 * const mentionsSun = includes("sunny");
 * const weatherCall = toolMatch("get_weather");
 * ```
 */
export {
  and,
  commandSucceeded,
  defineScoreMatch,
  defineValueMatch,
  equals,
  eventMatch,
  excludes,
  hasSections,
  includes,
  includesUrl,
  isDefined,
  isFalse,
  isTrue,
  jsonMatch,
  matches,
  not,
  or,
  pattern,
  satisfies,
  similarity,
  toolMatch,
} from "../expect/mod.ts";
export type {
  AssertionHandle,
  BooleanMatch,
  BoolHandle,
  CountOptions,
  DirectScoreHandle,
  EventMatch,
  IncludesOptions,
  JsonMatch,
  MatchOutcome,
  MatchResult,
  MeasureHandle,
  MessageEventOptions,
  OperationEventOptions,
  OrderedAssertions,
  PassBooleanHandle,
  PassMeasurementHandle,
  ScopedAssertions,
  ScoreBooleanHandle,
  ScoreMatch,
  ScoreMatchDefinition,
  ScoreMeasurementHandle,
  StandardSchemaV1,
  ToolConditions,
  ToolMatch,
  ValueMatchDefinition,
} from "../expect/mod.ts";
