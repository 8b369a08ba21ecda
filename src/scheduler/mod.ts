/**
 * @module scheduler
 * Owns admission: the global cap and its source, grant-time priority, experiment permits,
 * exclusive lanes, group lanes, reuse-pool leases, machine sandbox slots and create pacing, stop
 * rules (earlyExit, budget, halts, fail-fast, group stops), deadlines, backoff slots, the waits for
 * image/template builds, the experiment lifecycle and the serialized delivery of run events. It
 * sees Attempts only as plan entries and the function it is handed, and builds only as a function
 * it is handed; it never writes files (machine slots go through `coordination`) or renders output.
 */
export { createScheduler, runPlan, Scheduler } from "./run_plan.ts";
export type {
  RampOptions,
  RunPlanOptions,
  SchedulerCoordination,
  SchedulerSnapshot,
} from "./types.ts";
export { experimentHookContext, runBoundedHook } from "./hooks.ts";
export type { HookOutcome } from "./hooks.ts";
export type {
  AbandonAttempt,
  AttemptControl,
  BackoffRequest,
  GroupSandboxPhase,
  RetryLimits,
  RunAttempt,
} from "./control.ts";
export { fileMachineSlots } from "./machine_budget.ts";
export type { MachineSlotSource } from "./machine_budget.ts";
export {
  capAnnotation,
  customProviderDefaults,
  exclusiveSerialWarnings,
  PROVIDER_DEFAULTS,
  resolvePlanCap,
} from "./cap.ts";
export type { ProviderDefaults, ProviderLookup, ResolvedCap } from "./cap.ts";
export type { JudgePrecheck } from "./judge.ts";
export { BUILD_TIMEOUT_MS, FORCE_CLEANUP_MS, RAMP_WINDOW_MS } from "./constants.ts";
export type { RampControlRead, RampSettings, RampStatus } from "./ramp.ts";
export { PriorityQueue } from "./priority_queue.ts";
export { PriorityGate } from "./gate.ts";
export type { GateEntry } from "./gate.ts";
