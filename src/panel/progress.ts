/**
 * The progress line of plain output (issue 18 item 4, docs/progress.md):
 * `12/30 · 9 passed · 2 failed · 1 errored · ETA 8s`, every 10 s and at every tenth of the
 * Attempts to run, whichever comes first, never two within 2 s, and never once every Attempt has
 * settled (the end panels follow).
 */
import type { Clock, TimerHandle } from "../_shared/mod.ts";
import { estimateRemainingMs, etaText } from "./eta.ts";
import type { CounterTally } from "./tally.ts";

/** A progress line is due at the latest this long after the previous one (or the PLAN). */
export const PROGRESS_PERIOD_MS = 10_000;
/** Two progress lines are never closer than this. */
export const PROGRESS_MIN_GAP_MS = 2_000;
/** A line is due each time another tenth of the Attempts to run has settled. */
const STEPS = 10;

/** Attempts to run in this Invocation (carried ones excluded) and how many have settled. */
function doneOf(tally: CounterTally): { done: number; toRun: number } {
  const c = tally.counters;
  return { done: c.passed + c.failed + c.errored + c.skipped, toRun: c.total - c.reused };
}

/**
 * `<done>/<to run> · <p> passed · <f> failed · <e> errored[ · <s> skipped] · ETA <eta>`: counts
 * of the Attempts to run in this Invocation; carried results are not part of them.
 */
export function progressLine(tally: CounterTally, now: number): string {
  const c = tally.counters;
  const { done, toRun } = doneOf(tally);
  const parts = [`${done}/${toRun}`, `${c.passed} passed`, `${c.failed} failed`];
  parts.push(`${c.errored} errored`);
  if (c.skipped > 0) parts.push(`${c.skipped} skipped`);
  const remaining = estimateRemainingMs({
    stats: tally.eta,
    runningSince: tally.runningSince,
    queued: c.queued,
    now,
  });
  parts.push(etaText(remaining));
  return parts.join(" · ");
}

/** Options of {@link PlainProgress}. */
interface PlainProgressOptions {
  readonly clock: Clock;
  /** The counters it reads; the caller folds every event into it first. */
  readonly tally: CounterTally;
  /** Writes one line (without its newline). */
  readonly write: (line: string) => void;
}

/** Decides when plain output prints a progress line, and prints it. */
export class PlainProgress {
  readonly #o: PlainProgressOptions;
  /** When the previous line (or the start) was written. */
  #lastAt = 0;
  /** Tenths of the Attempts to run that had settled at the previous line. */
  #lastStep = 0;
  #timer: TimerHandle | undefined;
  #dueAt = Infinity;
  #phase: "new" | "running" | "stopped" = "new";

  constructor(options: PlainProgressOptions) {
    this.#o = options;
  }

  /** Starts the 10-s period (call right after the PLAN). */
  start(): void {
    if (this.#phase !== "new") return;
    this.#phase = "running";
    if (this.#finished()) return this.stop();
    this.#lastAt = this.#o.clock.now();
    this.#schedule(this.#lastAt + PROGRESS_PERIOD_MS);
  }

  /** Call after each event was folded into the tally: a new tenth makes a line due. */
  update(): void {
    if (this.#phase !== "running") return;
    if (this.#finished()) return this.stop();
    if (this.#step() > this.#lastStep) this.#schedule(this.#lastAt + PROGRESS_MIN_GAP_MS);
  }

  /** No more lines; cancels the timer. Idempotent. */
  stop(): void {
    this.#phase = "stopped";
    if (this.#timer !== undefined) this.#o.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#dueAt = Infinity;
  }

  #finished(): boolean {
    const { done, toRun } = doneOf(this.#o.tally);
    return done >= toRun;
  }

  #step(): number {
    const { done, toRun } = doneOf(this.#o.tally);
    return toRun === 0 ? STEPS : Math.floor((done * STEPS) / toRun);
  }

  /** Makes sure a timer fires at `at` or earlier. */
  #schedule(at: number): void {
    if (this.#timer !== undefined && this.#dueAt <= at) return;
    if (this.#timer !== undefined) this.#o.clock.clearTimeout(this.#timer);
    const { clock } = this.#o;
    this.#dueAt = at;
    this.#timer = clock.setTimeout(() => this.#fire(), Math.max(0, at - clock.now()));
  }

  #fire(): void {
    this.#timer = undefined;
    this.#dueAt = Infinity;
    if (this.#phase !== "running") return;
    const now = this.#o.clock.now();
    this.#o.write(progressLine(this.#o.tally, now));
    this.#lastAt = now;
    this.#lastStep = this.#step();
    this.#schedule(now + PROGRESS_PERIOD_MS);
  }
}
