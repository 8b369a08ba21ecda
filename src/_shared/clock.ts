/**
 * The only source of time for niceeval (STYLE.md §9). Production passes {@link realClock};
 * tests pass a fake clock with the same shape.
 */
import { abortable } from "./abort.ts";

/** An opaque timer handle. */
export type TimerHandle = unknown;

/** Time and timers, injected everywhere time matters. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Schedules `fn` after `ms` milliseconds. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  /** Cancels a timer; unknown handles are ignored. */
  clearTimeout(handle: TimerHandle): void;
}

/** The wall clock. */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as number),
};

/** Resolves after `ms` on `clock`; rejects with `signal.reason` as soon as the signal aborts. */
export function sleep(
  clock: Clock,
  ms: number,
  options: { signal?: AbortSignal } = {},
): Promise<void> {
  return abortable<void>(options.signal, (resolve) => {
    const handle = clock.setTimeout(resolve, Math.max(0, ms));
    return () => clock.clearTimeout(handle);
  });
}

/** Formats an epoch-millisecond time as ISO-8601 UTC with milliseconds. */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}
