/**
 * Counting of interrupt signals (cli.md INT-1, INT-2; toolchain.md §10.5.2): the first SIGINT or
 * SIGTERM interrupts, the second forces, the third exits at once. Under a launcher that relays
 * signals, one Ctrl-C can arrive twice (from the terminal and relayed): a repeat of the same
 * signal within {@link SIGNAL_DEDUPE_MS} of the last counted one is that same Ctrl-C.
 */
import type { Clock } from "../_shared/mod.ts";

/** De-duplication window of a relayed signal (toolchain.md §10.5.2). */
export const SIGNAL_DEDUPE_MS = 250;

/**
 * An interrupt signal the process listens to. SIGHUP (the terminal closed, or a launcher relayed
 * it) takes the SIGTERM path, so that the run cleans up and publishes what it finished.
 */
export type InterruptSignal = "SIGINT" | "SIGTERM" | "SIGHUP";

/** What {@link createSignalCounter} calls for the first, second and third counted signal. */
interface SignalCounterOptions {
  readonly clock: Pick<Clock, "now">;
  /** True when a launcher relays signals (`NICEEVAL_PARENT_PID` is set). */
  readonly relayed: boolean;
  onInterrupt(name: InterruptSignal): void;
  onForce(name: InterruptSignal): void;
  onExit(): void;
}

/** Returns the handler to call for every signal received, in arrival order. */
export function createSignalCounter(
  options: SignalCounterOptions,
): (name: InterruptSignal) => void {
  let last: { name: string; at: number } = { name: "", at: 0 };
  let count = 0;
  return (name) => {
    const now = options.clock.now();
    if (options.relayed && name === last.name && now - last.at < SIGNAL_DEDUPE_MS) return;
    last = { name, at: now };
    count++;
    if (count === 1) options.onInterrupt(name);
    else if (count === 2) options.onForce(name);
    else options.onExit();
  };
}
