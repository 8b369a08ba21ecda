/**
 * Startup orphan recovery (ORPH-3 … ORPH-6): one task per selected Experiment with `teardown`,
 * started with the Invocation and awaited before it completes, and one reminder per Experiment
 * whose orphans this Invocation leaves alone. Tasks never reject: failures become diagnostics.
 */
import {
  abortKind,
  type Clock,
  errorMessage,
  onAbort,
  type Random,
  type RunEventSink,
} from "../_shared/mod.ts";
import {
  acquireLease,
  claimOrphan,
  findOrphans,
  type HeldLease,
  listPendingOrphans,
  type RegistrationEntry,
  type ScanOptions,
} from "../coordination/mod.ts";
import type { Plan, PlannedExperiment } from "../plan/mod.ts";
import {
  type Diagnostic,
  type LeaseNotices,
  leaseRetained,
  lifecycleDiagnostic,
} from "./_lifecycle_events.ts";
import { experimentHookContext, type HookOutcome, runBoundedHook } from "./hooks.ts";
import type { SchedulerCoordination } from "./types.ts";

/** What recovery needs from the run. */
interface RecoveryDeps {
  readonly clock: Clock;
  readonly random: Random;
  readonly emit: RunEventSink;
  /** Aborted on the first interrupt: lease waits end and no further orphan is claimed. */
  readonly signal: AbortSignal;
  readonly coordination: SchedulerCoordination;
  readonly notices: LeaseNotices;
}

/** The recovery tasks of one Invocation. */
export class StartupRecovery {
  readonly #plan: Plan;
  readonly #deps: RecoveryDeps | undefined;
  readonly #tasks = new Map<number, Promise<void>>();
  readonly #all: Promise<void>[] = [];
  #started = false;

  /** Without `deps` (no coordination) there is nothing to recover. */
  constructor(plan: Plan, deps: RecoveryDeps | undefined) {
    this.#plan = plan;
    this.#deps = deps;
  }

  /** Starts one task per Experiment with `teardown` and the ORPH-6 reminders (once). */
  start(): void {
    const deps = this.#deps;
    if (!deps || this.#started) return;
    this.#started = true;
    // The reminder scan goes first: two scans of this process would see each other's momentary
    // flocks on orphans.
    const reminded = remindPending(this.#plan, deps);
    this.#all.push(reminded);
    for (const experiment of this.#plan.experiments) {
      if (!experiment.discovered.definition.teardown) continue;
      const task = reminded.then(() => recoverExperiment(experiment, deps));
      this.#tasks.set(experiment.index, task);
      this.#all.push(task);
    }
  }

  /** The task the Experiment's `setup` awaits, if it has one (ORPH-5). */
  taskOf(experimentIndex: number): Promise<void> | undefined {
    return this.#tasks.get(experimentIndex);
  }

  /** Resolves once every task and reminder finished (never rejects). */
  async settled(): Promise<void> {
    await Promise.all(this.#all);
  }
}

function scanOf(deps: RecoveryDeps): ScanOptions {
  const { coordination: c, clock } = deps;
  return { projectRoot: c.projectRoot, identity: c.identity, probe: c.probe, clock };
}

/**
 * Finds the Experiment's orphans; with `sharedState` takes the lease first and reads them again;
 * claims each, runs the current `teardown` once per claim, deletes the claim (ORPH-3, ORPH-4).
 */
async function recoverExperiment(experiment: PlannedExperiment, deps: RecoveryDeps): Promise<void> {
  const { coordination: c, clock } = deps;
  const id = experiment.id;
  const key = experiment.discovered.definition.sharedState?.key;
  let lease: HeldLease | undefined;
  const onForce = () => lease?.retain(); // INT-2: a lease not yet released stays retained
  using _force = onAbort(c.force, onForce);
  let shown = false;
  const row = (state: "started" | "ended") =>
    deps.emit({
      type: "wait",
      at: clock.now(),
      scope: "orphan-recovery",
      key: id,
      experimentId: id,
      state,
      detail: null,
    });
  try {
    let orphans = await findOrphans(id, scanOf(deps));
    if (orphans.length === 0) return;
    row("started");
    shown = true;
    if (key !== undefined) {
      lease = await acquireRecoveryLease(id, key, deps);
      if (c.force?.aborted) return onForce();
      // Explicit recovery (LEASE-10) may have removed them while this task waited.
      orphans = await findOrphans(id, scanOf(deps));
    }
    const ok = await runOrphanTeardowns(experiment, orphans, deps);
    if (lease && !c.force?.aborted) await settleRecoveryLease(lease, ok, id, deps);
  } catch (error) {
    if (lease && !c.force?.aborted) await settleRecoveryLease(lease, false, id, deps);
    if (abortKind(error) !== undefined || deps.signal.aborted) return; // interrupted: not a failure
    deps.emit(lifecycleDiagnostic(clock.now(), {
      level: "warning",
      code: "orphan-teardown-failed",
      message: `Cannot recover the orphaned teardowns of ${id}: ${errorMessage(error)}`,
      experimentId: id,
    }));
  } finally {
    if (shown) row("ended");
  }
}

/**
 * Takes the key's lease, waiting as LEASE-5 does, with the shared `state-lease-waiting` notice
 * (ORPH-4).
 */
async function acquireRecoveryLease(
  id: string,
  key: string,
  deps: RecoveryDeps,
): Promise<HeldLease> {
  const { coordination: c } = deps;
  let waited = false;
  try {
    return await acquireLease(key, {
      projectRoot: c.projectRoot,
      experimentId: id,
      invocationId: c.invocationId,
      identity: c.identity,
      signal: deps.signal,
      clock: deps.clock,
      random: deps.random,
      mutex: c.mutex,
      onWaiting: (info) => {
        waited = true;
        deps.notices.waiting(id, key, info.retained);
      },
    });
  } finally {
    if (waited) deps.notices.done(id, key);
  }
}

/** Releases the lease only when every orphan teardown succeeded, else retains it (ORPH-4). */
async function settleRecoveryLease(
  lease: HeldLease,
  ok: boolean,
  experimentId: string,
  deps: RecoveryDeps,
): Promise<void> {
  const fields = { experimentId, key: lease.key };
  if (!ok) {
    lease.retain();
    deps.emit(leaseRetained(deps.clock.now(), { ...fields, reason: "startup-recovery-failed" }));
    return;
  }
  const released = await lease.release();
  if (released.ok) return;
  const detail = errorMessage(released.error);
  deps.emit(leaseRetained(deps.clock.now(), { ...fields, reason: "release-failed", detail }));
}

/**
 * Claims and compensates each orphan. Returns false when a teardown failed. After the first
 * interrupt no further orphan is claimed (the rest stay registered for the next run); after the
 * second the running teardown is abandoned and its claim kept for ORPH-3.
 */
async function runOrphanTeardowns(
  experiment: PlannedExperiment,
  orphans: readonly RegistrationEntry[],
  deps: RecoveryDeps,
): Promise<boolean> {
  const { coordination: c, clock, emit } = deps;
  const teardown = experiment.discovered.definition.teardown!;
  const experimentId = experiment.id;
  let ok = true;
  for (const entry of orphans) {
    if (deps.signal.aborted || c.force?.aborted) break;
    // Without a signal: a busy flock is retried a bounded few times (ClaimOrphanOptions).
    const claimed = await claimOrphan(entry, { clock });
    if (!claimed) continue; // another process won it
    const outcome = await runBoundedHook(
      (signal) =>
        teardown(experimentHookContext({
          experimentId,
          selectedEvalIds: claimed.selectedEvalIds,
          hook: "teardown",
          signal,
          clock,
          emit,
        })),
      { clock, ...(c.force ? { stop: c.force } : {}) },
    );
    if (!outcome.ok && outcome.forced) {
      claimed.abandon();
      return false;
    }
    const removed = await claimed.done();
    if (!removed.ok) {
      emit(lifecycleDiagnostic(clock.now(), {
        level: "warning",
        code: "teardown-registration-remove-failed",
        message: `Cannot remove the claimed teardown registration of ${experimentId}: ${
          errorMessage(removed.error)
        }`,
        experimentId,
      }));
    }
    emit(orphanOutcome(clock.now(), experimentId, claimed.registration, outcome));
    ok &&= outcome.ok;
  }
  return ok;
}

/** `orphan-teardown-ran` (info) or `orphan-teardown-failed` (warning). */
function orphanOutcome(
  at: number,
  experimentId: string,
  registration: { readonly pid: number; readonly invocationId: string },
  outcome: HookOutcome,
): Diagnostic {
  const { pid, invocationId } = registration;
  const data = { experimentId, invocationId, pid };
  if (outcome.ok) {
    return lifecycleDiagnostic(at, {
      level: "info",
      code: "orphan-teardown-ran",
      message: `ran the teardown of ${experimentId} for an orphaned registration (pid ${pid})`,
      experimentId,
      data,
    });
  }
  return lifecycleDiagnostic(at, {
    level: "warning",
    code: "orphan-teardown-failed",
    message:
      `the teardown of ${experimentId} for an orphaned registration (pid ${pid}) failed: ${outcome.message}`,
    experimentId,
    data,
  });
}

/** Reminds once per Experiment with orphans that this Invocation does not recover (ORPH-6). */
async function remindPending(plan: Plan, deps: RecoveryDeps): Promise<void> {
  const recovered = new Set(
    plan.experiments.filter((e) => e.discovered.definition.teardown).map((e) => e.id),
  );
  let pending: string[];
  try {
    pending = await listPendingOrphans(scanOf(deps));
  } catch {
    // Advisory only: an unreadable teardowns directory also fails every registration write and
    // recovery of this Invocation, and those report it (`teardown-registration-write-failed`,
    // `orphan-teardown-failed`).
    return;
  }
  for (const id of pending) {
    if (recovered.has(id)) continue;
    const command = `niceeval exp ${id} --teardown`;
    deps.emit(lifecycleDiagnostic(deps.clock.now(), {
      level: "info",
      code: "orphan-teardown-pending",
      message: `${id} left an orphaned teardown registration; run its teardown with ${command}`,
      experimentId: id,
      data: { experimentId: id, command },
    }));
  }
}
