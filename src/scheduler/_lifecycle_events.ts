/**
 * The diagnostics of the coordinated lifecycle (scheduling.md §28): lease waits and retention,
 * teardown registrations, orphan recovery. None of them ever carries an owner token (LEASE-6,
 * LEASE-8).
 */
import type { Clock, JsonValue, RunEvent, RunEventSink } from "../_shared/mod.ts";

/** A `diagnostic` run event. */
export type Diagnostic = Extract<RunEvent, { type: "diagnostic" }>;

/** Why a lease was retained (LEASE-8). */
export type RetainReason = "cleanup-failed" | "release-failed" | "startup-recovery-failed";

/** Builds a diagnostic; warnings and errors are persisted with the Experiment's Run. */
export function lifecycleDiagnostic(
  at: number,
  fields: {
    level: Diagnostic["level"];
    code: string;
    message: string;
    experimentId: string;
    data?: Record<string, JsonValue>;
  },
): Diagnostic {
  return {
    type: "diagnostic",
    at,
    level: fields.level,
    code: fields.code,
    message: fields.message,
    experimentId: fields.experimentId,
    evalId: null,
    data: fields.data ?? null,
    persist: fields.level !== "info",
  };
}

/** The LEASE-10 inspection command, which prints the full recovery command. */
export function recoveryCommand(experimentId: string, key: string): string {
  return `niceeval exp ${experimentId} --teardown --recover-shared-state ${key}`;
}

/** The `state-lease-recovery-required` warning for a retained sharedState lease (LEASE-8). */
export function leaseRetained(
  at: number,
  lease: { experimentId: string; key: string; reason: RetainReason; detail?: string },
): Diagnostic {
  const { experimentId, key, reason } = lease;
  return lifecycleDiagnostic(at, {
    level: "warning",
    code: "state-lease-recovery-required",
    message: `sharedState ${key} of ${experimentId} stays retained (${reason}${
      lease.detail ? `: ${lease.detail}` : ""
    }); after checking the state, recover it: ${recoveryCommand(experimentId, key)}`,
    experimentId,
    data: { experimentId, sharedStateKey: key, reason },
  });
}

/**
 * One `state-lease-waiting` notice per Experiment (LEASE-6, WAIT-4), shared by its startup
 * recovery and its lifecycle; a second one only when the lease turns out to be retained, because
 * only that one names the recovery command.
 */
export class LeaseNotices {
  readonly #clock: Clock;
  readonly #emit: RunEventSink;
  readonly #shown = new Map<string, boolean>();

  constructor(clock: Clock, emit: RunEventSink) {
    this.#clock = clock;
    this.#emit = emit;
  }

  /** Reports that `experimentId` waits for `key` (the panel row, and the notice once). */
  waiting(experimentId: string, key: string, retained: boolean): void {
    this.#emit({
      type: "wait",
      at: this.#clock.now(),
      scope: "state-lease",
      key,
      experimentId,
      state: "started",
      detail: retained ? "retained" : null,
    });
    const shown = this.#shown.get(experimentId);
    if (shown === true || shown === retained) return;
    this.#shown.set(experimentId, retained);
    const why = retained
      ? `it is retained by a run that did not finish its cleanup and needs explicit recovery; inspect it with ${
        recoveryCommand(experimentId, key)
      }`
      : "another run holds it";
    this.#emit(lifecycleDiagnostic(this.#clock.now(), {
      level: "info",
      code: "state-lease-waiting",
      message: `waiting for sharedState ${key} · ${experimentId}: ${why}`,
      experimentId,
      data: { experimentId, sharedStateKey: key, retained },
    }));
  }

  /** Ends the panel row of a lease wait (acquired, or given up). */
  done(experimentId: string, key: string): void {
    this.#emit({
      type: "wait",
      at: this.#clock.now(),
      scope: "state-lease",
      key,
      experimentId,
      state: "ended",
      detail: null,
    });
  }
}
