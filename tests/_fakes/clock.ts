/** A fake {@link Clock} over `@sinonjs/fake-timers`; patches no globals (toolchain.md §5.5). */
import FakeTimers from "@sinonjs/fake-timers";
import type { Clock } from "../../src/_shared/clock.ts";

/** A fake clock plus the controls tests use to move time. */
export interface FakeClock extends Clock {
  /** Advances time by `ms`, running due timers and awaiting microtasks between them. */
  tickAsync(ms: number): Promise<void>;
  /** Runs every pending timer (and the ones they schedule), awaiting microtasks. */
  runAllAsync(): Promise<void>;
  /** Lets pending promise callbacks run without moving time. */
  flush(): Promise<void>;
  /** Number of scheduled timers. */
  countTimers(): number;
}

/** Creates a fake clock starting at `start` (default 2026-11-29T10:00:00.000Z). */
export function createFakeClock(start = Date.UTC(2026, 10, 29, 10, 0, 0)): FakeClock {
  const clock = FakeTimers.createClock(start);
  return {
    now: () => clock.now,
    setTimeout: (fn, ms) => clock.setTimeout(fn, ms),
    clearTimeout: (handle) => clock.clearTimeout(handle as FakeTimers.TimerId),
    tickAsync: async (ms) => {
      await clock.tickAsync(ms);
    },
    runAllAsync: async () => {
      await clock.runAllAsync();
    },
    flush: async () => {
      await clock.tickAsync(0);
    },
    countTimers: () => clock.countTimers(),
  };
}
