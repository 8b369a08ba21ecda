/**
 * The adaptive ramp's window controller (scheduling.md §23): on the injected clock it moves the
 * global cap between `from` and `to` at the end of each window, from the window's facts
 * (saturation, pushback, errored settlements, retry surges) and the project's control file. It
 * owns no gate: it reads what it needs through {@link RampDeps} and applies a cap through
 * `setCap`, which grants by priority on a raise and never revokes on a cut (RAMP-6, RAMP-7).
 */
import type { AttemptResult, Clock, RampState, RunEvent, RunEventSink } from "../_shared/mod.ts";
import type { TimerHandle } from "../_shared/mod.ts";
import { RAMP_PUSHBACK_WINDOWS, RAMP_SATURATION_FRACTION, RAMP_SURGE_MIN } from "./constants.ts";

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

const NO_CONTROL: RampControl = { hold: null, range: null };

/** The window controller of one ramped Invocation (RAMP-4, RAMP-5). */
export class RampController {
  readonly #s: RampSettings;
  readonly #d: RampDeps;
  #cap: number;
  #range: RampRange;
  #hold: { readonly reason: string } | null = null;
  #state: RampState;
  #streak = 0;
  /** A `ramp-control-invalid` warning was emitted and no valid read followed yet. */
  #warned = false;
  // Window bookkeeping.
  #windowEnd = 0;
  #timer: TimerHandle | undefined;
  #stopped = false;
  #saturatedMs = 0;
  #lastAt = 0;
  #lastSaturated = false;
  #pushback = 0;
  #errored = 0;
  #networkRetries = 0;

  /**
   * Reads the control file once (a hold or range already in force applies from the start, OUT-1).
   * The gate must start at {@link cap}: `from` clamped into the range in force.
   */
  constructor(settings: RampSettings, deps: RampDeps) {
    this.#s = settings;
    this.#d = deps;
    this.#range = { from: settings.from, to: settings.to };
    this.#cap = settings.from;
    this.#applyControl(this.#read());
    this.#cap = clamp(this.#cap, this.#range);
    this.#state = this.#restingState();
    deps.publish?.(this.status());
  }

  /** The cap in force. */
  get cap(): number {
    return this.#cap;
  }

  /** True once the first window started. */
  get started(): boolean {
    return this.#windowEnd !== 0;
  }

  /** The ramp's current status. */
  status(): RampStatus {
    return {
      cap: this.#cap,
      from: this.#range.from,
      to: this.#range.to,
      step: this.#s.step,
      windowMs: this.#s.windowMs,
      state: this.#state,
      heldReason: this.#hold?.reason ?? null,
      streak: this.#streak,
    };
  }

  /** Starts the first window; called at the first global-slot grant (RAMP-4). Idempotent. */
  start(): void {
    if (this.started || this.#stopped) return;
    const now = this.#d.clock.now();
    this.#lastAt = now;
    this.#lastSaturated = this.#d.held() >= this.#cap;
    this.#schedule(now + this.#s.windowMs);
  }

  /** Stops the windows for good (the run ended). */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) this.#d.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** The held-slot count may have changed: accounts the time at the cap so far (RAMP-5). */
  observe(): void {
    if (!this.started) return;
    this.#account(this.#d.clock.now());
  }

  /** A send was retried, or rejected for good, with `reason` (RETRY-7). */
  retried(reason: string): void {
    if (reason === "rate_limit") this.#pushback++;
    else if (reason === "network") this.#networkRetries++;
  }

  /**
   * An Attempt settled: an `errored` one blocks this window's increase, and a send rejected for
   * good with `rate_limit` counts as pushback (RAMP-5 "retried or terminal").
   */
  settled(result: AttemptResult): void {
    if (result.verdict !== "errored") return;
    this.#errored++;
    const error = result.error;
    if (error?.code === "agent-send-failed" && /, rate_limit\)$/.test(error.message)) {
      this.#pushback++;
    }
  }

  #schedule(end: number): void {
    this.#windowEnd = end;
    const delay = Math.max(0, end - this.#d.clock.now());
    this.#timer = this.#d.clock.setTimeout(() => this.#windowEnded(), delay);
  }

  #account(now: number): void {
    if (this.#lastSaturated) this.#saturatedMs += now - this.#lastAt;
    this.#lastAt = now;
    this.#lastSaturated = this.#d.held() >= this.#cap;
  }

  /** One window end, RAMP-4 steps 1 … 7; then the next window starts where this one ended. */
  #windowEnded(): void {
    this.#timer = undefined;
    if (this.#stopped) return;
    const end = this.#windowEnd;
    this.#account(end);
    const previousCap = this.#cap;
    const previousState = this.#state;
    const previousRange = this.#range;
    const previousHold = this.#hold;
    // Step 1: the control file; a changed range clamps the cap.
    this.#applyControl(this.#read());
    const rangeChanged = previousRange.from !== this.#range.from ||
      previousRange.to !== this.#range.to;
    this.#cap = clamp(this.#cap, this.#range);
    // Step 2: the window's facts (RAMP-5).
    const saturated = this.#saturatedMs >= RAMP_SATURATION_FRACTION * this.#s.windowMs &&
      this.#d.queued() > 0;
    const pushback = this.#pushback > 0;
    const errored = this.#errored > 0;
    const surge = this.#networkRetries >= Math.max(RAMP_SURGE_MIN, Math.ceil(this.#cap / 4));
    // Step 3: the pushback streak.
    this.#streak = pushback ? this.#streak + 1 : 0;
    let cause: Extract<RunEvent, { type: "ramp" }>["cause"] = null;
    if (this.#streak === RAMP_PUSHBACK_WINDOWS) {
      // Step 4: step down, also while held (RAMP-8).
      this.#cap = Math.max(this.#range.from, this.#cap - this.#s.step);
      this.#streak = 0;
      this.#state = "backing off";
      cause = "pushback";
    } else if (
      this.#hold === null && !rangeChanged && saturated && !pushback && !errored && !surge &&
      this.#cap < this.#range.to
    ) {
      // Step 5: climb. A window whose range changed only applies the range (docs/ramp.md).
      this.#cap = Math.min(this.#range.to, this.#cap + this.#s.step);
      this.#state = "climbing";
      cause = "saturated";
    } else this.#state = this.#restingState(); // step 6
    if (cause === null && rangeChanged) cause = "range";
    if (cause === null && previousHold === null && this.#hold !== null) cause = "hold";
    if (cause === null && previousHold !== null && this.#hold === null) cause = "resume";
    // Step 7: apply, report, reset the counters, next window.
    if (this.#cap !== previousCap) this.#d.setCap(this.#cap);
    this.#lastSaturated = this.#d.held() >= this.#cap;
    this.#saturatedMs = 0;
    this.#pushback = this.#errored = this.#networkRetries = 0;
    if (this.#cap !== previousCap || rangeChanged || this.#state !== previousState) {
      this.#d.emit({
        type: "ramp",
        at: end,
        cap: this.#cap,
        previousCap,
        from: this.#range.from,
        to: this.#range.to,
        state: this.#state,
        cause,
        reason: this.#hold?.reason ?? null,
      });
    }
    this.#d.publish?.(this.status());
    this.#schedule(end + this.#s.windowMs);
  }

  #restingState(): RampState {
    if (this.#hold !== null) return "held";
    return this.#cap >= this.#range.to ? "at ceiling" : "steady";
  }

  #read(): RampControlRead {
    return this.#d.readControl?.() ?? NO_CONTROL;
  }

  /** Applies a valid read; an invalid one warns once and keeps the settings in force (RAMP-9). */
  #applyControl(read: RampControlRead): void {
    if ("invalid" in read) {
      if (!this.#warned) {
        this.#warned = true;
        this.#d.emit({
          type: "diagnostic",
          at: this.#d.clock.now(),
          level: "warning",
          code: "ramp-control-invalid",
          message: `the ramp control file is invalid (${read.invalid}); the previous settings stay`,
          experimentId: null,
          evalId: null,
          data: null,
          persist: false,
        });
      }
      return;
    }
    this.#warned = false;
    this.#hold = read.hold;
    this.#range = read.range ?? { from: this.#s.from, to: this.#s.to };
  }
}

function clamp(cap: number, range: RampRange): number {
  return Math.min(range.to, Math.max(range.from, cap));
}
