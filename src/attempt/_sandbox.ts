/**
 * The sandbox of one sandbox-agent Attempt (sandboxes.md §3.1–§3.3): a fresh sandbox, or a lease
 * from its reuse or Eval-group pool; failures mapped by rule 34; the cleanup stack unwound outside
 * the deadline with every diagnostic kept on the Attempt (step 14); group sandbox failures reported
 * to the scheduler (GRP-6).
 */
import { dirname, join } from "node:path";
import { abortKind, type Clock, type Random } from "../_shared/mod.ts";
import type { PlannedSlot } from "../plan/mod.ts";
import {
  type AttemptSandbox,
  CleanupStack,
  type CommandEvidence,
  type EvalSandbox,
  openFreshSandbox,
  openLeasedSandbox,
  releaseOutcomeOf,
  type SandboxDiagnostic,
  type SandboxFailure,
} from "../sandbox/mod.ts";
import type { AttemptControl, GroupSandboxPhase } from "../scheduler/mod.ts";
import { classify, type FailureContext } from "./failure.ts";
import type { SandboxRuntime } from "./sandbox_runtime.ts";
import type { AttemptState } from "./state.ts";

/** The activity shown while a sandbox phase runs (cli.md OUT-H8). */
const ACTIVITY: Readonly<Record<string, string>> = {
  "sandbox.create": "creating sandbox",
  "sandbox.lease": "leasing sandbox",
  "sandbox.setup": "setting up sandbox",
  "sandbox.fixture": "copying fixtures",
  "sandbox.prepare": "preparing sandbox",
  "agent.ensure": "installing agent",
  "workspace.baseline": "preparing sandbox",
  "agent.setup": "agent setup",
};

/** Phases in which a group sandbox failure stops or replaces it (rule 89). */
const GROUP_PHASES: Readonly<Record<string, GroupSandboxPhase>> = {
  "sandbox.slot": "sandbox.create",
  "sandbox.create": "sandbox.create",
  "sandbox.anchor": "sandbox.create",
  "sandbox.setup": "sandbox.setup",
  "sandbox.fixture": "sandbox.prepare",
  "sandbox.prepare": "sandbox.prepare",
};

/** What the Attempt's sandbox needs from the runner. */
interface SandboxDeps {
  readonly runtime: SandboxRuntime;
  readonly state: AttemptState;
  readonly failures: FailureContext;
  readonly clock: Clock;
  readonly random: Random;
  readonly root: string;
  /** The Eval's project-relative file (relative host paths resolve next to it). */
  readonly evalFile: string;
}

/** An opened (or failed) Attempt sandbox; its cleanup stack is the caller's. */
export interface OpenedSandbox {
  /** `t.sandbox` and `ctx.sandbox`; undefined when opening failed. */
  readonly sandbox: EvalSandbox | undefined;
  /** The Attempt was aborted before it started: the scheduler closes it as not dispatched. */
  readonly unstarted: boolean;
  /** Sets the phase that later sandbox commands are recorded under (rule 31): `test`, `cleanup`. */
  setPhase(phase: "test" | "cleanup"): void;
}

const NO_PHASE = (): void => {};

/**
 * The Attempt's cleanup stack (§3.3), created before its sandbox opens: an open that is abandoned
 * (TIME-3) still unwinds what it pushed.
 */
export function attemptCleanup(runtime: SandboxRuntime, clock: Clock): CleanupStack {
  return new CleanupStack({
    clock,
    ...(runtime.options.force ? { force: runtime.options.force } : {}),
  });
}

/** Opens the sandbox of `slot` onto `cleanup`; a failure is recorded on the state (rule 34). */
export async function openAttemptSandbox(
  slot: PlannedSlot,
  control: AttemptControl,
  deps: SandboxDeps,
  cleanup: CleanupStack,
): Promise<OpenedSandbox> {
  const { state } = deps;
  let physicalFailure = false;
  const opened = await state.phase(
    "sandbox",
    () =>
      slot.sandbox!.reuse === "fresh"
        ? openFresh(slot, control, deps, cleanup)
        : openLeased(slot, control, deps, cleanup, () => physicalFailure),
  );
  for (const r of opened.retries) state.tally("sandbox.create", r.class, r.count);
  if (opened.ok) {
    return { sandbox: opened.sandbox, unstarted: false, setPhase: opened.setPhase };
  }
  if (control.signal.aborted && control.started === false) {
    return { sandbox: undefined, unstarted: true, setPhase: NO_PHASE };
  }
  control.start?.();
  recordFailure(opened.failure, deps);
  const groupPhase = GROUP_PHASES[opened.failure.phase];
  if (slot.sandbox!.reuse === "group" && groupPhase && !opened.failure.aborted) {
    physicalFailure = true;
    control.sandbox?.groupSandboxFailed(groupPhase);
  }
  return { sandbox: undefined, unstarted: false, setPhase: NO_PHASE };
}

/** Step 13: ends the timed part, unwinds the stack and keeps its diagnostics (rules 36–39). */
export async function closeAttemptSandbox(
  slot: PlannedSlot,
  cleanup: CleanupStack,
  control: AttemptControl,
  state: AttemptState,
): Promise<void> {
  control.endTimed?.();
  control.activity("cleaning up");
  const diagnostics = await state.phase("cleanup", () => cleanup.unwind());
  for (const d of diagnostics) keepDiagnostic(state, d);
  if (
    slot.sandbox?.reuse === "group" && diagnostics.some((d) => d.code === "sandbox-reset-failed")
  ) {
    control.sandbox?.groupSandboxFailed("sandbox.reset");
  }
}

function openFresh(
  slot: PlannedSlot,
  control: AttemptControl,
  deps: SandboxDeps,
  cleanup: CleanupStack,
): Promise<AttemptSandbox> {
  return (async () => {
    const { runtime } = deps;
    const provider = await runtime.provider(slot.sandbox!);
    return await openFreshSandbox({
      ...common(slot, control, deps, cleanup),
      provider,
      plan: slot.sandbox!.physical,
      owner: runtime.owner(slot.experimentIndex),
      lifetimeMs: runtime.lifetimeMs(slot, provider.name),
      // The scheduler paced the first try before the start (rule 59); retries pace here.
      beforeCreateTry: async (tryNumber, signal) => {
        if (tryNumber > 1) await control.sandbox?.pace(signal);
      },
    });
  })();
}

async function openLeased(
  slot: PlannedSlot,
  control: AttemptControl,
  deps: SandboxDeps,
  cleanup: CleanupStack,
  physicalFailure: () => boolean,
): Promise<AttemptSandbox> {
  const { runtime, state } = deps;
  const provider = await runtime.provider(slot.sandbox!);
  const { pool, admission } = await runtime.pool(slot, {
    capacity: control.sandbox?.poolCapacity ?? 1,
  });
  const sandbox = control.sandbox;
  return await openLeasedSandbox({
    ...common(slot, control, deps, cleanup),
    pool,
    timeoutMs: slot.timeoutMs ?? undefined,
    lifetimeMs: runtime.lifetimeMs(slot, provider.name),
    ...(sandbox ? { priority: sandbox.priority } : {}),
    admission: admission(
      sandbox
        ? {
          acquireSlot: (signal) => sandbox.acquireMachineSlot(signal),
          beforeCreateTry: (_tryNumber, signal) => sandbox.pace(signal),
        }
        : {},
    ),
    releaseOutcome: () => {
      if (physicalFailure()) return "retire";
      const kind = abortKind(control.signal.reason);
      return releaseOutcomeOf({
        timedOut: kind === "timeout",
        aborted: control.signal.aborted,
        errorCode: state.failure?.code,
      });
    },
  });
}

function common(
  slot: PlannedSlot,
  control: AttemptControl,
  deps: SandboxDeps,
  cleanup: CleanupStack,
) {
  const { state, clock, random } = deps;
  return {
    clock,
    random,
    signal: control.signal,
    cleanup,
    layers: slot.sandbox!.layers.map(({ layer, owner }) => ({ layer, owner })),
    fixtures: slot.sandbox!.fixtures,
    hostDir: join(deps.root, dirname(deps.evalFile)),
    startDeadline: () => {
      control.start?.();
      return control.deadline ?? undefined;
    },
    onEvidence: (e: CommandEvidence) => state.log(evidenceLine(e)),
    onDiagnostic: (d: SandboxDiagnostic) => keepDiagnostic(state, d),
    onProgress: (message: string) => control.activity(message),
    onPhase: (phase: string) => {
      const text = ACTIVITY[phase];
      if (text !== undefined) control.activity(text);
    },
  };
}

/** Records a sandbox failure's code, phase and scope, never `timeout` (rule 34; 45 for create). */
function recordFailure(failure: SandboxFailure, deps: SandboxDeps): void {
  const found = classify(deps.failures, {
    phase: "sandbox",
    code: failure.code,
    message: failure.message,
    error: failure.cause,
  });
  const scope = failure.scope === "experiment"
    ? "experiment"
    : found?.scope === "eval" || found?.scope === "experiment"
    ? found.scope
    : "attempt";
  deps.state.fail({
    code: failure.code,
    phase: failure.phase,
    message: failure.message,
    scope,
    error: failure.cause,
  });
}

function keepDiagnostic(state: AttemptState, d: SandboxDiagnostic): void {
  const data = typeof d.data === "object" && d.data !== null
    ? d.data as Record<string, never>
    : undefined;
  state.diagnostic({
    code: d.code,
    level: d.level,
    message: d.message,
    ...(data ? { data } : {}),
  });
}

/** One timeline line of a facade command (rule 31): summary, outcome, phase. */
function evidenceLine(e: CommandEvidence): string {
  const outcome = e.exitCode !== undefined ? `exit ${e.exitCode}` : e.error ?? "failed";
  return `$ ${e.summary} → ${outcome} (${e.phase}, ${Math.round(e.durationMs)} ms)`;
}
