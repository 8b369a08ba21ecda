/**
 * Builds `Plan` objects for scheduler tests without discovery or files: experiments with their
 * scheduling fields, evals with ids, kinds and group ids, ordinals and carried slots. Slots come
 * out in ORD-2 order (eval discovery, experiment selection, ordinal) like `buildPlan`'s.
 * `fakeSelection` builds the input of the real `buildPlan` instead, for plan-level rules.
 */
import { scriptedAgent } from "../../src/agents/mod.ts";
import {
  defineEval,
  defineExperiment,
  defineScoreEval,
  type DiscoveredEval,
  type DiscoveredExperiment,
  type ExperimentHookContext,
} from "../../src/discovery/mod.ts";
import type {
  CarryDecision,
  Plan,
  PlannedExperiment,
  PlannedSlot,
  Selection,
} from "../../src/plan/mod.ts";

/** One eval: an id, or an id with its kind, group and timeout. */
export type FakeEvalSpec = string | {
  readonly id: string;
  readonly kind?: "pass" | "score";
  readonly groupId?: string;
  readonly timeoutMs?: number;
};

/** One experiment and the scheduling fields of its definition. */
export interface FakeExperimentSpec {
  readonly id: string;
  /** Selected eval ids; default: every eval of the plan. */
  readonly evals?: readonly string[];
  /** Ordinals per eval; default 1. */
  readonly attempts?: number;
  readonly maxConcurrency?: number;
  readonly earlyExit?: boolean;
  readonly budget?: number;
  readonly timeoutMs?: number;
  /** Provider name; `local` implies lane key `local` unless `laneKey` says otherwise. */
  readonly provider?: string;
  readonly laneKey?: string | null;
  readonly setup?: (ctx: ExperimentHookContext) => void | Promise<void>;
  readonly teardown?: (ctx: ExperimentHookContext) => void | Promise<void>;
  /** Carried ordinals, `"<evalId>#<ordinal>"` → carried verdict. */
  readonly carried?: Readonly<Record<string, "passed" | "failed">>;
}

/** What {@link fakePlan} builds from. */
export interface FakePlanSpec {
  /** Evals in discovery order. */
  readonly evals: readonly FakeEvalSpec[];
  /** Experiments in selection order. */
  readonly experiments: readonly FakeExperimentSpec[];
}

const RUN: CarryDecision = { action: "run", reason: "new", detail: null, source: null };

function evalSpec(spec: FakeEvalSpec) {
  return typeof spec === "string" ? { id: spec } : spec;
}

function discoveredEval(spec: FakeEvalSpec, index: number): DiscoveredEval {
  const e = evalSpec(spec);
  const options = { test() {}, ...(e.timeoutMs !== undefined ? { timeoutMs: e.timeoutMs } : {}) };
  // Discovery stores definitions of either kind under the general type.
  const definition =
    (e.kind === "score"
      ? defineScoreEval(options)
      : defineEval(options)) as unknown as DiscoveredEval["definition"];
  return {
    id: e.id,
    index,
    file: `evals/${e.id}.eval.ts`,
    definition,
    ...(e.groupId !== undefined ? { groupId: e.groupId } : {}),
  };
}

function discoveredExperiment(spec: FakeExperimentSpec, index: number): DiscoveredExperiment {
  const definition = defineExperiment({
    agent: scriptedAgent({ name: "fake", script: [], fallback: { text: "ok" } }),
    ...(spec.attempts !== undefined ? { attempts: spec.attempts } : {}),
    ...(spec.maxConcurrency !== undefined ? { maxConcurrency: spec.maxConcurrency } : {}),
    ...(spec.earlyExit !== undefined ? { earlyExit: spec.earlyExit } : {}),
    ...(spec.budget !== undefined ? { budget: spec.budget } : {}),
    ...(spec.timeoutMs !== undefined ? { timeoutMs: spec.timeoutMs } : {}),
    ...(spec.setup ? { setup: spec.setup } : {}),
    ...(spec.teardown ? { teardown: spec.teardown } : {}),
  });
  return { id: spec.id, index, file: `experiments/${spec.id}.ts`, definition };
}

function carryOf(spec: FakeExperimentSpec, evalId: string, ordinal: number): CarryDecision {
  const verdict = spec.carried?.[`${evalId}#${ordinal}`];
  if (verdict === undefined) return RUN;
  const id = `carried-${spec.id}-${evalId}-${ordinal}`;
  return {
    action: "carry",
    source: {
      runId: "prior",
      attemptId: id,
      originRunId: "prior",
      verdict,
      durationMs: 1,
      score: null,
    },
  };
}

/** Builds a plan directly (no discovery, no carry lookup, no pairing checks). */
export function fakePlan(spec: FakePlanSpec): Plan {
  const evals = spec.evals.map(discoveredEval);
  const slots: Omit<PlannedSlot, "position">[] = [];
  const experiments = spec.experiments.map((e, index): PlannedExperiment => {
    const own = evals.filter((ev) => e.evals === undefined || e.evals.includes(ev.id));
    const attempts = e.attempts ?? 1;
    let runnable = 0;
    for (const ev of own) {
      const timeoutMs = e.timeoutMs ?? ev.definition.timeoutMs ?? null;
      for (let ordinal = 0; ordinal < attempts; ordinal++) {
        const carry = carryOf(e, ev.id, ordinal);
        if (carry.action === "run") runnable++;
        slots.push({
          experimentIndex: index,
          experimentId: e.id,
          evalId: ev.id,
          evalIndex: ev.index,
          ordinal,
          kind: ev.definition.evaluationKind,
          groupId: ev.groupId ?? null,
          timeoutMs,
          carry,
        });
      }
    }
    return {
      index,
      id: e.id,
      discovered: discoveredExperiment(e, index),
      evals: own,
      attempts,
      earlyExit: e.earlyExit ?? false,
      budgetUSD: e.budget ?? null,
      maxConcurrency: e.maxConcurrency ?? null,
      provider: e.provider ?? null,
      laneKey: e.laneKey !== undefined ? e.laneKey : e.provider === "local" ? "local" : null,
      runnable,
    };
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

/** The selection `buildPlan` takes, built from the same specs (definitions are real). */
export function fakeSelection(spec: FakePlanSpec): Selection {
  const evals = spec.evals.map(discoveredEval);
  return {
    experiments: spec.experiments.map((e, index) => ({
      experiment: discoveredExperiment(e, index),
      evals: evals.filter((ev) => e.evals === undefined || e.evals.includes(ev.id)),
    })),
    emptyExperimentIds: [],
  };
}

/** `"<experimentId>:<evalId>#<ordinal>"`, the name tests use for a slot. */
export function slotName(slot: Pick<PlannedSlot, "experimentId" | "evalId" | "ordinal">): string {
  return `${slot.experimentId}:${slot.evalId}#${slot.ordinal}`;
}

/** `n` eval ids `e00`, `e01`, … in discovery order. */
export function evalIds(n: number, prefix = "e"): string[] {
  const width = String(Math.max(0, n - 1)).length;
  return Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(width, "0")}`);
}
