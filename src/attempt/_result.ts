/**
 * Seals one Attempt into its `AttemptResult`: the execution error (deadline first, TIME-3), the
 * verdict fold, abort outcomes (INT-1, EARLY-4), usage, the cost estimate and frozen details.
 */
import { abortKind } from "../_shared/mod.ts";
import type { AttemptError, AttemptResult, AttemptVerdict, Clock } from "../_shared/mod.ts";
import { sumUsage } from "../agents/mod.ts";
import {
  estimateCost,
  foldVerdict,
  type PricingTable,
  type SealedAssertion,
} from "../expect/mod.ts";
import type { PlannedExperiment, PlannedSlot } from "../plan/mod.ts";
import type { AbandonAttempt, AttemptControl } from "../scheduler/mod.ts";
import type { CallSiteFinder } from "./call_site.ts";
import type { RecordedFailure } from "./failure.ts";
import type { AttemptState } from "./state.ts";

/** What sealing reads of the runner's `RunDeps`; declared here so that only the runner imports. */
interface SealDeps {
  readonly clock: Clock;
  readonly pricing: PricingTable;
  readonly experiment: PlannedExperiment;
  readonly callSites: CallSiteFinder;
  /** The eval: a score eval's declared `maxPoints` and `passAt` reach the fold (docs/scores.md). */
  readonly evalDef?: {
    readonly definition: { readonly maxPoints?: number; readonly passAt?: number };
  };
}

/** Folds what the Attempt recorded into its result; the details are copies, frozen. */
export function sealResult(
  slot: PlannedSlot,
  control: AttemptControl,
  deps: SealDeps,
  state: AttemptState,
  assertions: SealedAssertion[],
): AttemptResult {
  const endedAt = deps.clock.now();
  const abort = control.signal.aborted ? abortKind(control.signal.reason) : undefined;
  const failure = executionError(slot, state, abort);
  const folded = foldVerdict({
    kind: slot.kind,
    executionError: failure !== null,
    skipped: state.skipReason !== undefined,
    entries: assertions,
    maxPoints: deps.evalDef?.definition.maxPoints ?? null,
    passAt: deps.evalDef?.definition.passAt ?? null,
  });
  let verdict: AttemptVerdict = folded.verdict;
  let outcome: AttemptResult["outcome"] = failure ? "errored" : "completed";
  let skipReason = state.skipReason ?? null;
  if (abort === "interrupt" || abort === "force") {
    verdict = "interrupted";
    outcome = "interrupted";
  } else if (
    abort === "early-exit" && verdict !== "skipped" && (verdict !== "passed" || state.cutShort)
  ) {
    // EARLY-4: a sibling that does not end `passed` (or skipped by t.skip) is recorded skipped.
    verdict = "skipped";
    outcome = "cancelled";
    skipReason = "early-exit";
  }
  if (slot.kind === "pass" && assertions.length === 0 && verdict === "passed") {
    state.diagnostic({
      code: "eval-no-assertions",
      level: "warning",
      message: "The eval registered no assertion: add t.check() or a scoped assertion",
    });
  }
  const usage = sumUsage(state.turns.map((turn) => turn.usage));
  const model = deps.experiment.discovered.definition.model;
  const cost = estimateCost(state.turns, model, deps.pricing);
  const earned = folded.score && folded.score.state !== "unavailable" ? folded.score.earned : null;
  return Object.freeze({
    attemptId: control.attemptId,
    experimentId: slot.experimentId,
    evalId: slot.evalId,
    ordinal: slot.ordinal,
    kind: slot.kind,
    outcome,
    verdict,
    score: verdict === "scored" || (verdict === "failed" && slot.kind === "score") ? earned : null,
    scoreResult: folded.score,
    ...scoreBounds(folded.score, slot.kind, deps),
    skipReason,
    error: failure && outcome === "errored" ? tracedError(failure, deps) : null,
    startedAt: control.startedAt,
    endedAt,
    timedMs: (state.timedEndedAt ?? endedAt) - control.startedAt,
    usage: state.turns.length > 0 && Object.keys(usage).length > 0 ? usage : null,
    estimatedCostUSD: cost.usd ?? null,
    turnCount: state.turnCount,
    retries: Object.freeze(state.retries()),
    details: Object.freeze({
      assertions: Object.freeze(assertions),
      turns: Object.freeze([...state.turnLogs]),
      phases: Object.freeze(state.phases.map((p) => Object.freeze({ ...p }))),
      diagnostics: Object.freeze([...state.diagnostics]),
      logs: Object.freeze(state.logs.map((l) => Object.freeze({ ...l }))),
    }),
  });
}

/** `possible` and `passAt` of a score Attempt's result; nothing for pass evals. */
function scoreBounds(
  score: AttemptResult["scoreResult"],
  kind: PlannedSlot["kind"],
  deps: SealDeps,
): Pick<AttemptResult, "possible" | "passAt"> {
  if (kind !== "score") return {};
  const possible = score && score.state !== "unavailable" ? score.possible ?? null : null;
  return { possible, passAt: deps.evalDef?.definition.passAt ?? null };
}

/**
 * The Attempt's execution error: at the deadline always `timeout`, whatever the body recorded or
 * did afterwards (TIME-3); otherwise the first recorded failure, with the value it threw.
 */
function executionError(
  slot: PlannedSlot,
  state: AttemptState,
  abort: string | undefined,
): RecordedFailure | null {
  if (abort === "timeout") {
    return {
      code: "timeout",
      phase: "test",
      message: state.abandoned
        ? abandonedMessage(slot)
        : `The Attempt exceeded its ${slot.timeoutMs} ms deadline`,
      scope: "attempt",
      error: undefined,
    };
  }
  return state.failure ?? null;
}

/**
 * The recorded error of an errored Attempt, with the user frames of the value it threw: only
 * here, once per errored Attempt, is a stack read and trimmed.
 */
function tracedError(failure: RecordedFailure, deps: SealDeps): AttemptError {
  const trace = deps.callSites.trace(failure.error);
  return {
    code: failure.code,
    phase: failure.phase,
    message: failure.message,
    scope: failure.scope,
    location: trace.location,
    stack: trace.stack,
  };
}

/** The result of an Attempt whose body did not return within the abort grace period (TIME-3). */
export function abandonedResult(
  slot: PlannedSlot,
  info: Parameters<AbandonAttempt>[1],
): AttemptResult {
  const interrupted = info.kind === "interrupt" || info.kind === "force";
  const cancelled = info.kind === "early-exit";
  const errored = !interrupted && !cancelled;
  return Object.freeze({
    attemptId: info.attemptId,
    experimentId: slot.experimentId,
    evalId: slot.evalId,
    ordinal: slot.ordinal,
    kind: slot.kind,
    outcome: interrupted ? "interrupted" : cancelled ? "cancelled" : "errored",
    verdict: interrupted ? "interrupted" : cancelled ? "skipped" : "errored",
    score: null,
    scoreResult: slot.kind === "score" && errored
      ? Object.freeze({ state: "unavailable", reasons: Object.freeze(["execution-errored"]) })
      : null,
    skipReason: cancelled ? "early-exit" : null,
    error: errored
      ? {
        code: "timeout",
        phase: "test",
        message: abandonedMessage(slot),
        scope: "attempt",
        location: null,
        stack: null,
      }
      : null,
    startedAt: info.startedAt,
    endedAt: info.endedAt,
    timedMs: info.endedAt - info.startedAt,
    usage: null,
    estimatedCostUSD: null,
    turnCount: 0,
    retries: Object.freeze([]),
    details: Object.freeze({ assertions: [], turns: [], phases: [], diagnostics: [], logs: [] }),
  }) as AttemptResult;
}

function abandonedMessage(slot: PlannedSlot): string {
  return `The Attempt exceeded its ${slot.timeoutMs} ms deadline and did not return after its signal aborted; abandoned`;
}
