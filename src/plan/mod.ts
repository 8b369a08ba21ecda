/**
 * @module plan
 * Owns planning: selection of experiments and evals, ordinals, per-slot timeouts and carry
 * decisions, in ORD-2 order. It is pure: no I/O, no clock, no scheduling policy.
 */
export { buildPlan } from "./build.ts";
export type { CarryDecider, PlanSettings, SlotKey } from "./build.ts";
export { matchExperimentIds, select, selectExperiments } from "./select.ts";
export type { SelectedExperiment, Selection, SelectionInput } from "./select.ts";
export type {
  CarryDecision,
  CarrySource,
  Plan,
  PlannedExperiment,
  PlannedSlot,
  RerunTier,
  RunReason,
} from "./types.ts";
