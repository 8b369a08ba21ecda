/** Plan types (scheduling.md §2): experiments × evals × ordinals with carry decisions. */
import type { DiscoveredEval, DiscoveredExperiment } from "../discovery/mod.ts";
import type { PhysicalLayer, PhysicalSandbox } from "../sandbox/mod.ts";

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
  /** Score evals: the possible score and the passAt it ran with (docs/scores.md). */
  readonly possible?: number | null;
  readonly passAt?: number | null;
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
  /**
   * Provider name, or null for direct agents. When its pairs use several providers: the one with
   * the smallest default concurrency (CAP-3), ties to the first in slot order.
   */
  readonly provider: string | null;
  /** Exclusive lane key of its first exclusive pair, or null; slots carry their own. */
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
  /** The pair's sandbox; absent for direct agents (shared by every slot of the pair). */
  readonly sandbox?: PlannedSandbox;
}

/** A layer of a pair and who declared it (sandboxes.md rule 9 owner): the sandbox's own shape. */
export type PairLayer = PhysicalLayer;

/** How the Attempts of a pair get their physical sandbox. */
type SandboxReuse = "fresh" | "pool" | "group";

/** An (Experiment, Eval) pair of a sandbox agent with exactly one template (rule 2). */
export interface SandboxPair {
  /** See `pairKey`. */
  readonly key: string;
  readonly experimentIndex: number;
  readonly experimentId: string;
  readonly evalId: string;
  readonly groupId: string | null;
  /** Template layer first, then the other side's layer (steps 5 and 7 run in this order). */
  readonly layers: readonly PairLayer[];
  readonly reuse: SandboxReuse;
  /** The group's `onUnavailable` (GRP-6); null outside groups. */
  readonly onUnavailable: "stop-group" | "replace-sandbox" | null;
}

/**
 * A pair's physical sandbox, resolved through the provider registry at plan time: the sandbox
 * domain's `PhysicalSandbox` of the pair.
 */
export interface PlannedSandbox extends SandboxPair, PhysicalSandbox {}

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
