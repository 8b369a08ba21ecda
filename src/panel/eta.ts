/**
 * The estimated time left of a run (docs/progress.md): the mean duration of the settled Attempts,
 * applied to the queued and running ones and divided by the concurrency the run actually reached.
 * Pure: the live panel and the plain progress line fold the same {@link EtaStats}.
 */
import { formatDuration } from "../_shared/mod.ts";

/** What the estimate learns from settled Attempts. */
export interface EtaStats {
  /** When the first Attempt of the Invocation started (epoch ms), or null before any. */
  readonly firstStartAt: number | null;
  /** Executed Attempts settled so far (not-dispatched slots have no duration). */
  readonly settled: number;
  /** Sum of their durations, start to end, in ms. */
  readonly settledMs: number;
}

/** The stats before any event. */
export const NO_ETA_STATS: EtaStats = { firstStartAt: null, settled: 0, settledMs: 0 };

/** The stats after an Attempt started at `at`. */
export function etaStarted(stats: EtaStats, at: number): EtaStats {
  return stats.firstStartAt === null ? { ...stats, firstStartAt: at } : stats;
}

/** The stats after an Attempt that took `durationMs` settled. */
export function etaSettled(stats: EtaStats, durationMs: number): EtaStats {
  return {
    ...stats,
    settled: stats.settled + 1,
    settledMs: stats.settledMs + Math.max(0, durationMs),
  };
}

/** The run as the estimate sees it at one moment. */
interface EtaInput {
  readonly stats: EtaStats;
  /** Start times (epoch ms) of the Attempts running now. */
  readonly runningSince: readonly number[];
  /** Slots still waiting for a global slot. */
  readonly queued: number;
  readonly now: number;
}

/**
 * Milliseconds until the last Attempt settles, or null while no Attempt has settled (nothing to
 * measure) or nothing is left. With `d` the mean settled duration:
 * `work = queued · d + Σ running max(0, d − elapsed)`, and the work is shared by the concurrency
 * the run reached so far (busy time ÷ wall time since the first start), never by more lanes than
 * Attempts are left.
 */
export function estimateRemainingMs(input: EtaInput): number | null {
  const { stats, runningSince, queued, now } = input;
  const left = queued + runningSince.length;
  if (stats.settled === 0 || stats.firstStartAt === null || left === 0) return null;
  const mean = stats.settledMs / stats.settled;
  const elapsed = runningSince.map((since) => Math.max(0, now - since));
  const work = queued * mean + elapsed.reduce((sum, e) => sum + Math.max(0, mean - e), 0);
  const wall = now - stats.firstStartAt;
  const busy = stats.settledMs + elapsed.reduce((sum, e) => sum + e, 0);
  const reached = wall > 0 ? busy / wall : runningSince.length;
  const lanes = Math.max(1, Math.min(reached, left));
  return work / lanes;
}

/** `ETA 8s`, `ETA 2m 14s`, or `ETA —` without an estimate; whole seconds, rounded up, at least 1. */
export function etaText(remainingMs: number | null): string {
  if (remainingMs === null) return "ETA —";
  const seconds = Math.max(1, Math.ceil(remainingMs / 1000));
  return `ETA ${seconds < 60 ? `${seconds}s` : formatDuration(seconds * 1000)}`;
}
