/**
 * Stop rules (scheduling.md §16): earlyExit, budget, halts and fail-fast. State only grows
 * within an Invocation; every check reads the state at that instant (CHAIN-4, CHAIN-6, CHAIN-7).
 */
import type { AttemptResult, NotDispatchedReason } from "../_shared/mod.ts";
import type { Plan, PlannedSlot } from "../plan/mod.ts";
import { BUDGET_UNENFORCEABLE_AFTER, FAIL_FAST_STREAK } from "./constants.ts";

/** A diagnostic a stop rule wants reported (once). */
export interface StopDiagnostic {
  readonly level: "warning" | "error";
  readonly code: string;
  readonly message: string;
  readonly experimentId: string;
  readonly evalId: string | null;
  readonly data: Record<string, string | number | null>;
}

/** Why a slot must not start, or `setup-failed` when its experiment's setup failed. */
export type StopReason = NotDispatchedReason | "setup-failed";

const keyOf = (experimentId: string, evalId: string) => `${experimentId}\u0000${evalId}`;

/** The mutable stop state of one Invocation. */
export class StopRules {
  readonly #plan: Plan;
  readonly #passedKeys = new Set<string>();
  readonly #haltedEvals = new Set<string>();
  readonly #haltedExperiments = new Set<string>();
  readonly #failFast = new Set<string>();
  readonly #streaks = new Map<string, { code: string; count: number }>();
  readonly #spend = new Map<string, number>();
  readonly #noEstimate = new Map<string, number>();
  readonly #setupFailed = new Set<string>();
  readonly #reported = new Set<string>();
  /** Called when a rule first fires; `unstarted` is filled in by the caller. */
  onDiagnostic: (d: StopDiagnostic) => void = () => {};

  constructor(plan: Plan) {
    this.#plan = plan;
    for (const slot of plan.slots) {
      if (slot.carry.action === "carry" && slot.carry.source.verdict === "passed") {
        this.#passedKeys.add(keyOf(slot.experimentId, slot.evalId));
      }
    }
  }

  /** The reason `slot` must not start now, or null. */
  check(slot: PlannedSlot): StopReason | null {
    const experiment = this.#plan.experiments[slot.experimentIndex]!;
    const key = keyOf(slot.experimentId, slot.evalId);
    if (this.#setupFailed.has(slot.experimentId)) return "setup-failed";
    if (this.#haltedExperiments.has(slot.experimentId) || this.#haltedEvals.has(key)) {
      return "halted";
    }
    if (this.#failFast.has(key)) return "fail-fast";
    if (experiment.earlyExit && slot.kind === "pass" && this.#passedKeys.has(key)) {
      return "early-exit";
    }
    if (
      experiment.budgetUSD !== null &&
      (this.#spend.get(slot.experimentId) ?? 0) >= experiment.budgetUSD
    ) {
      return "budget-exhausted";
    }
    return null;
  }

  /** True once `(experimentId, evalId)` has a passed Attempt (EARLY-2, EARLY-5). */
  hasPassed(experimentId: string, evalId: string): boolean {
    return this.#passedKeys.has(keyOf(experimentId, evalId));
  }

  /** Marks an experiment whose setup failed (LIFE-5). */
  setupFailed(experimentId: string): void {
    this.#setupFailed.add(experimentId);
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

  /** Folds a settled Attempt into the stop state. */
  settled(slot: PlannedSlot, result: AttemptResult): void {
    const key = keyOf(slot.experimentId, slot.evalId);
    if (result.verdict === "passed") this.#passedKeys.add(key);
    this.#addSpend(slot, result);
    this.#halt(slot, result);
    this.#streak(slot, key, result);
  }

  #addSpend(slot: PlannedSlot, result: AttemptResult): void {
    const id = slot.experimentId;
    if (result.estimatedCostUSD !== null) {
      this.#spend.set(id, (this.#spend.get(id) ?? 0) + result.estimatedCostUSD);
    } else if (result.turnCount > 0) {
      this.#noEstimate.set(id, (this.#noEstimate.get(id) ?? 0) + 1);
    }
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

  #halt(slot: PlannedSlot, result: AttemptResult): void {
    const scope = result.error?.scope;
    if (scope === "experiment" && !this.#haltedExperiments.has(slot.experimentId)) {
      this.#haltedExperiments.add(slot.experimentId);
      this.#once(`halt:${slot.experimentId}`, {
        level: "error",
        code: "dispatch-halted",
        message: `experiment halted: ${result.error?.message ?? ""}`,
        experimentId: slot.experimentId,
        evalId: null,
        data: { scope: "experiment" },
      });
    } else if (scope === "eval") {
      const key = keyOf(slot.experimentId, slot.evalId);
      if (this.#haltedEvals.has(key)) return;
      this.#haltedEvals.add(key);
      this.#once(`halt:${key}`, {
        level: "error",
        code: "dispatch-halted",
        message: `eval halted · ${slot.evalId}: ${result.error?.message ?? ""}`,
        experimentId: slot.experimentId,
        evalId: slot.evalId,
        data: { scope: "eval", evalId: slot.evalId },
      });
    }
  }

  #streak(slot: PlannedSlot, key: string, result: AttemptResult): void {
    if (result.verdict !== "errored" || !result.error) {
      this.#streaks.delete(key);
      return;
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
    }
  }

  #once(id: string, d: StopDiagnostic): void {
    if (this.#reported.has(id)) return;
    this.#reported.add(id);
    this.onDiagnostic(d);
  }
}
