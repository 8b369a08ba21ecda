/** Builds the plan (PLAN-1): selection × ordinals × carry decisions, in ORD-2 order. */
import { UsageError } from "../_shared/mod.ts";
import type { SelectedExperiment, Selection } from "./select.ts";
import type { CarryDecision, Plan, PlannedExperiment, PlannedSlot, RerunTier } from "./types.ts";

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

/** Builds the plan; throws pre-dispatch conflicts (GRP-5, sandbox pairing) as `UsageError`. */
export function buildPlan(
  selection: Selection,
  settings: PlanSettings,
  decide: CarryDecider = () => RUN_NEW,
): Plan {
  const slots: Omit<PlannedSlot, "position">[] = [];
  const experiments: PlannedExperiment[] = [];
  selection.experiments.forEach((selected, index) => {
    checkPairing(selected);
    const def = selected.experiment.definition;
    const attempts = settings.attempts ?? def.attempts;
    const own: Omit<PlannedSlot, "position">[] = [];
    for (const e of selected.evals) {
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
          carry: decide(key),
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
      provider: null,
      laneKey: null,
      runnable: own.filter((s) => s.carry.action === "run").length,
    });
  });
  slots.sort((a, b) =>
    a.evalIndex - b.evalIndex || a.experimentIndex - b.experimentIndex || a.ordinal - b.ordinal
  );
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

function checkPairing(selected: SelectedExperiment): void {
  const { experiment, evals } = selected;
  const def = experiment.definition;
  const direct = def.agent.kind === "direct";
  const grouped = evals.some((e) => e.groupId !== undefined);
  const fail = (code: string, message: string, hint: string) => {
    throw new UsageError(code, `${experiment.file}: ${message}`, hint);
  };
  if (grouped && direct) {
    fail(
      "eval-group-direct-agent",
      "a direct agent cannot run grouped evals",
      "use a sandbox agent, or narrow evals to ungrouped ones",
    );
  }
  if (grouped && def.sandboxReuse) {
    fail(
      "eval-group-sandbox-reuse-conflict",
      "sandboxReuse cannot be combined with grouped evals",
      "remove sandboxReuse, or narrow evals to ungrouped ones",
    );
  }
  if (direct && def.sandboxReuse) {
    fail(
      "experiment.sandbox-reuse-direct-agent",
      "sandboxReuse needs a sandbox agent",
      "remove sandboxReuse",
    );
  }
  const layered = def.sandbox !== undefined ||
    evals.some((e) => e.definition.sandbox !== undefined);
  if (direct && layered) {
    fail(
      "sandbox-direct-agent",
      "a direct agent cannot use a sandbox",
      "remove the sandbox option, or use a sandbox agent",
    );
  }
  if (!direct && !layered) {
    fail(
      "sandbox-template-missing",
      `agent "${def.agent.name}" runs in a sandbox, but no sandbox template is set`,
      "add sandbox: to the experiment or to its evals",
    );
  }
}
