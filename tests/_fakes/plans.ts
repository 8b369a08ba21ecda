/** Minimal hand-built Plans for report tests (no discovery, no files). */
import type { CarryDecision, Plan, PlannedExperiment, PlannedSlot } from "../../src/plan/mod.ts";

/** One experiment's evals as `[evalId, kind]` and its attempts. */
export interface ExperimentSketch {
  readonly id: string;
  readonly evals: readonly (readonly [string, "pass" | "score"])[];
  readonly attempts?: number;
  readonly maxConcurrency?: number;
  readonly agent?: string;
  readonly model?: string;
}

/** Builds a plan; `carry(experimentId, evalId, ordinal)` may mark slots carried. */
export function sketchPlan(
  sketches: readonly ExperimentSketch[],
  carry: (experimentId: string, evalId: string, ordinal: number) => CarryDecision | undefined =
    () => undefined,
): Plan {
  const evalIndex = new Map<string, number>();
  for (const s of sketches) {
    for (const [id] of s.evals) if (!evalIndex.has(id)) evalIndex.set(id, evalIndex.size);
  }
  const slots: Omit<PlannedSlot, "position">[] = [];
  const experiments: PlannedExperiment[] = sketches.map((s, index) => {
    const attempts = s.attempts ?? 1;
    let runnable = 0;
    for (const [evalId, kind] of s.evals) {
      for (let ordinal = 0; ordinal < attempts; ordinal++) {
        const decision = carry(s.id, evalId, ordinal) ??
          { action: "run", reason: "new", detail: null, source: null };
        if (decision.action === "run") runnable++;
        slots.push({
          experimentIndex: index,
          experimentId: s.id,
          evalId,
          evalIndex: evalIndex.get(evalId)!,
          ordinal,
          kind,
          groupId: null,
          timeoutMs: null,
          carry: decision,
        });
      }
    }
    return {
      index,
      id: s.id,
      discovered: {
        id: s.id,
        index,
        file: `experiments/${s.id}.ts`,
        definition: {
          agent: { name: s.agent ?? "det", kind: "direct" },
          model: s.model,
          flags: {},
          attempts,
          earlyExit: false,
          evals: "*",
          sandboxReuse: false,
        },
      } as unknown as PlannedExperiment["discovered"],
      evals: s.evals.map(([id, kind]) => ({
        id,
        index: evalIndex.get(id)!,
        file: `evals/${id}.eval.ts`,
        definition: { evaluationKind: kind, tags: [], metadata: {} },
      })) as unknown as PlannedExperiment["evals"],
      attempts,
      earlyExit: false,
      budgetUSD: null,
      maxConcurrency: s.maxConcurrency ?? null,
      provider: null,
      laneKey: null,
      runnable,
    };
  });
  slots.sort((a, b) =>
    a.evalIndex - b.evalIndex || a.experimentIndex - b.experimentIndex || a.ordinal - b.ordinal
  );
  const planned = slots.map((slot, position) => ({ ...slot, position }));
  const reused = planned.filter((s) => s.carry.action === "carry").length;
  return {
    experiments,
    slots: planned,
    evalCount: evalIndex.size,
    total: planned.length,
    reused,
    toRun: planned.length - reused,
  };
}
