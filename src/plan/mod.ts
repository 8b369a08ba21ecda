/**
 * @module plan
 * Owns planning: selection of experiments and evals, ordinals, per-slot timeouts and carry
 * decisions, sandbox pairing (which layer is the template, fresh / pool / group sandboxes) and
 * every pre-dispatch conflict, in ORD-2 order. It is pure: no I/O, no clock, no scheduling policy;
 * physical sandboxes are resolved by the caller and passed in.
 */
export { buildPlan } from "./build.ts";
export type { CarryDecider, PlanSettings, SlotKey } from "./build.ts";
export { experimentProviders, sandboxPairs } from "./sandbox.ts";
export type { PairingProblem } from "./sandbox.ts";
export { matchExperimentIds, select, selectExperiments, suggestEvalPrefix } from "./select.ts";
export { compileGrep, grepMatches } from "./grep.ts";
export type { GrepPattern } from "./grep.ts";
export type { Selection } from "./select.ts";
export type {
  CarryDecision,
  CarrySource,
  Plan,
  PlannedExperiment,
  PlannedSandbox,
  PlannedSlot,
  RerunTier,
  RunReason,
} from "./types.ts";
