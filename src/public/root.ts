/**
 * @module
 * The `niceeval` entry: define the project configuration, experiments, evals and eval groups.
 *
 * @example
 * ```ts
 * import { defineEval } from "niceeval";
 * import { includes } from "niceeval/expect";
 * export default defineEval({
 *   async test(t) {
 *     await t.send("Say hello");
 *     t.check(t.reply, includes("Hello"));
 *   },
 * });
 * ```
 */
export { defineConfig } from "../config/mod.ts";
export type { ConfigDefinition, ConfigOptions, PriceOptions, RampOptions } from "../config/mod.ts";
export {
  defineEval,
  defineEvalGroup,
  defineExperiment,
  defineScoreEval,
} from "../discovery/mod.ts";
export type {
  EvalDefinition,
  EvalDescriptor,
  EvalGroupDefinition,
  EvalGroupOptions,
  EvalKind,
  EvalOptions,
  EvalSelection,
  ExperimentDefinition,
  ExperimentHookContext,
  ExperimentOptions,
  FailureClass,
  FailureInfo,
  ScoreEvalOptions,
} from "../discovery/mod.ts";
export type { SandboxLayer } from "../sandbox/mod.ts";
export {
  AgentSendError,
  AssertionAuthoringError,
  DefinitionError,
  EvalFatalError,
  ExperimentFatalError,
} from "../_shared/mod.ts";
export type { DefinitionErrorCode, JsonValue } from "../_shared/mod.ts";
export type {
  Conversation,
  EvalSandbox,
  Kind,
  ScoreTestContext,
  SendInput,
  SessionHandle,
  TestContext,
  TurnHandle,
} from "../discovery/mod.ts";
