/**
 * The adaptive ramp's window controller (scheduling.md §23): on the injected clock it moves the
 * global cap between `from` and `to` at the end of each window, from the window's facts
 * (saturation, pushback, errored settlements, retry surges) and the project's control file. It
 * owns no gate: it reads what it needs through {@link RampDeps} and applies a cap through
 * `setCap`, which grants by priority on a raise and never revokes on a cut (RAMP-6, RAMP-7).
 * Pushback steps down at once rather than after RAMP_PUSHBACK_WINDOWS windows, and a cap that saw
 * pushback is probed again one at a time (docs/ramp.md "Fast pushback").
 */
import type { AttemptResult, RampState, RunEvent, TimerHandle } from "../_shared/mod.ts";
import type { RampControl, RampControlRead, RampDeps, RampRange } from "./_ramp_types.ts";
import type { RampSettings, RampStatus } from "./_ramp_types.ts";
import { BACKOFF_CAP_MS, RAMP_PROBE_AFTER_WINDOWS, RAMP_PUSHBACK_WINDOWS } from "./constants.ts";
import { RAMP_SATURATION_FRACTION, RAMP_SURGE_MIN } from "./constants.ts";

export type {
  RampControl,
  RampControlRead,
  RampDeps,
  RampRange,
  RampSettings,
  RampStatus,
} from "./_ramp_types.ts";

type RampCause = Extract<RunEvent, { type: "ramp" }>["cause"];

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
  // Fast pushback (docs/ramp.md).
  /** A step-down happened in the current window. */
  #steppedThisWindow = false;
  /** A slot was granted since the last step-down: a rejection may come from the lowered cap. */
  #grantedSinceStepDown = true;
  #lastHeld = 0;
  /** The cap a step-down landed on; climbs above it go one at a time. Null before any. */
  #settled: number | null = null;
  /** Whole windows since the last step-down. */
  #windowsSinceStepDown = 0;

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
    this.#lastHeld = this.#d.held();
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
    const held = this.#d.held();
    if (held > this.#lastHeld) this.#grantedSinceStepDown = true;
    this.#lastHeld = held;
    this.#account(this.#d.clock.now());
  }

  /** A send was retried, or rejected for good, with `reason` (RETRY-7). */
  retried(reason: string): void {
    if (reason === "rate_limit") this.#pushedBack();
    else if (reason === "network") this.#networkRetries++;
  }

  /**
   * The backoff of a `rate_limit` retry with a server hint in a ramped run: the hint itself, capped
   * like RETRY-2; the lowered cap, not the sleep, spreads the retries (docs/ramp.md). Null: RETRY-2.
   */
  backoffMs(reason: string, retryAfterMs: number): number | null {
    return reason === "rate_limit" && retryAfterMs > 0
      ? Math.min(BACKOFF_CAP_MS, retryAfterMs)
      : null;
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
      this.#pushedBack();
    }
  }

  /**
   * Pushback: the first in a window steps down at once, unless no slot was granted since the last
   * step-down (then the rejection answers a request sent under the old cap). A step-down from a
   * probe above the settled cap goes back one; any other goes down by step (docs/ramp.md).
   */
  #pushedBack(): void {
    this.#pushback++;
    if (!this.started || this.#stopped) return;
    if (this.#steppedThisWindow || !this.#grantedSinceStepDown) return;
    const probing = this.#settled !== null && this.#cap > this.#settled;
    const cap = Math.max(this.#range.from, this.#cap - (probing ? 1 : this.#s.step));
    if (cap === this.#cap) return;
    const now = this.#d.clock.now();
    this.#account(now);
    const previousCap = this.#cap;
    this.#stepDownTo(cap);
    this.#lastSaturated = this.#d.held() >= this.#cap;
    this.#d.setCap(cap);
    this.#emitRamp(now, previousCap, "pushback");
    this.#d.publish?.(this.status());
  }

  #stepDownTo(cap: number): void {
    this.#cap = cap;
    this.#settled = cap;
    this.#windowsSinceStepDown = 0;
    this.#steppedThisWindow = true;
    this.#grantedSinceStepDown = false;
    this.#streak = 0;
    this.#state = "backing off";
  }

  /** Where a clean saturated window climbs to: by step, or by one above a settled cap. */
  #climbTarget(): number {
    const settled = this.#settled;
    if (settled === null || this.#cap + this.#s.step <= settled) {
      return Math.min(this.#range.to, this.#cap + this.#s.step);
    }
    if (this.#windowsSinceStepDown < RAMP_PROBE_AFTER_WINDOWS) return this.#cap;
    return Math.min(this.#range.to, this.#cap + 1);
  }

  #emitRamp(at: number, previousCap: number, cause: RampCause): void {
    this.#d.emit({
      type: "ramp",
      at,
      cap: this.#cap,
      previousCap,
      from: this.#range.from,
      to: this.#range.to,
      state: this.#state,
      cause,
      reason: this.#hold?.reason ?? null,
    });
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
    // Step 3: the pushback streak; a window that already stepped down at once restarts it.
    const stepped = this.#steppedThisWindow;
    this.#streak = pushback && !stepped ? this.#streak + 1 : 0;
    if (!stepped) this.#windowsSinceStepDown++;
    const climbTo = this.#climbTarget();
    let cause: RampCause = null;
    if (this.#streak === RAMP_PUSHBACK_WINDOWS) {
      // Step 4: step down, also while held (RAMP-8).
      this.#stepDownTo(Math.max(this.#range.from, this.#cap - this.#s.step));
      cause = "pushback";
    } else if (
      this.#hold === null && !rangeChanged && saturated && !pushback && !errored && !surge &&
      climbTo > this.#cap
    ) {
      // Step 5: climb. A window whose range changed only applies the range (docs/ramp.md).
      this.#cap = climbTo;
      this.#state = "climbing";
      cause = "saturated";
    } else if (!(pushback && this.#state === "backing off")) {
      this.#state = this.#restingState(); // step 6; pushback keeps `backing off` (docs/ramp.md)
    }
    this.#steppedThisWindow = false;
    if (cause === null && rangeChanged) cause = "range";
    if (cause === null && previousHold === null && this.#hold !== null) cause = "hold";
    if (cause === null && previousHold !== null && this.#hold === null) cause = "resume";
    // Step 7: apply, report, reset the counters, next window.
    if (this.#cap !== previousCap) this.#d.setCap(this.#cap);
    this.#lastSaturated = this.#d.held() >= this.#cap;
    this.#saturatedMs = 0;
    this.#pushback = this.#errored = this.#networkRetries = 0;
    if (this.#cap !== previousCap || rangeChanged || this.#state !== previousState) {
      this.#emitRamp(end, previousCap, cause);
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
