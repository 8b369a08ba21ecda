/**
 * The counters alone, for output without a live panel: the plain heartbeat (OUT-H16) and the
 * NDJSON `progress` line (OUT-J2). It counts exactly as {@link reducePanel} does (RUN-1 … RUN-3),
 * but keeps no ACTIVE rows, so an event costs the same whatever the concurrency.
 */
import type { RunEvent } from "../_shared/mod.ts";
import { etaSettled, etaStarted, type EtaStats, NO_ETA_STATS } from "./eta.ts";
import { VERDICT_COUNTER } from "./reduce.ts";
import { type Counters, initialCounters, type PanelStart } from "./state.ts";

type MutableCounters = { -readonly [K in keyof Counters]: number };

/** Folds run events into the counters line. */
export class CounterTally {
  readonly start: PanelStart;
  readonly #counts: MutableCounters;
  /** Start times of the running Attempts, by plan position. */
  readonly #running = new Map<number, number>();
  #eta: EtaStats = NO_ETA_STATS;
  /** Running Attempts between a `sleeping` and a `resumed` backoff. */
  readonly #backingOff = new Set<number>();

  constructor(start: PanelStart) {
    this.start = start;
    this.#counts = initialCounters(start);
  }

  /** A snapshot of the counters now. */
  get counters(): Counters {
    return { ...this.#counts };
  }

  /** Durations of the settled Attempts, for the ETA (docs/progress.md). */
  get eta(): EtaStats {
    return this.#eta;
  }

  /** Start times (epoch ms) of the Attempts running now. */
  get runningSince(): number[] {
    return [...this.#running.values()];
  }

  /** Counts one run event. */
  event(event: RunEvent): void {
    const c = this.#counts;
    switch (event.type) {
      case "attempt_start":
        this.#running.set(event.slot.position, event.at);
        this.#eta = etaStarted(this.#eta, event.at);
        return this.#move("queued", "running");
      case "attempt_end": {
        const { position } = event.slot;
        const since = this.#running.get(position);
        if (since !== undefined) this.#eta = etaSettled(this.#eta, event.at - since);
        this.#running.delete(position);
        // A backoff cut short (deadline, interrupt) stays counted until the Attempt settles.
        if (this.#backingOff.delete(position)) c.backoff--;
        return this.#move("running", VERDICT_COUNTER[event.result.verdict]);
      }
      case "backoff":
        return this.#backoff(event);
      case "not_dispatched":
        return this.#move("queued", "skipped");
      case "slot_errored":
        return this.#move("queued", "errored");
      default:
        return;
    }
  }

  #backoff(event: Extract<RunEvent, { type: "backoff" }>): void {
    const { position } = event.slot;
    if (!this.#running.has(position)) return;
    if (event.state === "sleeping") {
      if (this.#backingOff.has(position)) return;
      this.#backingOff.add(position);
      this.#counts.backoff++;
    } else if (this.#backingOff.delete(position)) {
      this.#counts.backoff--;
    }
  }

  #move(from: keyof Counters, to: keyof Counters): void {
    this.#counts[from]--;
    this.#counts[to]++;
  }
}
