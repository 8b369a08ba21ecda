/**
 * @module _shared
 * Cross-cutting building blocks with no domain knowledge: error families, abort reasons and the
 * one abort race, the run-event contract and the plain data it carries (agent stream events, usage, verdict shapes), the clock and random seams, JSON helpers, definition brands, option validation, number formats,
 * credential redaction, input limits, operating-system error helpers and the version.
 */
export {
  abortable,
  abortKind,
  AbortReason,
  ATTEMPT_ABORT_GRACE_MS,
  onAbort,
  raceAbort,
} from "./abort.ts";
export type { AbortKind } from "./abort.ts";
export { API_FORMAT_VERSION, brand, isBranded, isProxy, readBrand } from "./brand.ts";
export { isoTime, realClock, sleep } from "./clock.ts";
export type { Clock, TimerHandle } from "./clock.ts";
export {
  AgentSendError,
  AssertionAuthoringError,
  DefinitionError,
  errorMessage,
  EvalFatalError,
  ExperimentFatalError,
  hasErrorName,
  UsageError,
} from "./errors.ts";
export type { DefinitionErrorCode } from "./errors.ts";
export type {
  AttemptError,
  AttemptResult,
  AttemptVerdict,
  NotDispatchedReason,
  RampState,
  RecordedDiagnostic,
  RetryTally,
  RunEvent,
  RunEventSink,
  SlotOutcome,
  SlotRef,
  TurnLog,
  WaitScope,
} from "./events.ts";
export { formatCost, formatDuration, formatScore, formatTokens, plural } from "./format.ts";
export { latin1Text, readHex, writeHex } from "./hex.ts";
export {
  canonicalJson,
  deepFreeze,
  findNonJson,
  isJsonValue,
  isPlainObject,
  sha256Hex,
} from "./json.ts";
export type { JsonValue } from "./json.ts";
export {
  MAX_ATTEMPTS,
  MAX_BUDGET_USD,
  MAX_BUILD_CONCURRENCY,
  MAX_CONCURRENCY,
  MAX_CREATES_PER_SECOND,
  MAX_PRICE_PER_MTOK,
  MAX_TIMER_MS,
  MIN_CREATES_PER_SECOND,
} from "./limits.ts";
export { isOsError, osErrorReason } from "./os_error.ts";
export { USAGE_FIELDS } from "./stream.ts";
export type {
  ErrorEvent,
  MessageEvent,
  OperationFinishedEvent,
  OperationStartedEvent,
  StreamEvent,
  ThinkingEvent,
  Usage,
} from "./stream.ts";
export type { MatchResult, ScoreReason, ScoreResult, SealedAssertion } from "./verdict.ts";
export { check, checkOptions, closest, describe } from "./options.ts";
export { randomHex8, realRandom } from "./random.ts";
export { credentialValues, isCredentialName, Redactor } from "./redact.ts";
export type { Random } from "./random.ts";
export { VERSION } from "./version.ts";
