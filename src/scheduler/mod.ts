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
export type { RunPlanOptions, SchedulerCoordination, SchedulerSnapshot } from "./types.ts";
export { experimentHookContext, runBoundedHook } from "./hooks.ts";
export type { BoundedHookOptions, HookContextOptions, HookOutcome } from "./hooks.ts";
export type {
  AbandonAttempt,
  AttemptControl,
  BackoffRequest,
  GroupSandboxPhase,
  RetryLimits,
  RunAttempt,
  SandboxAdmission,
} from "./control.ts";
export { DEFAULT_CREATES_PER_SECOND } from "./pacing.ts";
export { fileMachineSlots } from "./machine_budget.ts";
export type { MachineSlotSource } from "./machine_budget.ts";
export type { PhysicalOptions } from "./physical.ts";
export {
  capAnnotation,
  CUSTOM_DEFAULT_CAP,
  customProviderDefaults,
  DIRECT_DEFAULT_CAP,
  exclusiveSerialWarnings,
  planProviders,
  PROVIDER_DEFAULTS,
  resolveGlobalCap,
  resolvePlanCap,
} from "./cap.ts";
export type {
  CapSource,
  CustomProviderInfo,
  ProviderDefaults,
  ProviderLookup,
  ResolvedCap,
} from "./cap.ts";
export type { JudgePrecheck, JudgePrecheckState } from "./judge.ts";
export type { ArtifactBuilds, BuildSnapshot } from "./builds.ts";
export type { RunEventCallback } from "./_events.ts";
export {
  ATTEMPT_ABORT_GRACE_MS,
  ATTEMPT_MAX_RETRIES,
  BUILD_TIMEOUT_MS,
  CLEANUP_TIMEOUT_MS,
  DEFAULT_MAX_BUILD_CONCURRENCY,
  FORCE_CLEANUP_MS,
  JUDGE_PROBE_TIMEOUT_MS,
  JUDGE_PROBE_TRIES,
  SEND_MAX_TRIES,
} from "./constants.ts";
export { sendBackoffMs } from "./retry.ts";
export { roundsOf } from "./keys.ts";
export { compareKeys, PriorityQueue } from "./priority_queue.ts";
export type { PriorityKey } from "./priority_queue.ts";
export { PriorityGate } from "./gate.ts";
export type { GateEntry, GateSnapshot, ParkedWait, Permit } from "./gate.ts";
