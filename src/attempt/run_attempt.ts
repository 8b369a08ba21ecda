/**
 * Runs ONE Attempt: agent setup, the test body with its context `t`, pending assertions, agent
 * teardown, then the verdict fold — sealed into an `AttemptResult`. Knows nothing of queues or files.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { abortKind, AbortReason } from "../_shared/mod.ts";
import { type Clock, sleep } from "../_shared/mod.ts";
import { AssertionAuthoringError, errorMessage, hasErrorName } from "../_shared/mod.ts";
import type { AttemptResult, AttemptVerdict } from "../_shared/mod.ts";
import type { Random } from "../_shared/mod.ts";
import { resolveAgent, type ResolvedAgent, sumUsage } from "../agents/mod.ts";
import type { DiscoveredEval } from "../discovery/mod.ts";
import {
  createAssertionRecorder,
  estimateCost,
  foldVerdict,
  isStopSignal,
  type PricingTable,
} from "../expect/mod.ts";
import type { Plan, PlannedExperiment, PlannedSlot } from "../plan/mod.ts";
import type { AbandonAttempt, AttemptControl, RunAttempt } from "../scheduler/mod.ts";
import { callSiteOf } from "./call_site.ts";
import { createTestContext, isSkipSignal } from "./context.ts";
import { type FailureContext, failureOf } from "./failure.ts";
import type { SessionLine } from "./session_line.ts";
import { AttemptState } from "./state.ts";

/** Bound of agent teardown (authoring.md §7.1). */
const AGENT_TEARDOWN_TIMEOUT_MS = 30_000;
/** niceeval's own source directory, skipped when looking for user call sites. */
const OWN_DIR = dirname(dirname(fileURLToPath(import.meta.url)));

/** What the runner needs besides the plan slot and the scheduler's control. */
export interface AttemptRunnerOptions {
  readonly plan: Plan;
  /** Project root: call sites are reported relative to it. */
  readonly root: string;
  readonly clock: Clock;
  readonly random: Random;
  readonly pricing: PricingTable;
}

/** Creates the per-Attempt work function the scheduler runs. */
export function createAttemptRunner(options: AttemptRunnerOptions): RunAttempt {
  const evals = new Map<string, DiscoveredEval>();
  for (const e of options.plan.experiments.flatMap((x) => x.evals)) evals.set(e.id, e);
  return (slot, control) => {
    const experiment = options.plan.experiments[slot.experimentIndex]!;
    return runOne(slot, control, { ...options, experiment, evalDef: evals.get(slot.evalId)! });
  };
}

interface RunDeps extends AttemptRunnerOptions {
  readonly experiment: PlannedExperiment;
  readonly evalDef: DiscoveredEval;
}

async function runOne(
  slot: PlannedSlot,
  control: AttemptControl,
  deps: RunDeps,
): Promise<AttemptResult> {
  const { clock } = deps;
  const def = deps.experiment.discovered.definition;
  const agent = resolveAgent(def.agent)!;
  const state = new AttemptState(clock);
  const settled = new AbortController();
  const signal = AbortSignal.any([control.signal, settled.signal]);
  const failures: FailureContext = {
    experiment: def,
    experimentId: slot.experimentId,
    evalId: slot.evalId,
    ordinal: slot.ordinal,
    warn: (code, message) => state.diagnostic({ code, level: "warning", message }),
  };
  const authoringError = (error: AssertionAuthoringError) => {
    state.fail({
      code: "assertion-authoring-error",
      phase: "test",
      message: error.message,
      scope: "attempt",
      error,
    });
    return error;
  };
  const groups = new AsyncLocalStorage<readonly string[]>();
  const recorder = createAssertionRecorder({
    kind: slot.kind,
    groupPath: () => groups.getStore() ?? [],
    callSite: () => callSiteOf(new Error().stack, deps.root, OWN_DIR),
    estimateCost: (turns) => estimateCost(turns, def.model, deps.pricing),
  });
  const { t, lines } = createTestContext({
    kind: slot.kind,
    recorder,
    groups,
    agent,
    model: def.model,
    flags: def.flags,
    experimentId: slot.experimentId,
    evalId: slot.evalId,
    signal,
    control,
    clock,
    random: deps.random,
    state,
    failures,
    authoringError,
  });
  const main = lines[0]!;
  const setupStarted = await runAgentSetup(agent, main, state, failures, control);
  if (!state.failure) await runBody(deps.evalDef, t, state, failures, control);
  await state.phase("assertions", async () => {
    control.activity("evaluating assertions");
    await waitOrAbort(recorder.pending(), control.signal);
  });
  settled.abort(new AbortReason("test-settled"));
  recorder.settle();
  if (recorder.unawaitedStops() > 0) {
    state.fail({
      code: "orstop-not-awaited",
      phase: "test",
      message: "an orStop() result was never awaited",
      scope: "attempt",
      error: undefined,
    });
  }
  const authoring = recorder.authoringErrors[0];
  if (authoring) authoringError(authoring);
  if (recorder.discardedAfterSettle > 0) {
    state.diagnostic({
      code: "assertion-after-settle",
      level: "warning",
      message:
        `${recorder.discardedAfterSettle} assertion(s) registered after the test body settled were discarded`,
    });
  }
  if (setupStarted) await runAgentTeardown(agent, main, state, control, clock);
  return seal(slot, control, deps, state, recorder.seal());
}

async function runAgentSetup(
  agent: ResolvedAgent,
  main: SessionLine,
  state: AttemptState,
  failures: FailureContext,
  control: AttemptControl,
): Promise<boolean> {
  if (!agent.setup) return false;
  const setup = agent.setup.bind(agent);
  await state.phase("agent.setup", async () => {
    control.activity("agent setup");
    try {
      await setup(main.context(0));
    } catch (error) {
      if (!control.signal.aborted) {
        state.fail(failureOf(failures, "agent.setup", "agent-setup-failed", error));
      }
    }
  });
  return true;
}

async function runBody(
  evalDef: DiscoveredEval,
  t: unknown,
  state: AttemptState,
  failures: FailureContext,
  control: AttemptControl,
): Promise<void> {
  await state.phase("test", async () => {
    control.activity("running eval");
    try {
      await (evalDef.definition.test as (t: unknown) => unknown)(t);
    } catch (error) {
      if (isStopSignal(error) || isSkipSignal(error) || hasErrorName(error, "AgentSendError")) {
        return;
      }
      if (control.signal.aborted) return;
      if (hasErrorName(error, "AssertionAuthoringError")) {
        state.fail({
          code: "assertion-authoring-error",
          phase: "test",
          message: errorMessage(error),
          scope: "attempt",
          error,
        });
        return;
      }
      state.fail(failureOf(failures, "test", "test-threw", error));
    }
  });
}

async function runAgentTeardown(
  agent: ResolvedAgent,
  main: SessionLine,
  state: AttemptState,
  control: AttemptControl,
  clock: Clock,
): Promise<void> {
  if (!agent.teardown) return;
  const teardown = agent.teardown.bind(agent);
  await state.phase("agent.teardown", async () => {
    control.activity("cleaning up");
    const timer = new AbortController();
    try {
      await Promise.race([
        teardown(main.context(0)),
        sleep(clock, AGENT_TEARDOWN_TIMEOUT_MS, { signal: timer.signal }).then(() => {
          throw new Error(
            `agent teardown did not finish within ${AGENT_TEARDOWN_TIMEOUT_MS / 1000}s`,
          );
        }),
      ]);
    } catch (error) {
      state.diagnostic({
        code: "agent-teardown-failed",
        level: "warning",
        message: errorMessage(error),
      });
    } finally {
      timer.abort();
    }
  });
}

/** Awaits `work` unless `signal` aborts first; never rejects. */
async function waitOrAbort(work: Promise<unknown>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return;
  const stop = new Promise<void>((resolve) =>
    signal.addEventListener("abort", () => resolve(), { once: true })
  );
  try {
    await Promise.race([work, stop]);
  } catch {
    // Pending entries record their own errors; a rejection here carries nothing more.
  }
}

function seal(
  slot: PlannedSlot,
  control: AttemptControl,
  deps: RunDeps,
  state: AttemptState,
  assertions: ReturnType<ReturnType<typeof createAssertionRecorder>["seal"]>,
): AttemptResult {
  const endedAt = deps.clock.now();
  const abort = control.signal.aborted ? abortKind(control.signal.reason) : undefined;
  // A deadline overrides whatever the aborted body recorded after it (TIME-3).
  const failure = abort === "timeout"
    ? {
      code: "timeout",
      phase: "test",
      message: `the Attempt exceeded its ${slot.timeoutMs} ms deadline`,
      scope: "attempt" as const,
    }
    : state.failure;
  const folded = foldVerdict({
    kind: slot.kind,
    executionError: failure !== undefined,
    skipped: state.skipReason !== undefined,
    entries: assertions,
  });
  let verdict: AttemptVerdict = folded.verdict;
  let outcome: AttemptResult["outcome"] = failure ? "errored" : "completed";
  let skipReason = state.skipReason ?? null;
  if (abort === "interrupt") {
    verdict = "interrupted";
    outcome = "interrupted";
  } else if (abort === "early-exit" && verdict !== "passed") {
    verdict = "skipped";
    outcome = "cancelled";
    skipReason = "early-exit";
  }
  if (slot.kind === "pass" && assertions.length === 0 && verdict === "passed") {
    state.diagnostic({
      code: "eval-no-assertions",
      level: "warning",
      message: "the eval registered no assertion",
    });
  }
  const usage = sumUsage(state.turns.map((turn) => turn.usage));
  const cost = estimateCost(state.turns, deps.experiment.discovered.definition.model, deps.pricing);
  const score = folded.score && folded.score.state !== "unavailable" ? folded.score.earned : null;
  return {
    attemptId: control.attemptId,
    experimentId: slot.experimentId,
    evalId: slot.evalId,
    ordinal: slot.ordinal,
    kind: slot.kind,
    outcome,
    verdict,
    score: verdict === "scored" ? score : null,
    scoreResult: folded.score,
    skipReason,
    error: failure && outcome === "errored"
      ? { code: failure.code, phase: failure.phase, message: failure.message, scope: failure.scope }
      : null,
    startedAt: control.startedAt,
    endedAt,
    timedMs: endedAt - control.startedAt,
    usage: Object.keys(usage).length > 0 ? usage : null,
    estimatedCostUSD: cost.usd ?? null,
    turnCount: state.turnCount,
    retries: state.retries(),
    details: {
      assertions,
      turns: state.turnLogs,
      phases: state.phases,
      diagnostics: state.diagnostics,
      logs: state.logs,
    },
  };
}

/** The result of an Attempt whose body did not return within the abort grace period (TIME-3). */
export const abandonedResult: AbandonAttempt = (slot, info) => {
  const interrupted = info.kind === "interrupt";
  return {
    attemptId: info.attemptId,
    experimentId: slot.experimentId,
    evalId: slot.evalId,
    ordinal: slot.ordinal,
    kind: slot.kind,
    outcome: interrupted ? "interrupted" : "errored",
    verdict: interrupted ? "interrupted" : "errored",
    score: null,
    scoreResult: null,
    skipReason: null,
    error: interrupted ? null : {
      code: "timeout",
      phase: "test",
      message:
        `the Attempt exceeded its ${slot.timeoutMs} ms deadline and did not return after its signal aborted; abandoned`,
      scope: "attempt",
    },
    startedAt: info.startedAt,
    endedAt: info.endedAt,
    timedMs: info.endedAt - info.startedAt,
    usage: null,
    estimatedCostUSD: null,
    turnCount: 0,
    retries: [],
    details: { assertions: [], turns: [], phases: [], diagnostics: [], logs: [] },
  };
};
