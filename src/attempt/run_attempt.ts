/**
 * Runs ONE Attempt: agent setup, the test body with its context `t`, pending assertions, agent
 * teardown, then the verdict fold — sealed into an `AttemptResult`. Knows nothing of queues or files.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { AbortReason, ATTEMPT_ABORT_GRACE_MS, raceAbort } from "../_shared/mod.ts";
import type { Clock } from "../_shared/mod.ts";
import { errorMessage, hasErrorName } from "../_shared/mod.ts";
import type { AssertionAuthoringError, AttemptResult } from "../_shared/mod.ts";
import type { Random } from "../_shared/mod.ts";
import { resolveAgent, type ResolvedAgent, type TurnRecord } from "../agents/mod.ts";
import type { DiscoveredEval, ExperimentDefinition } from "../discovery/mod.ts";
import {
  type AssertionRecorder,
  createAssertionRecorder,
  estimateCost,
  isStopSignal,
  type PricingTable,
  type RecorderOptions,
} from "../expect/mod.ts";
import type { Plan, PlannedExperiment, PlannedSlot } from "../plan/mod.ts";
import type { AttemptControl, RunAttempt } from "../scheduler/mod.ts";
import { BodySignal } from "./_body_signal.ts";
import { sealResult } from "./_result.ts";
import { CallSiteFinder } from "./call_site.ts";
import { type ContextDeps, createTestContext, isSkipSignal } from "./context.ts";
import { type FailureContext, failureOf } from "./failure.ts";
import {
  attemptCleanup,
  closeAttemptSandbox,
  openAttemptSandbox,
  type OpenedSandbox,
} from "./_sandbox.ts";
import { ABANDONED, Abandonment } from "./_abandon.ts";
import { runAgentSetup, runAgentTeardown } from "./_agent_hooks.ts";
import type { SandboxRuntime } from "./sandbox_runtime.ts";
import type { CleanupStack, EvalSandbox } from "../sandbox/mod.ts";
import type { SessionLine } from "./session_line.ts";
import { AttemptState } from "./state.ts";

export { abandonedResult } from "./_result.ts";

/** niceeval's own source directory, skipped when looking for user call sites. */
const OWN_DIR = dirname(dirname(fileURLToPath(import.meta.url)));

/** What the runner needs besides the plan slot and the scheduler's control. */
interface AttemptRunnerOptions {
  readonly plan: Plan;
  /** Project root: call sites are reported relative to it. */
  readonly root: string;
  readonly clock: Clock;
  readonly random: Random;
  readonly pricing: PricingTable;
  /** The sandbox side of the Invocation; sandbox Attempts cannot run without it. */
  readonly sandboxes?: SandboxRuntime;
  /** Host environment snapshot, read by built-in agents through `ctx.env` (credentials only). */
  readonly hostEnv?: Readonly<Record<string, string>>;
  /**
   * Attributes `console.*` output made during an Attempt to that Attempt's log (authoring.md
   * §7.1 rule 2): the whole Attempt runs inside `console.run(state, …)`. Default: no attribution.
   */
  readonly console?: AttemptConsoleScope;
}

/** Runs work with `console.*` output attributed to an Attempt's {@link AttemptState.log}. */
interface AttemptConsoleScope {
  run<T>(target: { log(text: string): void }, work: () => T): T;
}

/**
 * The `signal.reason` of `t.signal` and `ctx.signal` once the body settled (rule 3.1.3). One
 * frozen instance serves every Attempt: its stack is never reported, only its kind.
 */
const TEST_SETTLED = Object.freeze(new AbortReason("test-settled"));
/** The group path outside any `t.group`. */
const NO_GROUPS: readonly string[] = Object.freeze([]);

/** Creates the per-Attempt work function the scheduler runs. */
export function createAttemptRunner(options: AttemptRunnerOptions): RunAttempt {
  // By discovery index: every slot carries its eval's. Ids only disambiguate hand-made plans.
  const evals: DiscoveredEval[] = [];
  for (const x of options.plan.experiments) {
    for (const e of x.evals) evals[e.index] = e;
  }
  // Built at the first slot whose index does not match: a map of 100,000 evals costs 3.7 MB.
  let byId: Map<string, DiscoveredEval> | undefined;
  const evalById = (id: string): DiscoveredEval => {
    byId ??= new Map(options.plan.experiments.flatMap((x) => x.evals.map((e) => [e.id, e])));
    return byId.get(id)!;
  };
  const callSites = new CallSiteFinder(options.root, OWN_DIR);
  const hostEnv = options.hostEnv;
  const env = hostEnv ? (name: string) => hostEnv[name] : undefined;
  return (slot, control) => {
    const experiment = options.plan.experiments[slot.experimentIndex]!;
    const indexed = evals[slot.evalIndex];
    const evalDef = indexed?.id === slot.evalId ? indexed : evalById(slot.evalId);
    return runOne(slot, control, { ...options, experiment, evalDef, callSites, env });
  };
}

/** What one Attempt runs with. */
interface RunDeps extends AttemptRunnerOptions {
  readonly experiment: PlannedExperiment;
  readonly evalDef: DiscoveredEval;
  /** Shared by the Attempts of one runner: it memoises how frame files map to the project. */
  readonly callSites: CallSiteFinder;
  /** `ctx.env`, shared by the Attempts of one runner; undefined without a host environment. */
  readonly env?: ((name: string) => string | undefined) | undefined;
}

function runOne(
  slot: PlannedSlot,
  control: AttemptControl,
  deps: RunDeps,
): Promise<AttemptResult> {
  const scope = new AttemptScope(slot, control, deps);
  // Everything the Attempt starts (sandbox, agent, body, teardown) inherits the attribution.
  return deps.console
    ? deps.console.run(scope.state, () => runScope(scope, slot, control, deps))
    : runScope(scope, slot, control, deps);
}

async function runScope(
  scope: AttemptScope,
  slot: PlannedSlot,
  control: AttemptControl,
  deps: RunDeps,
): Promise<AttemptResult> {
  const { agent, state, recorder, settled } = scope;
  const timed = runTimed(scope, slot, control, deps);
  const ran = await scope.abandonment.race(timed);
  if (ran === ABANDONED) {
    // Whatever the abandoned part still pushes when it returns late (a create that completes) is
    // unwound then, unobserved.
    void timed.finally(() => scope.cleanup?.size ? scope.cleanup.unwind() : undefined)
      .catch(() => undefined);
  }
  // Aborted before its lease was handed over: the scheduler closes the slot undispatched.
  if (ran === UNSTARTED || (ran === ABANDONED && control.started === false)) {
    await scope.cleanup?.unwind();
    return sealResult(slot, control, deps, state, []);
  }
  settled.settle(TEST_SETTLED);
  // Teardowns and cleanup are outside the deadline and outside `timedMs` (TIME-2, TIME-4).
  state.endTimed();
  control.endTimed?.();
  const opened = scope.sandboxOpened;
  opened?.setPhase("cleanup");
  if (scope.agentReached) {
    const sandboxId = opened?.sandbox?.id ?? null;
    await runAgentTeardown(agent, scope.main, state, { control, clock: deps.clock, sandboxId });
  }
  // No backoff of a send left in flight may outlive the Attempt: it would take a global slot.
  await state.idle();
  if (scope.cleanup) await closeAttemptSandbox(slot, scope.cleanup, control, state);
  if (recorder.discardedAfterSettle > 0) {
    state.diagnostic({
      code: "assertion-after-settle",
      level: "warning",
      message:
        `${recorder.discardedAfterSettle} assertion(s) registered after the test body settled were discarded`,
    });
  }
  return sealResult(slot, control, deps, state, recorder.seal());
}

const UNSTARTED = Symbol("unstarted");

/**
 * The timed part: sandbox steps 2–9, agent setup, the body and its pending assertions. The runner
 * stops waiting for it once abandoned (TIME-3); it records what cleanup needs on the scope.
 */
async function runTimed(
  scope: AttemptScope,
  slot: PlannedSlot,
  control: AttemptControl,
  deps: RunDeps,
): Promise<typeof UNSTARTED | undefined> {
  const { agent, state, recorder } = scope;
  const failures: FailureContext = scope;
  if (slot.sandbox) {
    const opened = await openSandbox(slot, control, deps, scope);
    if (opened?.unstarted) return UNSTARTED;
    // Abandoned while it opened: the runner already unwound what was there; nothing more runs.
    if (scope.abandonment.abandoned) return undefined;
    scope.sandboxOpened = opened;
    scope.opened = opened?.sandbox;
  }
  // Agent setup and teardown run iff the sandbox steps before them succeeded (rule 34).
  scope.agentReached = !state.failure;
  if (scope.agentReached) await runAgentSetup(agent, scope.main, state, failures, control);
  // Commands of the agent's sends and of the body are the `test` step's evidence (rule 31).
  scope.sandboxOpened?.setPhase("test");
  if (!state.failure && !control.signal.aborted) {
    await runBody(deps.evalDef, scope.t, { state, failures, control, settle: scope.settleBody });
  }
  scope.settleBody();
  checkSettled(recorder, state, scope);
  await state.phase("assertions", async () => {
    control.activity("evaluating assertions");
    // An abort ends the wait; pending entries record their own errors, so a rejection carries
    // nothing more.
    await raceAbort(recorder.pending(), control.signal).catch(() => undefined);
  });
  return undefined;
}

/**
 * What one Attempt runs with, in one object: its state, recorder and body signal, and the hooks
 * that the test context (`ContextDeps`), the recorder (`RecorderOptions`) and failure
 * classification (`FailureContext`) call as methods.
 */
class AttemptScope implements ContextDeps, RecorderOptions, FailureContext {
  readonly kind: PlannedSlot["kind"];
  readonly agent: ResolvedAgent;
  readonly state: AttemptState;
  /** `t.signal` and `ctx.signal` also abort when the body settled (rule 3.1.3). */
  readonly settled: BodySignal;
  readonly signal: AbortSignal;
  readonly recorder: AssertionRecorder;
  readonly groups = new AsyncLocalStorage<readonly string[]>();
  readonly model: string | undefined;
  readonly flags: ExperimentDefinition["flags"];
  readonly experiment: ExperimentDefinition;
  readonly experimentId: string;
  readonly evalId: string;
  readonly ordinal: number;
  readonly control: AttemptControl;
  readonly clock: Clock;
  readonly random: Random;
  readonly failures: FailureContext = this;
  declare readonly env?: (name: string) => string | undefined;
  /** The Attempt's sandbox, once open. */
  opened: EvalSandbox | undefined;
  /** The opened (or failed) sandbox, once its steps ended. */
  sandboxOpened: OpenedSandbox | undefined;
  /** The Attempt's cleanup stack, from before its sandbox opens; undefined without a sandbox. */
  cleanup: CleanupStack | undefined;
  /** True once the sandbox steps succeeded: agent teardown then runs (rule 34). */
  agentReached = false;
  /** Stops waiting for the timed part after the abort grace (TIME-3, INT-1). */
  readonly abandonment: Abandonment;
  readonly t: unknown;
  /** The main session's line. */
  readonly main: SessionLine;
  readonly #deps: RunDeps;

  constructor(slot: PlannedSlot, control: AttemptControl, deps: RunDeps) {
    const def = deps.experiment.discovered.definition;
    this.kind = slot.kind;
    this.agent = resolveAgent(def.agent)!;
    this.state = new AttemptState(deps.clock);
    this.abandonment = new Abandonment(deps.clock, () => this.#abandoned());
    this.settled = new BodySignal(control.signal, () => this.abandonment.arm());
    this.signal = this.settled.signal;
    this.model = def.model;
    this.flags = def.flags;
    this.experiment = def;
    this.experimentId = slot.experimentId;
    this.evalId = slot.evalId;
    this.ordinal = slot.ordinal;
    this.control = control;
    this.clock = deps.clock;
    this.random = deps.random;
    if (deps.env) this.env = deps.env;
    this.#deps = deps;
    this.recorder = createAssertionRecorder(this);
    const { t, lines } = createTestContext(this);
    this.t = t;
    this.main = lines[0]!;
  }

  /** When the body settles, later assertions and skips are discarded (rule 3.1.3). */
  readonly settleBody = (): void => {
    if (this.state.bodySettled) return;
    this.state.bodySettled = true;
    this.recorder.settle();
  };

  /**
   * The grace passed with the timed part still running: the body counts as settled and the timed
   * part ends now, synchronously, before the scheduler's own abandonment fires (TIME-3).
   */
  #abandoned(): void {
    this.state.abandoned = true;
    this.state.log(
      `abandoned: the Attempt did not return within ${
        ATTEMPT_ABORT_GRACE_MS / 1000
      }s after its signal aborted; cleaning up without it`,
    );
    this.settleBody();
    this.state.endTimed();
    this.control.endTimed?.();
  }

  /** `FailureContext.warn`: a non-fatal diagnostic. */
  warn(code: string, message: string): void {
    this.state.diagnostic({ code, level: "warning", message });
  }

  /** Records an authoring error on the Attempt, even if the test catches it. */
  authoringError(error: AssertionAuthoringError): AssertionAuthoringError {
    this.state.fail({
      code: "assertion-authoring-error",
      phase: "test",
      message: error.message,
      scope: "attempt",
      error,
    });
    return error;
  }

  onAuthoringError(error: AssertionAuthoringError): void {
    this.authoringError(error);
  }

  sandbox(): EvalSandbox | undefined {
    return this.opened;
  }

  groupPath(): readonly string[] {
    return this.groups.getStore() ?? NO_GROUPS;
  }

  callSite(
    below: (...args: never[]) => unknown,
    entry?: (...args: never[]) => unknown,
  ): string | null {
    return this.#deps.callSites.find(below, entry);
  }

  estimateCost(turns: readonly TurnRecord[]): { usd: number | undefined; complete: boolean } {
    return estimateCost(turns, this.model, this.#deps.pricing);
  }
}

/** Opens the slot's sandbox (sandboxes.md §3.1–§3.2), or records why it cannot. */
async function openSandbox(
  slot: PlannedSlot,
  control: AttemptControl,
  deps: RunDeps,
  o: AttemptScope,
): Promise<OpenedSandbox | undefined> {
  if (!deps.sandboxes) {
    control.start?.();
    o.state.fail({
      code: "sandbox-create-failed",
      phase: "sandbox.create",
      message: "Cannot create a sandbox: this run has no sandbox runtime",
      scope: "experiment",
      error: undefined,
    });
    return undefined;
  }
  o.cleanup = attemptCleanup(deps.sandboxes, deps.clock);
  return await openAttemptSandbox(slot, control, {
    runtime: deps.sandboxes,
    state: o.state,
    failures: o.failures,
    clock: deps.clock,
    random: deps.random,
    root: deps.root,
    evalFile: deps.evalDef.file,
  }, o.cleanup);
}

/** The checks made when the body settles: unawaited `orStop()`s and caught authoring errors. */
function checkSettled(
  recorder: AssertionRecorder,
  state: AttemptState,
  scope: AttemptScope,
): void {
  const authoring = recorder.authoringErrors[0];
  if (authoring) scope.authoringError(authoring);
  if (recorder.unawaitedStops() > 0) {
    state.fail({
      code: "orstop-not-awaited",
      phase: "test",
      message: "An orStop() result was never awaited: write `await handle.orStop()`",
      scope: "attempt",
      error: undefined,
    });
  }
}

interface BodyDeps {
  readonly state: AttemptState;
  readonly failures: FailureContext;
  readonly control: AttemptControl;
  /** Called as soon as the body's promise settles, before anything else can run. */
  readonly settle: () => void;
}

async function runBody(evalDef: DiscoveredEval, t: unknown, deps: BodyDeps): Promise<void> {
  const { state, failures, control } = deps;
  await state.phase("test", async () => {
    control.activity("running eval");
    try {
      const body = Promise.resolve((evalDef.definition.test as (t: unknown) => unknown)(t));
      await body.finally(deps.settle);
    } catch (error) {
      if (isStopSignal(error) || isSkipSignal(error)) return;
      if (control.signal.aborted) {
        state.cutShort = true;
        return;
      }
      // Already recorded when it happened (send failures, authoring errors, even if caught).
      if (hasErrorName(error, "AgentSendError")) return;
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
