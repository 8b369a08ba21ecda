/** Builds the plan (PLAN-1): selection × ordinals × carry decisions, in ORD-2 order. */
import {
  experimentProviders,
  groupProblems,
  type PairingProblem,
  pairingProblems,
  pairKey,
  throwProblems,
} from "./sandbox.ts";
import type { Selection } from "./select.ts";
import type {
  CarryDecision,
  Plan,
  PlannedExperiment,
  PlannedSandbox,
  PlannedSlot,
  RerunTier,
} from "./types.ts";

/** Settings from flags and config that shape the plan. */
export interface PlanSettings {
  /** `--attempts`. */
  readonly attempts?: number;
  /** `--timeout`. */
  readonly timeoutMs?: number;
  /** `--early-exit` (true) / `--no-early-exit` (false). */
  readonly earlyExit?: boolean;
  /** `--budget`. */
  readonly budget?: number;
  /** Config `timeoutMs`. */
  readonly configTimeoutMs?: number;
  readonly rerun: RerunTier;
}

/** Identifies one planned ordinal for carry decisions. */
export interface SlotKey {
  readonly experimentId: string;
  readonly evalId: string;
  readonly ordinal: number;
  readonly timeoutMs: number | null;
}

/** Decides how one ordinal is filled; default: every ordinal runs as `new`. */
export type CarryDecider = (key: SlotKey) => CarryDecision;

const RUN_NEW: CarryDecision = Object.freeze({
  action: "run",
  reason: "new",
  detail: null,
  source: null,
});

/**
 * One frozen object per distinct run decision without a source: a 10,000-slot plan of new slots
 * shares one decision instead of holding 10,000 equal ones.
 */
class DecisionPool {
  readonly #runs = new Map<string, CarryDecision>();

  shared(decision: CarryDecision): CarryDecision {
    if (decision.action !== "run" || decision.source !== null) return decision;
    const key = keyOf(decision);
    const known = this.#runs.get(key);
    if (known) return known;
    const frozen = Object.isFrozen(decision) ? decision : Object.freeze({ ...decision });
    this.#runs.set(key, frozen);
    return frozen;
  }
}

function keyOf(decision: { readonly reason: string; readonly detail: string | null }): string {
  return decision.detail === null ? decision.reason : `${decision.reason}=${decision.detail}`;
}

/** The physical side of a plan, resolved before `buildPlan` (`sandboxPairs` → registry). */
interface PlanSandboxes {
  /** Physical sandboxes by `pairKey`; pairs of direct agents have none. */
  readonly sandboxes?: ReadonlyMap<string, PlannedSandbox>;
  /** Problems found while resolving them (`sandbox-config-invalid`), reported with the rest. */
  readonly problems?: readonly PairingProblem[];
}

/**
 * Builds the plan; throws every pre-dispatch conflict (sandbox pairing, GRP-5, physical problems)
 * together as one `UsageError` (sandboxes.md rule 4).
 */
export function buildPlan(
  selection: Selection,
  settings: PlanSettings,
  decide: CarryDecider = () => RUN_NEW,
  physical: PlanSandboxes = {},
): Plan {
  const slots: Omit<PlannedSlot, "position">[] = [];
  const decisions = new DecisionPool();
  const experiments: PlannedExperiment[] = [];
  const sandboxes = physical.sandboxes ?? new Map<string, PlannedSandbox>();
  throwProblems([
    ...pairingProblems(selection),
    ...(physical.problems ?? []),
    ...groupProblems(selection, sandboxes),
  ]);
  selection.experiments.forEach((selected, index) => {
    const def = selected.experiment.definition;
    const attempts = settings.attempts ?? def.attempts;
    const own: Omit<PlannedSlot, "position">[] = [];
    const used: PlannedSandbox[] = [];
    for (const e of selected.evals) {
      const sandbox = sandboxes.get(pairKey(index, e.id));
      if (sandbox) used.push(sandbox);
      const timeoutMs = settings.timeoutMs ?? def.timeoutMs ?? e.definition.timeoutMs ??
        settings.configTimeoutMs ?? null;
      for (let ordinal = 0; ordinal < attempts; ordinal++) {
        const key = { experimentId: selected.experiment.id, evalId: e.id, ordinal, timeoutMs };
        own.push({
          experimentIndex: index,
          experimentId: selected.experiment.id,
          evalId: e.id,
          evalIndex: e.index,
          ordinal,
          kind: e.definition.evaluationKind,
          groupId: e.groupId ?? null,
          timeoutMs,
          carry: decisions.shared(decide(key)),
          ...(sandbox ? { sandbox } : {}),
        });
      }
    }
    slots.push(...own);
    experiments.push({
      index,
      id: selected.experiment.id,
      discovered: selected.experiment,
      evals: selected.evals,
      attempts,
      earlyExit: settings.earlyExit ?? def.earlyExit,
      budgetUSD: settings.budget ?? def.budget ?? null,
      maxConcurrency: def.maxConcurrency ?? null,
      ...experimentProviders(used),
      runnable: own.filter((s) => s.carry.action === "run").length,
    });
  });
  slots.sort((a, b) =>
    a.evalIndex - b.evalIndex || a.experimentIndex - b.experimentIndex || a.ordinal - b.ordinal
  );
  // A copy: it is tighter in memory than the spread-built original (kept for the whole run).
  const planned = slots.map((slot, position) => Object.freeze({ ...slot, position }));
  const reused = planned.filter((s) => s.carry.action === "carry").length;
  return {
    experiments,
    slots: planned,
    evalCount: new Set(planned.map((s) => s.evalId)).size,
    total: planned.length,
    reused,
    toRun: planned.length - reused,
  };
}
