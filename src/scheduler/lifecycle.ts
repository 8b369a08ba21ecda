/**
 * Experiment lifecycle (scheduling.md §12): `setup` memoized per experiment, triggered by its first
 * Attempt that passes preflight; the cleanup chain runs exactly once after its last slot settles
 * (LIFE-6, LIFE-8). Every hook is bounded where the spec bounds it.
 */
import { AbortReason } from "../_shared/mod.ts";
import { type Clock, sleep } from "../_shared/mod.ts";
import { errorMessage } from "../_shared/mod.ts";
import type { RunEventSink } from "../_shared/mod.ts";
import type { JsonValue } from "../_shared/mod.ts";
import type { ExperimentHookContext } from "../discovery/mod.ts";
import type { PlannedExperiment } from "../plan/mod.ts";
import { CLEANUP_TIMEOUT_MS } from "./constants.ts";

/** Thrown to waiters when their experiment's setup failed. */
export class SetupFailedError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "SetupFailedError";
  }
}

/** What the lifecycle needs from the run. */
export interface LifecycleDeps {
  readonly clock: Clock;
  readonly emit: RunEventSink;
  /** Aborted on interrupt. */
  readonly signal: AbortSignal;
  /** Eval IDs selected for this experiment. */
  readonly selectedEvalIds: readonly string[];
  /** Called synchronously when `setup` fails, before any waiter learns of it (LIFE-5). */
  readonly onSetupFailed?: () => void;
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

  constructor(experiment: PlannedExperiment, deps: LifecycleDeps) {
    this.#experiment = experiment;
    this.#deps = deps;
  }

  /** True once the lifecycle was triggered (an Attempt reached CHAIN-8). */
  get triggered(): boolean {
    return this.#triggered;
  }

  /** True once `setup` finished successfully (or there is none and the lifecycle triggered). */
  get ready(): boolean {
    return this.#ready;
  }

  /** The setup failure, once `setup` failed. */
  get failure(): SetupFailedError | undefined {
    return this.#failure;
  }

  /**
   * Triggers the lifecycle (LIFE-2) and reports readiness: null when the experiment is ready now
   * (no `setup`, or it already succeeded), else the memoized setup outcome every caller awaits.
   * The promise rejects with SetupFailedError.
   */
  trigger(): Promise<void> | null {
    this.#triggered = true;
    if (this.#ready) return null;
    if (!this.#experiment.discovered.definition.setup) {
      this.#ready = true;
      return null;
    }
    this.#started ??= this.#runSetup();
    return this.#started;
  }

  /**
   * Runs the cleanup chain once (LIFE-6, LIFE-8): after a still running `setup` has returned,
   * teardown bounded by CLEANUP_TIMEOUT_MS. Never rejects; resolves at once when never triggered.
   */
  cleanup(): Promise<void> {
    if (!this.#triggered) return Promise.resolve();
    this.#cleanup ??= this.#runCleanup();
    return this.#cleanup;
  }

  async #runCleanup(): Promise<void> {
    await this.#started?.catch(() => undefined);
    await this.#runTeardown();
  }

  async #runSetup(): Promise<void> {
    const setup = this.#experiment.discovered.definition.setup!;
    const { clock, emit } = this.#deps;
    const id = this.#experiment.id;
    const startedAt = clock.now();
    emit({
      type: "experiment_setup",
      at: startedAt,
      experimentId: id,
      status: "started",
      durationMs: null,
      message: null,
    });
    try {
      const returned = await setup(this.#hookContext(this.#deps.signal, "experiment_setup"));
      if (typeof returned === "function") {
        throw new Error("setup returned a function; return nothing and put cleanup in teardown");
      }
    } catch (error) {
      const message = errorMessage(error);
      emit({
        type: "experiment_setup",
        at: clock.now(),
        experimentId: id,
        status: "failed",
        durationMs: clock.now() - startedAt,
        message,
      });
      this.#failure = new SetupFailedError(message, { cause: error });
      this.#deps.onSetupFailed?.();
      throw this.#failure;
    }
    this.#ready = true;
    emit({
      type: "experiment_setup",
      at: clock.now(),
      experimentId: id,
      status: "done",
      durationMs: clock.now() - startedAt,
      message: null,
    });
  }

  async #runTeardown(): Promise<void> {
    const teardown = this.#experiment.discovered.definition.teardown;
    if (!teardown) return;
    const { clock, emit } = this.#deps;
    const id = this.#experiment.id;
    const startedAt = clock.now();
    emit({
      type: "experiment_teardown",
      at: startedAt,
      experimentId: id,
      status: "started",
      durationMs: null,
      message: null,
    });
    const controller = new AbortController();
    const timer = new AbortController();
    try {
      await Promise.race([
        Promise.resolve().then(() =>
          teardown(this.#hookContext(controller.signal, "experiment_teardown"))
        ),
        sleep(clock, CLEANUP_TIMEOUT_MS, { signal: timer.signal }).then(() => {
          controller.abort(new AbortReason("timeout"));
          throw new Error(`teardown did not finish within ${CLEANUP_TIMEOUT_MS / 1000}s`);
        }),
      ]);
      emit({
        type: "experiment_teardown",
        at: clock.now(),
        experimentId: id,
        status: "done",
        durationMs: clock.now() - startedAt,
        message: null,
      });
    } catch (error) {
      const message = errorMessage(error);
      emit({
        type: "experiment_teardown",
        at: clock.now(),
        experimentId: id,
        status: "failed",
        durationMs: clock.now() - startedAt,
        message,
      });
      emit({
        type: "diagnostic",
        at: clock.now(),
        level: "warning",
        code: "experiment-teardown-failed",
        message: `teardown of ${id} failed: ${message}`,
        experimentId: id,
        evalId: null,
        data: null,
        persist: true,
      });
    } finally {
      timer.abort();
    }
  }

  #hookContext(
    signal: AbortSignal,
    scope: "experiment_setup" | "experiment_teardown",
  ): ExperimentHookContext {
    const { clock, emit } = this.#deps;
    const id = this.#experiment.id;
    const hook = scope === "experiment_setup" ? "setup" : "teardown";
    const progress = (text: string) =>
      emit({ type: "hook_progress", at: clock.now(), experimentId: id, hook, text });
    return Object.freeze({
      experimentId: id,
      selectedEvalIds: this.#deps.selectedEvalIds,
      signal,
      progress: (u: { message: string }) => progress(u.message),
      log: (message: string) => progress(message),
      diagnostic: (
        d: {
          code: string;
          level: "warning" | "error";
          message: string;
          data?: Record<string, JsonValue>;
        },
      ) =>
        emit({
          type: "diagnostic",
          at: clock.now(),
          level: d.level,
          code: d.code,
          message: d.message,
          experimentId: id,
          evalId: null,
          data: d.data ?? null,
          persist: true,
        }),
    });
  }
}
