/**
 * The heartbeat of append-only output (OUT-H16, NDJSON `progress` of OUT-J2): something is said
 * after 30 s without any output line, and again after each further 30 s of silence.
 */
import { type Clock, formatDuration, type TimerHandle } from "../_shared/mod.ts";
import { countersLine } from "./counters.ts";
import type { PanelState } from "./state.ts";

/** Silence after which a heartbeat is due (OUT-H16, OUT-J2). */
export const HEARTBEAT_SILENCE_MS = 30_000;

/**
 * Calls `onSilence` whenever `periodMs` pass without {@link SilenceTimer.touch}. A touch only notes
 * the time: the one pending timer, when it fires early, waits for the rest of the silence, so a
 * run that writes many lines does not set a timer per line.
 */
export class SilenceTimer {
  readonly #clock: Clock;
  readonly #periodMs: number;
  readonly #onSilence: () => void;
  #timer: TimerHandle | undefined;
  #lastOutputAt = 0;
  #stopped = false;

  constructor(clock: Clock, options: { periodMs?: number; onSilence: () => void }) {
    this.#clock = clock;
    this.#periodMs = options.periodMs ?? HEARTBEAT_SILENCE_MS;
    this.#onSilence = options.onSilence;
  }

  /** Something was output: the silence starts again now. */
  touch(): void {
    if (this.#stopped) return;
    this.#lastOutputAt = this.#clock.now();
    if (this.#timer === undefined) this.#wait(this.#periodMs);
  }

  /** Cancels the timer for good; later touches do nothing. */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #wait(ms: number): void {
    this.#timer = this.#clock.setTimeout(() => this.#fire(), ms);
  }

  #fire(): void {
    this.#timer = undefined;
    const silentMs = this.#clock.now() - this.#lastOutputAt;
    if (silentMs < this.#periodMs) return this.#wait(this.#periodMs - silentMs);
    this.#onSilence();
    // The beat itself is output: the next one is due after another full period of silence.
    this.touch();
  }
}

/**
 * `… <elapsed> · <counters>[ · cap <cap>]` (OUT-H16), from a panel state or a `CounterTally`;
 * `cap` is given only when the run ramps, where it can differ from the PLAN's.
 */
export function heartbeatLine(
  state: Pick<PanelState, "start" | "counters">,
  now: number,
  cap?: number,
): string {
  const tail = cap === undefined ? "" : ` · cap ${cap}`;
  return `… ${formatDuration(now - state.start.startedAt)} · ${
    countersLine(state.counters)
  }${tail}`;
}
