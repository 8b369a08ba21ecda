/**
 * Sandbox pairing of a selection (sandboxes.md §1.1, rules 1–4, 75; scheduling.md GRP-5): which
 * layer of each (Experiment, Eval) pair is the template, how its Attempts get a sandbox, and every
 * plan-time conflict. Pure: the physical resolution through the provider registry happens outside
 * and comes back as {@link PlannedSandbox} values.
 */
import { UsageError } from "../_shared/mod.ts";
import type { DiscoveredEval, DiscoveredGroup } from "../discovery/mod.ts";
import type { SelectedExperiment, Selection } from "./select.ts";
import type { PairLayer, PlannedSandbox, SandboxPair } from "./types.ts";

/** One plan-time conflict; reported together with all others (rule 4). */
export interface PairingProblem {
  readonly code: string;
  /** Starts with the file that has to change. */
  readonly message: string;
  readonly hint: string;
}

/** The key of an (Experiment, Eval) pair in a plan. */
export function pairKey(experimentIndex: number, evalId: string): string {
  return `${experimentIndex}\u0000${evalId}`;
}

/** Throws every problem as one `UsageError` (exit 2); does nothing without problems. */
export function throwProblems(problems: readonly PairingProblem[]): void {
  const [first, ...rest] = problems;
  if (first === undefined) return;
  const hints = new Set(problems.map((p) => p.hint));
  throw new UsageError(
    first.code,
    first.message,
    hints.size === 1 ? first.hint : "fix the experiments and evals listed above",
    { extraLines: rest.map((p) => `${p.message} [${p.code}]`) },
  );
}

/**
 * The pairs of sandbox agents that have exactly one template, in selection and discovery order.
 * Pairs with a pairing problem are left out ({@link pairingProblems} reports them).
 */
export function sandboxPairs(
  selection: Selection,
  groups: readonly DiscoveredGroup[],
): SandboxPair[] {
  const out: SandboxPair[] = [];
  selection.experiments.forEach((selected, experimentIndex) => {
    const { experiment, evals } = selected;
    const def = experiment.definition;
    if (def.agent.kind === "direct") return;
    for (const e of evals) {
      const layers = pairLayers(selected, e);
      if (layers.filter((l) => isTemplate(l.layer)).length !== 1) continue;
      const group = e.groupId === undefined ? undefined : groups.find((g) => g.id === e.groupId);
      out.push(Object.freeze({
        key: pairKey(experimentIndex, e.id),
        experimentIndex,
        experimentId: experiment.id,
        evalId: e.id,
        groupId: e.groupId ?? null,
        layers: Object.freeze(layers.sort((a, b) => templateFirst(a) - templateFirst(b))),
        reuse: e.groupId !== undefined ? "group" : def.sandboxReuse ? "pool" : "fresh",
        onUnavailable: group?.definition.onUnavailable ?? null,
      }));
    }
  });
  return out;
}

/** The pairing conflicts of every selected experiment (rules 1–3, GRP-5 except `incompatible`). */
export function pairingProblems(selection: Selection): PairingProblem[] {
  return selection.experiments.flatMap(experimentProblems);
}

/**
 * `eval-group-incompatible` (rule 75): within one Experiment, the members of a group must resolve
 * to one physical sandbox (the same pool key), and no member's own layer may declare hooks.
 */
export function groupProblems(
  selection: Selection,
  sandboxes: ReadonlyMap<string, PlannedSandbox>,
): PairingProblem[] {
  const out: PairingProblem[] = [];
  selection.experiments.forEach(({ experiment }, experimentIndex) => {
    const byGroup = new Map<string, PlannedSandbox[]>();
    for (const planned of sandboxes.values()) {
      if (planned.experimentIndex !== experimentIndex || planned.groupId === null) continue;
      byGroup.set(planned.groupId, [...(byGroup.get(planned.groupId) ?? []), planned]);
    }
    for (const [groupId, members] of byGroup) {
      const hooked = members.filter((m) => m.evalHooks);
      const keys = new Set(members.map((m) => m.poolKey));
      if (hooked.length === 0 && keys.size <= 1) continue;
      out.push({
        code: "eval-group-incompatible",
        message: `${experiment.file}: the members of eval group "${groupId}" ${
          hooked.length > 0
            ? `cannot declare their own sandbox hooks (${
              hooked.map((m) => JSON.stringify(m.evalId)).join(", ")
            })`
            : "resolve to different sandboxes"
        }`,
        hint:
          "give every member of the group the same sandbox through defineEvalGroup({ sandbox })",
      });
    }
  });
  return out;
}

/**
 * The experiment-level provider summary: the provider with the smallest default concurrency over
 * its pairs (ties: first in slot order) and the first exclusive lane key.
 */
export function experimentProviders(
  sandboxes: readonly PlannedSandbox[],
): { provider: string | null; laneKey: string | null } {
  let best: PlannedSandbox | undefined;
  let laneKey: string | null = null;
  for (const s of sandboxes) {
    if (best === undefined || concurrencyOf(s) < concurrencyOf(best)) best = s;
    laneKey ??= s.laneKey;
  }
  return { provider: best?.provider ?? null, laneKey };
}

function concurrencyOf(s: PlannedSandbox): number {
  return s.exclusive ? 1 : s.defaultConcurrency;
}

/** The experiment's layer and the eval's own or group layer, with their owners. */
function pairLayers({ experiment }: SelectedExperiment, e: DiscoveredEval): PairLayer[] {
  const layers: PairLayer[] = [];
  const def = experiment.definition;
  if (def.sandbox !== undefined) {
    layers.push({ layer: def.sandbox, owner: experiment.id, side: "experiment" });
  }
  if (e.definition.sandbox !== undefined) {
    layers.push({ layer: e.definition.sandbox, owner: e.id, side: "eval" });
  }
  if (e.groupSandbox !== undefined && e.groupId !== undefined) {
    layers.push({ layer: e.groupSandbox, owner: e.groupId, side: "group" });
  }
  return layers;
}

function templateFirst(l: PairLayer): number {
  return isTemplate(l.layer) ? 0 : 1;
}

type AddProblem = (code: string, message: string, hint: string) => void;

/** The pairing conflicts of one experiment with its selected evals, checked pair by pair. */
function experimentProblems(selected: SelectedExperiment): PairingProblem[] {
  const { experiment, evals } = selected;
  const def = experiment.definition;
  const out: PairingProblem[] = [];
  const add: AddProblem = (code, message, hint) =>
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
  const layered = evals.filter((e) => evalLayers(e).length > 0);
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
function templateProblems(selected: SelectedExperiment, add: AddProblem): void {
  const def = selected.experiment.definition;
  const templates = (e: DiscoveredEval) =>
    pairLayers(selected, e).filter((l) => isTemplate(l.layer)).length;
  const missing = selected.evals.filter((e) => templates(e) === 0);
  const conflicting = selected.evals.filter((e) => templates(e) > 1);
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
function evalLayers(e: DiscoveredEval): unknown[] {
  return [e.definition.sandbox, e.groupSandbox].filter((l) => l !== undefined);
}

/** True for a template layer (sandboxes.md §1.2); `sandboxLayer()` makes kind `"layer"`. */
function isTemplate(layer: { readonly kind: string }): boolean {
  return layer.kind !== "layer";
}

/** `eval "a"`, or `evals "a", "b", "c" and 2 more`. */
function idList(evals: readonly DiscoveredEval[]): string {
  const shown = evals.slice(0, 3).map((e) => JSON.stringify(e.id)).join(", ");
  const more = evals.length > 3 ? ` and ${evals.length - 3} more` : "";
  return `${evals.length === 1 ? "eval" : "evals"} ${shown}${more}`;
}
