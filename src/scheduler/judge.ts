/**
 * Judge precheck (STOP-7, CHAIN-3, W3): before the first grant, every distinct judge endpoint of
 * the runnable slots is probed up to JUDGE_PROBE_TRIES times, each try bounded by
 * JUDGE_PROBE_TIMEOUT_MS. Attempts wait (queued, holding nothing) until the precheck is done; the
 * Attempts of a failed endpoint then settle `errored` without dispatch, the rest run normally.
 */
import { AbortReason, type Clock, errorMessage, sleep } from "../_shared/mod.ts";
import type { RunEventSink } from "../_shared/mod.ts";
import type { Plan, PlannedSlot } from "../plan/mod.ts";
import { JUDGE_PROBE_TIMEOUT_MS, JUDGE_PROBE_TRIES } from "./constants.ts";

/** How the scheduler learns of judge endpoints and probes them (optional in RunPlanOptions). */
export interface JudgePrecheck {
  /** The judge endpoint (model, base URL, key variable) a slot's assertions use, or null. */
  endpointOf(slot: PlannedSlot): string | null;
  /** Probes one endpoint once; rejects when the probe fails. Must honour `signal`. */
  probe(endpoint: string, options: { readonly signal: AbortSignal }): Promise<void>;
}

/** Judge precheck state shown in snapshots (the panel row `prechecking judge config`). */
export type JudgePrecheckState = "none" | "running" | "done";

/** The precheck of one run. */
export class JudgeGate {
  readonly #plan: Plan;
  readonly #precheck: JudgePrecheck | undefined;
  readonly #deps: { clock: Clock; signal: AbortSignal; emit: RunEventSink };
  /** Failed endpoints and the reason of their last try. */
  readonly #failed = new Map<string, string>();
  #done: Promise<void> | null = null;
  #state: JudgePrecheckState = "none";

  constructor(
    plan: Plan,
    precheck: JudgePrecheck | undefined,
    deps: { clock: Clock; signal: AbortSignal; emit: RunEventSink },
  ) {
    this.#plan = plan;
    this.#precheck = precheck;
    this.#deps = deps;
  }

  /** The current state. */
  get state(): JudgePrecheckState {
    return this.#state;
  }

  /** Starts probing every distinct endpoint of the runnable slots (once). */
  start(): void {
    if (!this.#precheck || this.#done) return;
    const precheck = this.#precheck;
    const endpoints = new Set<string>();
    for (const slot of this.#plan.slots) {
      if (slot.carry.action !== "run") continue;
      const endpoint = precheck.endpointOf(slot);
      if (endpoint !== null) endpoints.add(endpoint);
    }
    if (endpoints.size === 0) return;
    this.#state = "running";
    this.#emitWait("started");
    this.#done = Promise.all([...endpoints].map((e) => this.#check(precheck, e))).then(() => {
      this.#state = "done";
      this.#emitWait("ended");
      this.#report(precheck);
    });
  }

  /** The run-scope row `prechecking judge config` (OUT-4) while the precheck runs. */
  #emitWait(state: "started" | "ended"): void {
    this.#deps.emit({
      type: "wait",
      at: this.#deps.clock.now(),
      scope: "judge-precheck",
      key: "judge",
      experimentId: null,
      state,
      detail: null,
    });
  }

  /** Resolves when the precheck is done; null when there is nothing to wait for. */
  wait(): Promise<void> | null {
    return this.#state === "running" ? this.#done : null;
  }

  /** The failed endpoint `slot` depends on, or null. */
  failedEndpointOf(slot: PlannedSlot): string | null {
    if (this.#failed.size === 0 || !this.#precheck) return null;
    const endpoint = this.#precheck.endpointOf(slot);
    return endpoint !== null && this.#failed.has(endpoint) ? endpoint : null;
  }

  /** Why a failed endpoint failed. */
  failureOf(endpoint: string): string {
    return this.#failed.get(endpoint) ?? "";
  }

  async #check(precheck: JudgePrecheck, endpoint: string): Promise<void> {
    let reason = "";
    for (let t = 0; t < JUDGE_PROBE_TRIES; t++) {
      if (this.#deps.signal.aborted) return;
      const failure = await this.#try(precheck, endpoint);
      if (failure === null) return;
      reason = failure;
    }
    if (!this.#deps.signal.aborted) this.#failed.set(endpoint, reason);
  }

  /** One bounded probe try; null when it succeeded, else why it failed. */
  async #try(precheck: JudgePrecheck, endpoint: string): Promise<string | null> {
    const timer = new AbortController();
    const bound = new AbortController();
    const signal = AbortSignal.any([this.#deps.signal, bound.signal]);
    const timeout = `no answer within ${JUDGE_PROBE_TIMEOUT_MS / 1000}s`;
    const deadline = sleep(this.#deps.clock, JUDGE_PROBE_TIMEOUT_MS, { signal: timer.signal })
      .then(() => {
        bound.abort(new AbortReason("timeout"));
        return timeout;
      }, () => timeout);
    try {
      return await Promise.race([
        Promise.resolve().then(() => precheck.probe(endpoint, { signal })).then(() => null),
        deadline,
      ]);
    } catch (error) {
      return errorMessage(error);
    } finally {
      timer.abort();
    }
  }

  /** One `judge-precheck-failed` error per (experiment, eval) with failed Attempts. */
  #report(precheck: JudgePrecheck): void {
    type Pair = { slot: PlannedSlot; planned: number; errored: number; endpoint: string };
    const pairs = new Map<string, Pair>();
    for (const slot of this.#plan.slots) {
      if (slot.carry.action !== "run") continue;
      const id = `${slot.experimentId}\u0000${slot.evalId}`;
      const pair = pairs.get(id) ?? { slot, planned: 0, errored: 0, endpoint: "" };
      pair.planned++;
      const endpoint = precheck.endpointOf(slot);
      if (endpoint !== null && this.#failed.has(endpoint)) {
        pair.errored++;
        pair.endpoint = endpoint;
      }
      pairs.set(id, pair);
    }
    for (const { slot, planned, errored, endpoint } of pairs.values()) {
      if (errored === 0) continue;
      this.#deps.emit({
        type: "diagnostic",
        at: this.#deps.clock.now(),
        level: "error",
        code: "judge-precheck-failed",
        message: `Judge precheck of "${endpoint}" failed for ${slot.experimentId} · ` +
          `${slot.evalId}: ${this.#failed.get(endpoint)}`,
        experimentId: slot.experimentId,
        evalId: slot.evalId,
        data: { experimentId: slot.experimentId, evalId: slot.evalId, planned, errored },
        persist: true,
      });
    }
  }
}
