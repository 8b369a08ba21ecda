/**
 * Experiment lifecycle (scheduling.md §12): triggered by the Experiment's first Attempt that
 * passes preflight, it awaits startup orphan recovery, takes the sharedState lease, writes the
 * teardown registration and runs `setup`, memoized (LIFE-2). After the last slot settles the
 * cleanup chain runs exactly once (LIFE-6, LIFE-8); the lease is released only when every step
 * succeeded (LEASE-8). A second interrupt abandons registrations and retains leases (INT-2).
 */
import {
  abortKind,
  type Clock,
  errorMessage,
  onAbort,
  raceAbort,
  type Random,
} from "../_shared/mod.ts";
import type { RunEventSink } from "../_shared/mod.ts";
import {
  acquireLease,
  type HeldLease,
  type HeldRegistration,
  registerTeardown,
} from "../coordination/mod.ts";
import type { PlannedExperiment } from "../plan/mod.ts";
import { type LeaseNotices, leaseRetained, lifecycleDiagnostic } from "./_lifecycle_events.ts";
import { runExperimentTeardown } from "./_experiment_teardown.ts";
import { experimentHookContext } from "./hooks.ts";
import type { SchedulerCoordination } from "./types.ts";
import { SetupFailedError } from "./_closing.ts";

export { SetupFailedError };

/** What the lifecycle needs from the run. */
interface LifecycleDeps {
  readonly clock: Clock;
  readonly emit: RunEventSink;
  /** Aborted on interrupt. */
  readonly signal: AbortSignal;
  /** Eval IDs selected for this experiment. */
  readonly selectedEvalIds: readonly string[];
  /** Called synchronously when `setup` fails, before any waiter learns of it (LIFE-5). */
  readonly onSetupFailed?: () => void;
  /** Source of owner tokens and temporary names. */
  readonly random?: Random;
  /** Without it: no lease, no registration, no recovery to await. */
  readonly coordination?: SchedulerCoordination;
  /** The Experiment's startup orphan recovery task, if it has one (ORPH-5, LIFE-2 step 1). */
  readonly recovery?: () => Promise<void> | undefined;
  /** Shared `state-lease-waiting` notices (LEASE-6). */
  readonly notices?: LeaseNotices;
  /**
   * Freezes and stops the Experiment's reuse pools before its teardown (LIFE-6 step 1,
   * `RunPlanOptions.beforeTeardown`).
   */
  readonly beforeTeardown?: (experimentId: string) => Promise<boolean>;
}

/** The lifecycle of one experiment in one Invocation. */
export class ExperimentLifecycle {
  readonly #experiment: PlannedExperiment;
  readonly #deps: LifecycleDeps;
  #started: Promise<void> | undefined;
  #cleanup: Promise<void> | undefined;
  #triggered = false;
  #ready = false;
  #failure: SetupFailedError | undefined;
  /** Past the lease step: the external state is this Invocation's, and teardown is owed. */
  #owned = false;
  #lease: HeldLease | undefined;
  #registration: HeldRegistration | undefined;
  readonly #freshFailures: string[] = [];
  /**
   * Abandons cleanup on a second interrupt (INT-2); removed once cleanup ran, after which
   * abandoning changes nothing.
   */
  readonly #onForce: Disposable;

  constructor(experiment: PlannedExperiment, deps: LifecycleDeps) {
    this.#experiment = experiment;
    this.#deps = deps;
    this.#onForce = onAbort(deps.coordination?.force, () => this.#abandon());
  }

  /** True once the lifecycle was triggered (an Attempt reached CHAIN-8). */
  get triggered(): boolean {
    return this.#triggered;
  }

  /** True once the lifecycle is ready: lease held, registration written, `setup` succeeded. */
  get ready(): boolean {
    return this.#ready;
  }

  /** The setup failure, once `setup` failed. */
  get failure(): SetupFailedError | undefined {
    return this.#failure;
  }

  /**
   * Triggers the lifecycle (LIFE-2) and reports readiness: null when the experiment is ready now,
   * else the memoized preparation every caller awaits. The promise rejects with
   * SetupFailedError, or with the interrupt's reason when interrupted while waiting.
   */
  trigger(): Promise<void> | null {
    this.#triggered = true;
    if (this.#ready) return null;
    if (!this.#needsPreparation()) {
      this.#owned = this.#ready = true;
      return null;
    }
    if (!this.#started) {
      this.#started = this.#prepare();
      this.#started.catch(() => undefined); // observed by every waiter and by cleanup()
    }
    return this.#started;
  }

  /** Records a fresh-sandbox cleanup failure for LIFE-6 step 2 (CHAIN-12). */
  noteFreshCleanupFailure(message: string): void {
    this.#freshFailures.push(message);
  }

  /**
   * Runs the cleanup chain once (LIFE-6, LIFE-8), after a still running preparation has returned.
   * Never rejects; resolves at once when never triggered.
   */
  cleanup(): Promise<void> {
    if (!this.#triggered) {
      this.#onForce[Symbol.dispose]();
      return Promise.resolve();
    }
    this.#cleanup ??= this.#runCleanup().finally(() => this.#onForce[Symbol.dispose]());
    return this.#cleanup;
  }

  #needsPreparation(): boolean {
    const def = this.#experiment.discovered.definition;
    if (def.setup) return true;
    return this.#deps.coordination !== undefined &&
      (def.sharedState !== undefined || def.teardown !== undefined);
  }

  async #prepare(): Promise<void> {
    const { signal } = this.#deps;
    try {
      const recovery = this.#deps.recovery?.();
      if (recovery) await raceAbort(recovery, signal); // W6
      await this.#acquireLease(); // W7
    } catch (error) {
      if (abortKind(error) !== undefined || signal.aborted) throw error;
      throw this.#setupFailed(
        `Cannot acquire the sharedState lease: ${errorMessage(error)}`,
        error,
      );
    }
    this.#owned = true;
    await this.#register();
    await this.#runSetup(); // W8
    this.#ready = true;
  }

  async #acquireLease(): Promise<void> {
    const c = this.#deps.coordination;
    const key = this.#experiment.discovered.definition.sharedState?.key;
    if (!c || key === undefined) return;
    const id = this.#experiment.id;
    let waited = false;
    try {
      this.#lease = await acquireLease(key, {
        projectRoot: c.projectRoot,
        experimentId: id,
        invocationId: c.invocationId,
        identity: c.identity,
        signal: this.#deps.signal,
        clock: this.#deps.clock,
        ...(this.#deps.random ? { random: this.#deps.random } : {}),
        mutex: c.mutex,
        onWaiting: (info) => {
          waited = true;
          this.#deps.notices?.waiting(id, key, info.retained);
        },
      });
    } finally {
      if (waited) this.#deps.notices?.done(id, key);
    }
    if (c.force?.aborted) this.#lease.retain();
  }

  /** Registers the teardown; a failure is a warning and the run continues (ORPH-1). */
  async #register(): Promise<void> {
    const c = this.#deps.coordination;
    if (!c || !this.#experiment.discovered.definition.teardown) return;
    const { clock, random } = this.#deps;
    const result = await registerTeardown({
      projectRoot: c.projectRoot,
      experimentId: this.#experiment.id,
      selectedEvalIds: this.#deps.selectedEvalIds,
      invocationId: c.invocationId,
      identity: c.identity,
      clock,
      ...(random ? { random } : {}),
    });
    if (result.ok) {
      this.#registration = result.held;
      if (c.force?.aborted) result.held.abandon();
      return;
    }
    this.#warn("teardown-registration-write-failed", result.message);
  }

  async #runSetup(): Promise<void> {
    const setup = this.#experiment.discovered.definition.setup;
    if (!setup) return;
    const { clock, emit } = this.#deps;
    const experimentId = this.#experiment.id;
    const startedAt = clock.now();
    const base = { type: "experiment_setup", experimentId } as const;
    emit({ ...base, at: startedAt, status: "started", durationMs: null, message: null });
    try {
      const returned = await setup(this.#setupContext());
      if (typeof returned === "function") {
        throw new Error("setup returned a function; return nothing and put cleanup in teardown");
      }
    } catch (error) {
      throw this.#setupFailed(errorMessage(error), error, startedAt);
    }
    const durationMs = clock.now() - startedAt;
    emit({ ...base, at: clock.now(), status: "done", durationMs, message: null });
  }

  #setupFailed(message: string, cause: unknown, startedAt?: number): SetupFailedError {
    const { clock } = this.#deps;
    this.#deps.emit({
      type: "experiment_setup",
      at: clock.now(),
      experimentId: this.#experiment.id,
      status: "failed",
      durationMs: startedAt === undefined ? null : clock.now() - startedAt,
      message,
    });
    this.#failure = new SetupFailedError(message, { cause });
    this.#deps.onSetupFailed?.();
    return this.#failure;
  }

  async #runCleanup(): Promise<void> {
    await this.#started?.catch(() => undefined);
    if (!this.#owned) return; // never got past the lease: nothing was set up, nothing is held
    let ok = await this.#stopPools();
    ok = this.#checkFreshLedger() && ok;
    const def = this.#experiment.discovered.definition;
    const teardown = def.teardown
      ? await runExperimentTeardown(def.teardown, {
        experimentId: this.#experiment.id,
        selectedEvalIds: this.#deps.selectedEvalIds,
        clock: this.#deps.clock,
        emit: this.#deps.emit,
        force: this.#deps.coordination?.force,
      })
      : "ok";
    if (teardown === "forced") return this.#abandon();
    ok = teardown === "ok" && ok;
    ok = await this.#removeRegistration() && ok;
    await this.#settleLease(ok);
  }

  /** Stops the reuse pools; false (after a warning) when that failed (LIFE-6 step 1). */
  async #stopPools(): Promise<boolean> {
    const hook = this.#deps.beforeTeardown;
    if (!hook) return true;
    try {
      return await hook(this.#experiment.id);
    } catch (error) {
      this.#warn(
        "sandbox-reuse-cleanup-failed",
        `Cannot stop the reuse pools of ${this.#experiment.id}: ${errorMessage(error)}`,
      );
      return false;
    }
  }

  /** Warns and answers false when a fresh sandbox could not be stopped (LIFE-6 step 2). */
  #checkFreshLedger(): boolean {
    const failures = this.#freshFailures;
    if (failures.length === 0) return true;
    this.#warn(
      "sandbox-fresh-cleanup-failed",
      `${failures.length} fresh sandbox(es) of ${this.#experiment.id} could not be stopped: ${
        failures[0]
      }`,
    );
    return false;
  }

  /** Removes the teardown registration; false (after a warning) on failure (LIFE-6 step 4). */
  async #removeRegistration(): Promise<boolean> {
    const registration = this.#registration;
    if (!registration) return true;
    const removed = await registration.remove();
    if (removed.ok) return true;
    this.#warn(
      "teardown-registration-remove-failed",
      `Cannot remove the teardown registration of ${this.#experiment.id}: ${
        errorMessage(removed.error)
      }`,
    );
    return false;
  }

  /** Releases the lease after a clean cleanup, else retains it (LIFE-6 step 5, LEASE-8). */
  async #settleLease(ok: boolean): Promise<void> {
    const lease = this.#lease;
    if (!lease) return;
    if (this.#deps.coordination?.force?.aborted) return this.#abandon();
    const at = () => this.#deps.clock.now();
    const fields = { experimentId: this.#experiment.id, key: lease.key };
    if (!ok) {
      lease.retain();
      this.#deps.emit(leaseRetained(at(), { ...fields, reason: "cleanup-failed" }));
      return;
    }
    const released = await lease.release();
    if (released.ok) return;
    const detail = errorMessage(released.error);
    this.#deps.emit(leaseRetained(at(), { ...fields, reason: "release-failed", detail }));
  }

  /**
   * Keeps the registration for ORPH-3 and retains the lease (INT-2). Both handles are idempotent,
   * so a registration already removed or a lease already released stays so.
   */
  #abandon(): void {
    this.#registration?.abandon();
    this.#lease?.retain();
  }

  #warn(code: string, message: string): void {
    const experimentId = this.#experiment.id;
    this.#deps.emit(
      lifecycleDiagnostic(this.#deps.clock.now(), {
        level: "warning",
        code,
        message,
        experimentId,
      }),
    );
  }

  #setupContext() {
    return experimentHookContext({
      experimentId: this.#experiment.id,
      selectedEvalIds: this.#deps.selectedEvalIds,
      hook: "setup",
      signal: this.#deps.signal,
      clock: this.#deps.clock,
      emit: this.#deps.emit,
    });
  }
}
