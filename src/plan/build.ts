/** Builds the plan (PLAN-1): selection × ordinals × carry decisions, in ORD-2 order. */
import { UsageError } from "../_shared/mod.ts";
import type { DiscoveredEval, SandboxLayer } from "../discovery/mod.ts";
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
  checkPairings(selection.experiments);
  selection.experiments.forEach((selected, index) => {
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

/** One plan-time pairing conflict (GRP-5, sandboxes.md §1.1). */
interface PairingProblem {
  readonly code: string;
  readonly message: string;
  readonly hint: string;
}

/** Throws every pairing conflict of every selected experiment as one `UsageError`. */
function checkPairings(experiments: readonly SelectedExperiment[]): void {
  const [first, ...rest] = experiments.flatMap(pairingProblems);
  if (first === undefined) return;
  const hints = new Set([first, ...rest].map((p) => p.hint));
  throw new UsageError(
    first.code,
    first.message,
    hints.size === 1 ? first.hint : "fix the experiments and evals listed above",
    { extraLines: rest.map((p) => `${p.message} [${p.code}]`) },
  );
}

/** The pairing conflicts of one experiment with its selected evals, checked pair by pair. */
function pairingProblems(selected: SelectedExperiment): PairingProblem[] {
  const { experiment, evals } = selected;
  const def = experiment.definition;
  const out: PairingProblem[] = [];
  const add = (code: string, message: string, hint: string) =>
    out.push({ code, message: `${experiment.file}: ${message}`, hint });
  const direct = def.agent.kind === "direct";
  const grouped = evals.filter((e) => e.groupId !== undefined);
  if (grouped.length > 0 && direct) {
    add(
      "eval-group-direct-agent",
      `a direct agent cannot run grouped evals: ${idList(grouped)}`,
      "use a sandbox agent, or narrow evals to ungrouped ones",
    );
  }
  if (grouped.length > 0 && def.sandboxReuse) {
    add(
      "eval-group-sandbox-reuse-conflict",
      `sandboxReuse cannot be combined with grouped evals: ${idList(grouped)}`,
      "remove sandboxReuse, or narrow evals to ungrouped ones",
    );
  }
  if (direct) directAgentProblems(selected, add);
  else templateProblems(selected, add);
  return out;
}

type AddProblem = (code: string, message: string, hint: string) => void;

/** A direct agent takes neither `sandboxReuse` nor any layer (sandboxes.md rule 1.1.3). */
function directAgentProblems({ experiment, evals }: SelectedExperiment, add: AddProblem): void {
  const def = experiment.definition;
  if (def.sandboxReuse) {
    add(
      "experiment.sandbox-reuse-direct-agent",
      "sandboxReuse needs a sandbox agent",
      "remove sandboxReuse",
    );
  }
  const layered = evals.filter((e) => layersOf(e).length > 0);
  if (def.sandbox !== undefined || layered.length > 0) {
    add(
      "sandbox-direct-agent",
      `a direct agent cannot use a sandbox (${
        def.sandbox !== undefined ? "set on the experiment" : `set for ${idList(layered)}`
      })`,
      "remove the sandbox option, or use a sandbox agent",
    );
  }
}

/** A sandbox agent needs exactly one template per pair (sandboxes.md rule 1.1.2). */
function templateProblems({ experiment, evals }: SelectedExperiment, add: AddProblem): void {
  const def = experiment.definition;
  const templates = (e: DiscoveredEval) =>
    [def.sandbox, ...layersOf(e)].filter((layer) => layer !== undefined && isTemplate(layer))
      .length;
  const missing = evals.filter((e) => templates(e) === 0);
  const conflicting = evals.filter((e) => templates(e) > 1);
  if (missing.length > 0) {
    add(
      "sandbox-template-missing",
      `agent "${def.agent.name}" runs in a sandbox, but no sandbox template is set for ${
        idList(missing)
      }`,
      "add sandbox: to the experiment or to its evals",
    );
  }
  if (conflicting.length > 0) {
    add(
      "sandbox-template-conflict",
      `the experiment and the eval (or its group) both set a sandbox template for ${
        idList(conflicting)
      }`,
      "keep the template on one side; the other side may use a template-less layer",
    );
  }
}

/** The eval's own layer and its group's layer. */
function layersOf(e: DiscoveredEval): SandboxLayer[] {
  return [e.definition.sandbox, e.groupSandbox].filter((l): l is SandboxLayer => l !== undefined);
}

/** True for a template layer (sandboxes.md §1.2); `sandboxLayer()` makes kind `"layer"`. */
function isTemplate(layer: SandboxLayer): boolean {
  return layer.kind !== "layer";
}

/** `eval "a"`, or `evals "a", "b", "c" and 2 more`. */
function idList(evals: readonly DiscoveredEval[]): string {
  const shown = evals.slice(0, 3).map((e) => JSON.stringify(e.id)).join(", ");
  const more = evals.length > 3 ? ` and ${evals.length - 3} more` : "";
  return `${evals.length === 1 ? "eval" : "evals"} ${shown}${more}`;
}
