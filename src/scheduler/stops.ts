/**
 * Stop rules (scheduling.md §16): earlyExit, budget, halts and fail-fast. State only grows
 * within an Invocation; every check reads the state at that instant (CHAIN-4, CHAIN-6, CHAIN-7).
 */
import type { AttemptResult, NotDispatchedReason } from "../_shared/mod.ts";
import type { Plan, PlannedSlot } from "../plan/mod.ts";
import { CircuitBreaker } from "./_bail.ts";
import { BAIL_AFTER, BUDGET_UNENFORCEABLE_AFTER, FAIL_FAST_STREAK } from "./constants.ts";

/** A diagnostic a stop rule wants reported (once). */
export interface StopDiagnostic {
  readonly level: "warning" | "error";
  readonly code: string;
  readonly message: string;
  readonly experimentId: string;
  readonly evalId: string | null;
  readonly data: Record<string, string | number | null>;
}

/** Why an experiment must not start any Attempt (an agent precondition failed). */
export interface ExperimentBlock {
  readonly message: string;
  /** How to fix it, or null. */
  readonly hint: string | null;
}

/** Settings of the stop rules beyond the plan. */
export interface StopOptions {
  /**
   * Settled Attempts of an experiment that, all errored the same way, halt it (the circuit
   * breaker, docs/bail.md). Default BAIL_AFTER; 0 turns it off (`--no-bail`).
   */
  readonly bailAfter?: number;
  /** Experiments halted before any of their Attempts starts, by experiment id, with why. */
  readonly blocked?: ReadonlyMap<string, ExperimentBlock>;
}

/** Why a slot must not start, or `setup-failed` when its experiment's setup failed. */
export type StopReason = NotDispatchedReason | "setup-failed";

/**
 * The slots whose stop check may have changed: one (experiment, eval) key, or a whole experiment
 * when `evalId` is null. Rechecks visit only the waiters of the scopes a settle returns, so stop
 * handling costs O(affected waiters), not O(all waiters), per settle.
 */
export interface StopScope {
  readonly experimentIndex: number;
  readonly evalId: string | null;
}

const keyOf = (experimentId: string, evalId: string) => `${experimentId}\u0000${evalId}`;

/** The mutable stop state of one Invocation. */
export class StopRules {
  readonly #plan: Plan;
  /** Evals with a passed Attempt, kept only for experiments with earlyExit (EARLY-2). */
  readonly #passedKeys = new Set<string>();
  readonly #haltedEvals = new Set<string>();
  readonly #haltedExperiments = new Set<string>();
  readonly #failFast = new Set<string>();
  readonly #streaks = new Map<string, { code: string; count: number }>();
  readonly #spend = new Map<string, number>();
  readonly #noEstimate = new Map<string, number>();
  readonly #setupFailed = new Set<string>();
  readonly #reported = new Set<string>();
  readonly #breaker: CircuitBreaker;
  readonly #bailAfter: number;
  readonly #blocked: ReadonlyMap<string, ExperimentBlock>;
  /** Called when a rule first fires; `unstarted` is filled in by the caller. */
  onDiagnostic: (d: StopDiagnostic) => void = () => {};

  constructor(plan: Plan, options: StopOptions = {}) {
    this.#plan = plan;
    this.#bailAfter = options.bailAfter ?? BAIL_AFTER;
    this.#breaker = new CircuitBreaker(this.#bailAfter);
    this.#blocked = options.blocked ?? new Map();
    for (const id of this.#blocked.keys()) this.#haltedExperiments.add(id);
    for (const slot of plan.slots) {
      if (
        slot.carry.action === "carry" && slot.carry.source.verdict === "passed" &&
        plan.experiments[slot.experimentIndex]!.earlyExit
      ) {
        this.#passedKeys.add(keyOf(slot.experimentId, slot.evalId));
      }
    }
  }

  /** The reason `slot` must not start now, or null. */
  check(slot: PlannedSlot): StopReason | null {
    const experiment = this.#plan.experiments[slot.experimentIndex]!;
    if (this.#setupFailed.has(slot.experimentId)) return "setup-failed";
    if (this.#haltedExperiments.has(slot.experimentId)) {
      this.#reportBlocked(slot.experimentId);
      return "halted";
    }
    // The (experiment, eval) key is built only when some per-eval rule has state.
    if (this.#haltedEvals.size > 0 || this.#failFast.size > 0 || this.#passedKeys.size > 0) {
      const key = keyOf(slot.experimentId, slot.evalId);
      if (this.#haltedEvals.has(key)) return "halted";
      if (this.#failFast.has(key)) return "fail-fast";
      if (experiment.earlyExit && slot.kind === "pass" && this.#passedKeys.has(key)) {
        return "early-exit";
      }
    }
    if (
      experiment.budgetUSD !== null &&
      (this.#spend.get(slot.experimentId) ?? 0) >= experiment.budgetUSD
    ) {
      return "budget-exhausted";
    }
    return null;
  }

  /** Marks an experiment whose setup failed (LIFE-5); returns the scope to recheck. */
  setupFailed(experimentIndex: number): StopScope {
    this.#setupFailed.add(this.#plan.experiments[experimentIndex]!.id);
    return { experimentIndex, evalId: null };
  }

  /** Notes that a budget skip happened, reporting `budget-exhausted` once per experiment. */
  budgetSkipped(slot: PlannedSlot): void {
    const experiment = this.#plan.experiments[slot.experimentIndex]!;
    this.#once(`budget:${slot.experimentId}`, {
      level: "warning",
      code: "budget-exhausted",
      message: `budget exhausted for ${slot.experimentId}: spent ~$${
        (this.#spend.get(slot.experimentId) ?? 0).toFixed(2)
      } of $${experiment.budgetUSD?.toFixed(2)}`,
      experimentId: slot.experimentId,
      evalId: null,
      data: { budgetUSD: experiment.budgetUSD, spentUSD: this.#spend.get(slot.experimentId) ?? 0 },
    });
  }

  /** Folds a settled Attempt into the stop state; returns the scopes whose checks changed. */
  settled(slot: PlannedSlot, result: AttemptResult): StopScope[] {
    const key = keyOf(slot.experimentId, slot.evalId);
    const experiment = this.#plan.experiments[slot.experimentIndex]!;
    const evalScope = { experimentIndex: slot.experimentIndex, evalId: slot.evalId };
    const scopes: StopScope[] = [];
    if (result.verdict === "passed" && experiment.earlyExit && !this.#passedKeys.has(key)) {
      this.#passedKeys.add(key);
      if (slot.kind === "pass") scopes.push(evalScope);
    }
    if (this.#addSpend(slot, result)) scopes.push({ ...evalScope, evalId: null });
    const halted = this.#halt(slot, result);
    if (halted === "experiment") scopes.push({ ...evalScope, evalId: null });
    if (halted === "eval") scopes.push(evalScope);
    if (this.#bail(slot, result)) scopes.push({ ...evalScope, evalId: null });
    if (this.#streak(slot, key, result)) scopes.push(evalScope);
    return scopes;
  }

  /** Adds the estimated cost; true when this settle exhausted the budget. */
  #addSpend(slot: PlannedSlot, result: AttemptResult): boolean {
    const id = slot.experimentId;
    const budget = this.#plan.experiments[slot.experimentIndex]!.budgetUSD;
    const before = this.#spend.get(id) ?? 0;
    if (result.estimatedCostUSD !== null) {
      this.#spend.set(id, before + result.estimatedCostUSD);
    } else if (result.turnCount > 0) {
      this.#noEstimate.set(id, (this.#noEstimate.get(id) ?? 0) + 1);
    }
    this.#checkEnforceable(slot);
    return budget !== null && before < budget && (this.#spend.get(id) ?? 0) >= budget;
  }

  /** Warns once when turns ran but nothing produced an estimate (BUD-6). */
  #checkEnforceable(slot: PlannedSlot): void {
    const id = slot.experimentId;
    const experiment = this.#plan.experiments[slot.experimentIndex]!;
    if (
      experiment.budgetUSD !== null && (this.#spend.get(id) ?? 0) === 0 &&
      (this.#noEstimate.get(id) ?? 0) >= BUDGET_UNENFORCEABLE_AFTER
    ) {
      this.#once(`unenforceable:${id}`, {
        level: "warning",
        code: "budget-unenforceable",
        message:
          `budget of ${id} cannot be enforced: no cost estimate (add a pricing entry for its model)`,
        experimentId: id,
        evalId: null,
        data: {},
      });
    }
  }

  /** Closes the gate a terminal failure's scope names; returns the scope it newly closed. */
  #halt(slot: PlannedSlot, result: AttemptResult): "experiment" | "eval" | null {
    const scope = result.verdict === "errored" ? result.error?.scope : undefined;
    if (scope === "experiment") {
      if (this.#haltedExperiments.has(slot.experimentId)) return null;
      this.#haltedExperiments.add(slot.experimentId);
      this.#once(`halt:${slot.experimentId}`, {
        level: "error",
        code: "dispatch-halted",
        message: `experiment halted: ${result.error?.message ?? ""}`,
        experimentId: slot.experimentId,
        evalId: null,
        data: { scope: "experiment" },
      });
      return "experiment";
    }
    if (scope === "eval") {
      const key = keyOf(slot.experimentId, slot.evalId);
      if (this.#haltedEvals.has(key)) return null;
      this.#haltedEvals.add(key);
      this.#once(`halt:${key}`, {
        level: "error",
        code: "dispatch-halted",
        message: `eval halted · ${slot.evalId}: ${result.error?.message ?? ""}`,
        experimentId: slot.experimentId,
        evalId: slot.evalId,
        data: { scope: "eval", evalId: slot.evalId },
      });
      return "eval";
    }
    return null;
  }

  /**
   * Reports a blocked experiment's halt once, at the first check of one of its slots: while that
   * slot still waits, so `unstarted` counts every slot of the experiment.
   */
  #reportBlocked(experimentId: string): void {
    const block = this.#blocked.get(experimentId);
    if (!block) return;
    this.#once(`halt:${experimentId}`, {
      level: "error",
      code: "dispatch-halted",
      message: `experiment halted · ${experimentId}: ${block.message}`,
      experimentId,
      evalId: null,
      data: { scope: "experiment", reason: "precondition", hint: block.hint },
    });
  }

  /** Folds a settle into the circuit breaker; true when it halted the experiment now. */
  #bail(slot: PlannedSlot, result: AttemptResult): boolean {
    const error = this.#breaker.settled(slot.experimentId, result);
    if (error === null || this.#haltedExperiments.has(slot.experimentId)) return false;
    // An experiment of at most `bailAfter` Attempts has nothing left to stop.
    if (this.#plan.experiments[slot.experimentIndex]!.runnable <= this.#bailAfter) return false;
    this.#haltedExperiments.add(slot.experimentId);
    const settled = this.#bailAfter;
    this.#once(`halt:${slot.experimentId}`, {
      level: "error",
      code: "experiment-halted",
      message:
        `systematic error: the first ${settled} attempts all errored with ${error.code}: ${error.message}`,
      experimentId: slot.experimentId,
      evalId: null,
      data: {
        errorCode: error.code,
        errorScope: error.scope,
        errorMessage: error.message,
        settled,
        hint: "fix the cause and run again; --no-bail runs every attempt anyway",
      },
    });
    return true;
  }

  /** Counts same-code errored settlements of a key (STOP-4); true when fail-fast fired now. */
  #streak(slot: PlannedSlot, key: string, result: AttemptResult): boolean {
    if (result.verdict !== "errored" || !result.error) {
      this.#streaks.delete(key);
      return false;
    }
    const prev = this.#streaks.get(key);
    const count = prev?.code === result.error.code ? prev.count + 1 : 1;
    this.#streaks.set(key, { code: result.error.code, count });
    if (count >= FAIL_FAST_STREAK && !this.#failFast.has(key)) {
      this.#failFast.add(key);
      this.#once(`failfast:${key}`, {
        level: "warning",
        code: "fail-fast",
        message: `${slot.evalId} stopped after ${count} consecutive ${result.error.code} errors`,
        experimentId: slot.experimentId,
        evalId: slot.evalId,
        data: { errorCode: result.error.code },
      });
      return true;
    }
    return false;
  }

  #once(id: string, d: StopDiagnostic): void {
    if (this.#reported.has(id)) return;
    this.#reported.add(id);
    this.onDiagnostic(d);
  }
}
