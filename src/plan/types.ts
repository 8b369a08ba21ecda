/** Plan types (scheduling.md §2): experiments × evals × ordinals with carry decisions. */
import type { DiscoveredEval, DiscoveredExperiment } from "../discovery/mod.ts";

/** `--rerun` tier (CARRY-3). */
export type RerunTier = "none" | "failed" | "all";

/** Why a non-carried ordinal runs (CARRY-6). */
export type RunReason =
  | "new"
  | "identity-changed"
  | "verdict-not-eligible"
  | "rerun-tier"
  | "duration-exceeds-timeout";

/** The published Attempt an ordinal could be filled from. */
export interface CarrySource {
  readonly runId: string;
  readonly attemptId: string;
  /** Run that executed the Attempt (carried members are never chained). */
  readonly originRunId: string;
  readonly verdict: string;
  readonly durationMs: number;
  readonly score: number | null;
}

/** How one planned ordinal will be filled. */
export type CarryDecision =
  | { readonly action: "carry"; readonly source: CarrySource }
  | {
    readonly action: "run";
    readonly reason: RunReason;
    /** `config`, `input` or `config,input` for `identity-changed`. */
    readonly detail: string | null;
    readonly source: CarrySource | null;
  };

/** One selected experiment as planned. */
export interface PlannedExperiment {
  /** Selection index, from 0. */
  readonly index: number;
  readonly id: string;
  readonly discovered: DiscoveredExperiment;
  readonly evals: readonly DiscoveredEval[];
  readonly attempts: number;
  readonly earlyExit: boolean;
  readonly budgetUSD: number | null;
  readonly maxConcurrency: number | null;
  /** Provider name, or null for direct agents. */
  readonly provider: string | null;
  /** Exclusive lane key, or null. */
  readonly laneKey: string | null;
  /** Non-carried planned slots. */
  readonly runnable: number;
}

/** One planned slot: a (Run, Eval, ordinal) position to fill. */
export interface PlannedSlot {
  /** Index in ORD-2 order (eval discovery, experiment selection, ordinal). */
  readonly position: number;
  readonly experimentIndex: number;
  readonly experimentId: string;
  readonly evalId: string;
  /** Eval discovery index. */
  readonly evalIndex: number;
  readonly ordinal: number;
  readonly kind: "pass" | "score";
  readonly groupId: string | null;
  /** Per-Attempt deadline in ms (TIME-1), or null for unlimited. */
  readonly timeoutMs: number | null;
  readonly carry: CarryDecision;
}

/** The complete plan, built before anything is dispatched (PLAN-1). */
export interface Plan {
  /** Experiments in selection order. */
  readonly experiments: readonly PlannedExperiment[];
  /** Every planned slot in ORD-2 order. */
  readonly slots: readonly PlannedSlot[];
  /** Distinct selected evals. */
  readonly evalCount: number;
  readonly total: number;
  readonly reused: number;
  readonly toRun: number;
}
