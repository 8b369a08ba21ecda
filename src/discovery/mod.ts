/**
 * @module discovery
 * Owns what users write and how it is found: the `define*` factories and their brands, walking
 * `evals/` and `experiments/`, eval and experiment IDs, dataset expansion, eval groups, the test
 * context contract `t` that the attempt domain implements, and the collected discovery issues.
 * It never plans, schedules or runs Attempts.
 */
export { defineEval, defineEvalGroup, defineScoreEval } from "./definitions.ts";
export type {
  EvalDefinition,
  EvalGroupDefinition,
  EvalGroupOptions,
  EvalKind,
  EvalOptions,
  SandboxLayer,
  ScoreEvalOptions,
} from "./definitions.ts";
export { defineExperiment } from "./experiment.ts";
export type {
  EvalDescriptor,
  EvalSelection,
  ExperimentDefinition,
  ExperimentHookContext,
  ExperimentOptions,
  FailureClass,
  FailureInfo,
} from "./experiment.ts";
export { discoverProject } from "./project.ts";
export type { DiscoveredProject } from "./project.ts";
export type { DiscoveredEval } from "./evals.ts";
export type { DiscoveredExperiment } from "./experiments.ts";
export type { DiscoveredGroup } from "./groups.ts";
export type { DiscoveryIssue } from "./issues.ts";
export type {
  Conversation,
  EvalSandbox,
  Kind,
  ScoreTestContext,
  SendInput,
  SessionHandle,
  TestContext,
  TurnHandle,
} from "./test_context.ts";
