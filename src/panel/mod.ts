/**
 * @module panel
 * Owns the live terminal of `exp` (cli.md §5.3, §5.6; scheduling.md §9, §25): a reducer that folds
 * run events into panel state (counters, ACTIVE rows, cost), a pure renderer of that state for a
 * width and a time, the live writer that owns the redraw timers and the cursor, the heartbeat of
 * append-only output with its progress line and ETA, and the choice between live and plain mode. It learns everything from
 * `RunEvent`s; it never schedules, writes the Record or prints permanent panels.
 */
export { createPanelState } from "./state.ts";
export type { Counters, PanelRamp, PanelStart, PanelState } from "./state.ts";
export { reducePanel } from "./reduce.ts";
export { CounterTally } from "./tally.ts";
export { countersLine } from "./counters.ts";
export { rampLine, rampStateText, renderPanel } from "./render.ts";
export { FRAME_MS, LiveWriter, TICK_MS } from "./live_writer.ts";
export { HEARTBEAT_SILENCE_MS, heartbeatLine, SilenceTimer } from "./heartbeat.ts";
export { humanMode } from "./mode.ts";
export {
  PlainProgress,
  PROGRESS_MIN_GAP_MS,
  PROGRESS_PERIOD_MS,
  progressLine,
} from "./progress.ts";
export { estimateRemainingMs, etaText } from "./eta.ts";
