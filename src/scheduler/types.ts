/** The options and the snapshot of a scheduler. */
import type { AttemptResult, Clock, Random, SlotOutcome } from "../_shared/mod.ts";
import type { PlannedSlot } from "../plan/mod.ts";
import type { KeyedMutex, ProcessIdentity, ProcessProbe } from "../coordination/mod.ts";
import type { RunEventCallback } from "./_events.ts";
import type { ArtifactBuilds, BuildSnapshot } from "./builds.ts";
import type { CapSource } from "./cap.ts";
import type { AbandonAttempt } from "./control.ts";
import type { GateSnapshot } from "./gate.ts";
import type { JudgePrecheck, JudgePrecheckState } from "./judge.ts";
import type { PhysicalOptions } from "./physical.ts";
import type { RampControlRead, RampSettings, RampStatus } from "./ramp.ts";
import type { ExperimentBlock } from "./stops.ts";

/** Options of `runPlan`. */
export interface RunPlanOptions {
  /** Aborts on the first interrupt: no more grants, running Attempts are aborted. */
  readonly signal: AbortSignal;
  readonly clock: Clock;
  readonly random: Random;
  /**
   * Receives every event in emission order, one callback at a time (ORD-3): an asynchronous
   * callback is awaited before the next event is delivered, and the run resolves only after the
   * last callback settled. A rejection fails the run like an internal error (INT-3).
   */
  readonly onEvent: RunEventCallback;
  /** The global cap G; with a ramp, its `from` (rounds use it, PRIO-3). */
  readonly cap: number;
  /** Where `cap` came from (CAP-1), for the words of its warnings; unset reads as the flag. */
  readonly capSource?: CapSource;
  /** The adaptive ramp (scheduling.md §23); without it G stays `cap`. */
  readonly ramp?: RampOptions;
  /** Builds the result of an Attempt abandoned after the abort grace period. */
  readonly abandon: AbandonAttempt;
  /** Judge endpoints and their probe (STOP-7); without it no precheck runs. */
  readonly judge?: JudgePrecheck;
  /**
   * Cross-process coordination of the Experiment lifecycle: startup orphan recovery, sharedState
   * leases and teardown registrations (LIFE-2, ORPH, LEASE). Without it, none of them happens.
   */
  readonly coordination?: SchedulerCoordination;
  /**
   * Freezes the Experiment's reuse pools, then stops each once (LIFE-6 step 1); filled by the
   * sandbox wiring. Resolves false (after emitting `sandbox-reuse-cleanup-failed`) when a stop
   * failed; a throw counts as a failure too. A failure keeps the Experiment's sharedState lease
   * retained.
   */
  readonly beforeTeardown?: (experimentId: string) => Promise<boolean>;
  /** Machine slots and create pacing of sandbox Attempts (MSB, sandboxes.md §4.4). */
  readonly sandbox?: PhysicalOptions;
  /** Image/template builds the slots depend on (CHAIN-2); without it no slot waits for one. */
  readonly builds?: ArtifactBuilds;
  /**
   * Backpressure of the event consumers (the Record writer): after an Attempt ended, its global
   * slot is released only once this resolves. `null` means no wait. It bounds what a slow
   * consumer holds in memory when Attempts end faster than their results can be stored; it never
   * delays an Attempt's own execution or deadline. Ends early on interrupt.
   */
  readonly backpressure?: () => Promise<void> | null;
  /**
   * What the returned outcomes keep of an executed Attempt's result, once every event carrying
   * the whole result was emitted; default: all of it. A long run keeps one per slot in memory.
   */
  readonly retain?: (result: AttemptResult) => AttemptResult;
  /**
   * Takes each slot's outcome once it is final (a carried slot's when the run starts), after
   * {@link retain}. The scheduler then keeps none, and `run` resolves with an empty array: the
   * caller stores what it needs in its own, compact form (issue 20). Default: the outcomes are
   * kept and returned by plan position.
   */
  readonly onOutcome?: (slot: PlannedSlot, outcome: SlotOutcome) => void;
  /**
   * The circuit breaker (docs/bail.md): an experiment whose first `bailAfter` settled Attempts all
   * errored the same way stops dispatching (`experiment-halted`). Default BAIL_AFTER; 0 turns it
   * off (`--no-bail`).
   */
  readonly bailAfter?: number;
  /**
   * Experiments that must start no Attempt, by id, with why (a failed agent precondition): their
   * slots settle skipped `halted` with one `dispatch-halted` error each (STOP-3).
   */
  readonly blocked?: ReadonlyMap<string, ExperimentBlock>;
}

/** An adaptive ramp of the global cap and its links to the project's ramp files. */
export interface RampOptions {
  readonly settings: RampSettings;
  /** Reads the control file at start and at each window end (RAMP-9). */
  readonly readControl?: () => RampControlRead;
  /** Publishes the live status at start and at every window (RAMP-11). */
  readonly publish?: (status: RampStatus) => void;
}

/** What the lifecycle needs to coordinate with other processes (scheduling.md §12–§14). */
export interface SchedulerCoordination {
  /** The project root: `.niceeval/coordination/` lives under it. */
  readonly projectRoot: string;
  readonly invocationId: string;
  /** This process, read once at startup. */
  readonly identity: ProcessIdentity;
  readonly probe: ProcessProbe;
  /** The Invocation's in-process lease mutex (LEASE-2). */
  readonly mutex: KeyedMutex;
  /**
   * Aborts on the second interrupt (INT-2): teardowns not yet started are skipped, registrations
   * are left for ORPH-3, leases not yet released are retained, and nothing waits any longer.
   */
  readonly force?: AbortSignal;
}

/** The read-only scheduler snapshot tests assert against (scheduling.md conventions). */
export interface SchedulerSnapshot {
  readonly cap: number;
  /**
   * Held global slots. Equals `running − backoff` (RUN-4) whenever no Attempt is between its
   * grant and its `attempt_start` (a few microtasks, CHAIN-7 … CHAIN-10) or between its
   * `attempt_end` and the end of the consumers' `backpressure`; never less.
   */
  readonly heldSlots: number;
  readonly globalWaiters: number;
  readonly experimentPermits: Readonly<Record<string, GateSnapshot>>;
  readonly lanes: Readonly<Record<string, GateSnapshot>>;
  /** Machine sandbox slots by provider (this process's holders and waiters). */
  readonly machineSlots: Readonly<Record<string, GateSnapshot>>;
  /** The ramp's status, or null when the run does not ramp. */
  readonly ramp: RampStatus | null;
  /** Attempts between `attempt_start` and `attempt_end` (RUN-1). */
  readonly running: number;
  /** Running Attempts without a global slot because of send backoff (RUN-2). */
  readonly backoff: number;
  /** Runnable slots not yet started nor closed. */
  readonly queued: number;
  readonly judgePrecheck: JudgePrecheckState;
  /** Image/template builds of this run (CHAIN-2). */
  readonly builds: BuildSnapshot;
}
