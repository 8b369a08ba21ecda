/** The adaptive ramp's settings, control-file reads, status and dependencies (scheduling.md §23). */
import type { Clock, RampState, RunEventSink } from "../_shared/mod.ts";

/** A ramp's resolved settings (RAMP-1). */
export interface RampSettings {
  readonly from: number;
  readonly to: number;
  readonly step: number;
  readonly windowMs: number;
}

/** A range override or the configured range. */
export interface RampRange {
  readonly from: number;
  readonly to: number;
}

/** What the control file says (RAMP-9); `null` fields mean "none". */
export interface RampControl {
  readonly hold: { readonly reason: string } | null;
  readonly range: RampRange | null;
}

/** One read of the control file: its content, none (no file), or why it is invalid. */
export type RampControlRead = RampControl | { readonly invalid: string };

/** The ramp as snapshots, live files and the panel see it. */
export interface RampStatus {
  readonly cap: number;
  readonly from: number;
  readonly to: number;
  readonly step: number;
  readonly windowMs: number;
  readonly state: RampState;
  /** The hold's reason while a hold is in force, else null. */
  readonly heldReason: string | null;
  /** Consecutive windows with pushback so far (RAMP-4 step 3). */
  readonly streak: number;
}

/** What the controller reads and drives. */
export interface RampDeps {
  readonly clock: Clock;
  readonly emit: RunEventSink;
  /** Applies a new cap to the global gate. */
  setCap(cap: number): void;
  /** Executing Attempts: held global slots (`running − backoff`). */
  held(): number;
  /** Attempts counted `queued` (OUT-3). */
  queued(): number;
  /** Reads the control file (RAMP-9); absent: no control file is consulted. */
  readControl?(): RampControlRead;
  /** Called with the status at start and at every window end (RAMP-11 live files). */
  publish?(status: RampStatus): void;
}
