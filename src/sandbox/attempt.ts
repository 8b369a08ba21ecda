/**
 * The sandbox part of one Attempt (sandboxes.md §3.1–§3.2): steps 4–10 of a fresh sandbox, or the
 * lease plus steps 6–10 of a pooled one. Steps 2–3 (machine slot, pacing) stay with the caller,
 * which pushes the slot release onto the stack it passes in; agent ensure and setup (steps 8, 10)
 * are callbacks. A failure is returned as data (rule 34); the caller unwinds the stack (step 13).
 */
import type { Clock, Random } from "../_shared/mod.ts";
import type { CleanupStack } from "./cleanup.ts";
import { createWithRetry } from "./create.ts";
import {
  type CommandEvidence,
  createFacade,
  createFacadeLease,
  type FacadeLease,
} from "./facade.ts";
import { SandboxCreateError } from "./errors.ts";
import { copyFixtures } from "./fixtures.ts";
import { baselineLedger, hasGit } from "./ledger.ts";
import { type InstanceAdmission, LEASE_RESERVE_MS, type Pool, type PoolPriority } from "./pool.ts";
import {
  type AttemptLayer,
  failureOf,
  probeShell,
  runLayerSetups,
  runPrepareSteps,
  type SandboxFailure,
  type StepContext,
} from "./_steps.ts";
import type {
  CreateErrorClass,
  EvalSandbox,
  OwnerStamp,
  SandboxDiagnostic,
  SandboxHandle,
  SandboxOps,
  SandboxProvider,
} from "./types.ts";

/** Steps 8 and 10, owned by the agent domain. */
interface AgentSandboxSteps {
  /** Step 8: verify or install the agent's program. */
  ensure?(sb: SandboxOps, signal: AbortSignal): Promise<void>;
  /** Step 10: returns the agent teardown, which is pushed onto the stack. */
  setup?(sb: SandboxOps, signal: AbortSignal): Promise<(() => Promise<void>) | void>;
}

/** What every Attempt sandbox needs. */
interface AttemptSandboxCommon {
  readonly clock: Clock;
  readonly random: Random;
  /** The Attempt's signal (deadline, interrupt, early exit). */
  readonly signal: AbortSignal;
  /** The Attempt's stack; the caller unwinds it at step 13. */
  readonly cleanup: CleanupStack;
  /** Template layer first, then the other side's layer (steps 5 and 7 run in this order). */
  readonly layers: readonly AttemptLayer[];
  /** Host fixture directories in copy order: the Experiment's, then the Eval's or group's. */
  readonly fixtures: readonly string[];
  /** Directory of the Eval's file, for relative host paths of `t.sandbox` (rule 26). */
  readonly hostDir: string;
  /**
   * Called once when the deadline starts (step 4 fresh, lease hand-over pooled): the runner emits
   * `attempt_start` and answers the deadline as epoch ms, or `undefined` without one.
   */
  readonly startDeadline: () => number | undefined;
  readonly agent?: AgentSandboxSteps;
  /** Redacted in every command summary (e.g. the agent's `passEnv` values). */
  readonly sensitiveValues?: readonly string[];
  readonly onEvidence: (e: CommandEvidence) => void;
  readonly onDiagnostic: (d: SandboxDiagnostic) => void;
  readonly onProgress?: (message: string) => void;
  /** Called as each phase starts (`sandbox.create`, …, `agent.setup`). */
  readonly onPhase?: (phase: string) => void;
}

/** Options of {@link openFreshSandbox}. */
export interface FreshSandboxOptions extends AttemptSandboxCommon {
  readonly provider: SandboxProvider;
  readonly plan: unknown;
  readonly owner: Omit<OwnerStamp, "provisionToken">;
  /** Requested lifetime (§3.5); `Infinity` when unlimited. */
  readonly lifetimeMs: number;
  /** Create pacing (rule 59), awaited before each create try. */
  readonly beforeCreateTry?: (tryNumber: number, signal: AbortSignal) => Promise<void>;
}

/** Options of {@link openLeasedSandbox}. */
interface LeasedSandboxOptions extends AttemptSandboxCommon {
  readonly pool: Pool;
  /** The Attempt's `timeoutMs`, or `undefined` without one. */
  readonly timeoutMs: number | undefined;
  /** Requested lifetime, used for the lease check when there is no timeout (rule 77). */
  readonly lifetimeMs: number;
  /**
   * Read when the lease is released: `reset` unless the Attempt ended with timeout, abort,
   * `agent-send-failed` or `SandboxRetiredError` (rule 86); see {@link releaseOutcomeOf}.
   */
  readonly releaseOutcome: () => "reset" | "retire";
  /** Machine slot and pacing of a new instance this lease creates. */
  readonly admission?: InstanceAdmission;
  /**
   * The Attempt's scheduler priority key: while the pool is full, the smallest key is served
   * first (PRIO-1). Without one the lease waits after every keyed waiter, in arrival order.
   */
  readonly priority?: PoolPriority;
}

/** A ready sandbox, or why it is not. */
export type AttemptSandbox =
  | {
    readonly ok: true;
    /** `t.sandbox`. */
    readonly sandbox: EvalSandbox;
    readonly handle: SandboxHandle;
    /** Ledger baseline commit, or `undefined` when git is missing. */
    readonly baseline: string | undefined;
    /** Create retries per class (`RetryTally` with phase `sandbox.create`). */
    readonly retries: readonly { readonly class: CreateErrorClass; readonly count: number }[];
    /** Sets the phase that facade evidence is recorded under (`test`, …). */
    setPhase(phase: string): void;
  }
  | {
    readonly ok: false;
    readonly failure: SandboxFailure;
    readonly retries: readonly { readonly class: CreateErrorClass; readonly count: number }[];
  };

/** Steps 4–10 of a fresh sandbox. */
export async function openFreshSandbox(o: FreshSandboxOptions): Promise<AttemptSandbox> {
  const phase = phaseTracker(o);
  let retries: { class: CreateErrorClass; count: number }[] = [];
  try {
    phase.set("sandbox.create");
    const deadlineAt = o.startDeadline();
    const created = await createWithRetry(o.provider, o.plan, {
      owner: o.owner,
      lifetimeMs: o.lifetimeMs,
      signal: o.signal,
      clock: o.clock,
      random: o.random,
      progress: (m) => o.onProgress?.(m),
      diagnostic: o.onDiagnostic,
      ...(o.beforeCreateTry ? { beforeTry: o.beforeCreateTry } : {}),
    });
    retries = [...created.retries];
    const { handle } = created;
    o.cleanup.push({ kind: "provider-stop", sandboxId: handle.id, run: (s) => handle.stop(s) });
    const ctx = stepContext(o, handle, await probeShell(handle, o.signal), deadlineAt, phase);
    phase.set("sandbox.setup");
    await runLayerSetups(o.layers, ctx);
    return await prepareWorkspace(o, handle, ctx, phase, retries);
  } catch (error) {
    return {
      ok: false,
      failure: failureOf(error, { phase: phase.get(), signal: o.signal }),
      retries: error instanceof SandboxCreateError ? [...error.retries] : retries,
    };
  }
}

/** The lease of §3.2 step 2, then steps 6–10 on the lease's facade. */
export async function openLeasedSandbox(o: LeasedSandboxOptions): Promise<AttemptSandbox> {
  const phase = phaseTracker(o);
  try {
    phase.set("sandbox.lease");
    const minRemainingMs = (o.timeoutMs ?? o.lifetimeMs) + LEASE_RESERVE_MS;
    const lease = await o.pool.acquire({
      minRemainingMs,
      signal: o.signal,
      ...(o.admission ? { admission: o.admission } : {}),
      ...(o.priority !== undefined ? { priority: o.priority } : {}),
    });
    const deadlineAt = o.startDeadline();
    const facadeLease = createFacadeLease();
    o.cleanup.push({
      kind: "lease-release",
      sandboxId: lease.instance.handle.id,
      run: (signal) => {
        facadeLease.retire();
        const outcome = o.cleanup.failures > 0 ? "retire" : o.releaseOutcome();
        return lease.release(outcome, signal);
      },
    });
    const ctx = stepContext(o, lease.instance.handle, lease.instance.shell, deadlineAt, phase, {
      lease: facadeLease,
    });
    return await prepareWorkspace(o, lease.instance.handle, ctx, phase, []);
  } catch (error) {
    return {
      ok: false,
      failure: failureOf(error, { phase: phase.get(), signal: o.signal }),
      retries: [],
    };
  }
}

/**
 * The lease release outcome of rule 86: `retire` after a timeout, an abort, `agent-send-failed` or
 * `sandbox-retired`; else `reset`. Cleanup-entry failures are added by the stack itself.
 */
export function releaseOutcomeOf(
  end: { timedOut: boolean; aborted: boolean; errorCode: string | undefined },
): "reset" | "retire" {
  if (end.timedOut || end.aborted) return "retire";
  return end.errorCode === "agent-send-failed" || end.errorCode === "sandbox-retired"
    ? "retire"
    : "reset";
}

/** Steps 6–10 (fixture, prepare, agent ensure, baseline, agent setup). */
async function prepareWorkspace(
  o: AttemptSandboxCommon,
  handle: SandboxHandle,
  ctx: StepContext & { sandbox: EvalSandbox },
  phase: PhaseTracker,
  retries: { class: CreateErrorClass; count: number }[],
): Promise<AttemptSandbox> {
  phase.set("sandbox.fixture");
  await copyFixtures(handle, o.fixtures, o);
  phase.set("sandbox.prepare");
  await runPrepareSteps(o.layers, ctx);
  phase.set("agent.ensure");
  await o.agent?.ensure?.(ctx.sandbox, o.signal);
  phase.set("workspace.baseline");
  let baseline: string | undefined;
  if (await hasGit(handle, { signal: o.signal })) {
    baseline = await baselineLedger(handle, { signal: o.signal });
  } else {
    o.onDiagnostic({
      code: "sandbox-git-missing",
      level: "info",
      message: "git is not installed in the sandbox; the workspace baseline was skipped",
    });
  }
  phase.set("agent.setup");
  const teardown = await o.agent?.setup?.(ctx.sandbox, o.signal);
  if (teardown) {
    o.cleanup.push({ kind: "agent-teardown", sandboxId: handle.id, run: () => teardown() });
  }
  return { ok: true, sandbox: ctx.sandbox, handle, baseline, retries, setPhase: phase.set };
}

interface PhaseTracker {
  get(): string;
  set(phase: string): void;
}

function phaseTracker(o: AttemptSandboxCommon): PhaseTracker {
  let current = "sandbox.create";
  return {
    get: () => current,
    set: (phase) => {
      current = phase;
      o.onPhase?.(phase);
    },
  };
}

function stepContext(
  o: AttemptSandboxCommon,
  handle: SandboxHandle,
  shell: "bash" | "sh",
  deadlineAt: number | undefined,
  phase: PhaseTracker,
  extra: { lease?: FacadeLease } = {},
): StepContext & { sandbox: EvalSandbox } {
  const facadeFor = (hostDir: string | undefined) =>
    createFacade({
      handle,
      shell,
      clock: o.clock,
      random: o.random,
      signal: o.signal,
      deadlineAt: () => deadlineAt,
      hostDir: hostDir ?? o.hostDir,
      phase: phase.get,
      onEvidence: o.onEvidence,
      onDiagnostic: o.onDiagnostic,
      ...(o.sensitiveValues ? { sensitiveValues: o.sensitiveValues } : {}),
      ...(extra.lease ? { lease: extra.lease } : {}),
    });
  return {
    handle,
    signal: o.signal,
    cleanup: o.cleanup,
    facadeFor,
    hooks: { signal: o.signal, progress: (m) => o.onProgress?.(m) },
    sandbox: facadeFor(o.hostDir),
  };
}
