import type { RampState } from "../_shared/mod.ts";
import { type EtaStats, NO_ETA_STATS } from "./eta.ts";

/**
 * What the live panel shows, as plain data (cli.md OUT-H7, scheduling.md §9). The panel learns
 * everything from run events; {@link PanelStart} is the only thing it is told up front.
 */

/** What the panel knows before the first event: the plan totals and the title. */
export interface PanelStart {
  /** `niceeval exp` plus the positionals as typed. */
  readonly title: string;
  /** Start of the Invocation (epoch ms); elapsed times count from here. */
  readonly startedAt: number;
  /** Planned slots, carried ones included. */
  readonly total: number;
  /** Carried slots (OUT-2); they stay in `reused` for the whole run. */
  readonly reused: number;
  /**
   * The global cap G at start (NDJSON `progress`). The plain heartbeat names the cap only with a
   * ramp, when it can differ from the PLAN's (OUT-H16).
   */
  readonly cap: number;
  /** The ramp at start, when the run ramps (OUT-5); `ramp` events move it. */
  readonly ramp?: PanelRamp | null;
}

/** The ramp line's facts (OUT-5): `ramp cap <cap> · range <from>–<to> · <state>`. */
export interface PanelRamp {
  readonly cap: number;
  readonly from: number;
  readonly to: number;
  readonly state: RampState;
  /** The hold's reason while held, else null. */
  readonly reason: string | null;
}

/**
 * The counters line (OUT-3). After every event
 * `total = reused + running + queued + passed + failed + errored + skipped` (RUN-3);
 * `backoff` is a subset of `running` (RUN-2).
 */
export interface Counters {
  readonly total: number;
  readonly reused: number;
  readonly running: number;
  readonly backoff: number;
  readonly queued: number;
  readonly passed: number;
  readonly failed: number;
  readonly errored: number;
  readonly skipped: number;
}

/** A send backoff in progress (W14/W15, RETRY-4). */
interface BackoffView {
  readonly reason: string;
  readonly retry: number;
  readonly maxRetries: number;
  /** When the sleep ends (epoch ms); after it the Attempt waits to re-take a slot (W15). */
  readonly until: number;
}

/** One running Attempt (an ACTIVE row). */
export interface AttemptRow {
  /** Plan position of the slot. */
  readonly position: number;
  readonly evalId: string;
  readonly experimentId: string;
  readonly ordinal: number;
  readonly startedAt: number;
  /** Latest activity text (OUT-H8); empty until the first `activity` event. */
  readonly activity: string;
  /** Set between the `backoff` events `sleeping` and `resumed`. */
  readonly backoff: BackoffView | null;
}

/** A run-scope ACTIVE row (OUT-4), such as `experiment setup · <id>`. */
export interface ScopeRow {
  /** Identity of the row (`setup:<experimentId>`). */
  readonly key: string;
  readonly text: string;
  readonly since: number;
  /** Latest progress text of the hook, or empty. */
  readonly detail: string;
}

/** Everything the live panel renders. */
export interface PanelState {
  readonly start: PanelStart;
  readonly counters: Counters;
  /** Run-scope rows in the order they appeared. */
  readonly scopeRows: readonly ScopeRow[];
  /**
   * Attempt rows by display position. A settled Attempt leaves a hole (`null`) that the next
   * started Attempt fills, so rows keep their positions (OUT-H7).
   */
  readonly attemptRows: readonly (AttemptRow | null)[];
  /** Estimated cost of the Attempts executed so far, once any estimate exists. */
  readonly costUSD: number | null;
  /** True after the first interrupt. */
  readonly interrupted: boolean;
  /** The live ramp, when the run ramps. */
  readonly ramp: PanelRamp | null;
  /** Durations of settled Attempts, for the ETA of the title note (docs/progress.md). */
  readonly eta: EtaStats;
}

/** The counters before any event: everything not reused is queued. */
export function initialCounters(start: PanelStart): Counters {
  return {
    total: start.total,
    reused: start.reused,
    running: 0,
    backoff: 0,
    queued: start.total - start.reused,
    passed: 0,
    failed: 0,
    errored: 0,
    skipped: 0,
  };
}

/** The state before any event. */
export function createPanelState(start: PanelStart): PanelState {
  return {
    start,
    counters: initialCounters(start),
    scopeRows: [],
    attemptRows: [],
    costUSD: null,
    interrupted: false,
    ramp: start.ramp ?? null,
    eta: NO_ETA_STATS,
  };
}
