/** In-memory discovered evals and experiments for planning tests. */
import { brand } from "../../src/_shared/brand.ts";
import { completeEvidenceCoverage, defineAgent } from "../../src/agents/mod.ts";
import type { Agent } from "../../src/agents/mod.ts";
import {
  defineEval,
  defineExperiment,
  defineScoreEval,
  type DiscoveredEval,
  type DiscoveredExperiment,
  type EvalOptions,
  type ExperimentOptions,
  type SandboxLayer,
} from "../../src/discovery/mod.ts";
import type { TestContext } from "../../src/discovery/mod.ts";

const send = () => Promise.resolve({ status: "completed" as const, events: [] });

/** A direct agent. */
export const DIRECT: Agent = defineAgent({
  name: "direct",
  evidenceCoverage: completeEvidenceCoverage,
  send,
});

/** A sandbox agent. */
export const IN_SANDBOX: Agent = defineAgent({
  name: "boxed",
  kind: "sandbox",
  evidenceCoverage: completeEvidenceCoverage,
  send,
});

/** A branded stand-in layer: a template of `provider`, or template-less without one. */
export function layer(provider?: string): SandboxLayer {
  const body = { kind: provider === undefined ? "layer" : "template", provider };
  return Object.freeze(brand(body, "sandbox-layer")) as unknown as SandboxLayer;
}

/** Discovered evals in the given order, with optional per-eval options. */
export function evals(
  specs: readonly (string | [string, Partial<EvalOptions<TestContext>> & { score?: boolean }])[],
): DiscoveredEval[] {
  return specs.map((spec, index) => {
    const [id, options] = typeof spec === "string" ? [spec, {}] : spec;
    const { score, ...rest } = options;
    const definition = score
      ? defineScoreEval({ ...rest, test() {} })
      : defineEval({ ...rest, test() {} });
    return { id, index, file: `evals/${id}.eval.ts`, definition };
  });
}

/** Discovered experiments in the given order. */
export function experiments(
  specs: readonly (string | [string, Partial<ExperimentOptions>])[],
): DiscoveredExperiment[] {
  return specs.map((spec, index) => {
    const [id, options] = typeof spec === "string" ? [spec, {}] : spec;
    return {
      id,
      index,
      file: `experiments/${id}.ts`,
      definition: defineExperiment({ agent: DIRECT, ...options }),
    };
  });
}
