/**
 * Wires the parts of one run: the priority order and waiter index, the physical, judge and build
 * gates, the Experiment lifecycles, the stops and the admission chain. `runPlan` drives them
 * through its phases; nothing here starts any work.
 */
import type { RunEventSink } from "../_shared/mod.ts";
import type { Plan, PlannedSlot } from "../plan/mod.ts";
import { Admission } from "./_admission.ts";
import type { Execution } from "./_execution.ts";
import { createLifecycles } from "./_lifecycles.ts";
import { StopControl } from "./_stop_control.ts";
import { WaiterIndex } from "./_waiters.ts";
import { BuildGate } from "./builds.ts";
import type { RunAttempt } from "./control.ts";
import { JudgeGate } from "./judge.ts";
import { priorityOrder } from "./keys.ts";
import type { ExperimentLifecycle } from "./lifecycle.ts";
import type { StartupRecovery } from "./orphan_recovery.ts";
import { PhysicalAdmission } from "./physical.ts";
import { RampController } from "./ramp.ts";
import type { RunPlanOptions } from "./types.ts";

/** The parts of one run. */
export interface RunParts {
  /** Runnable slots in key order; registered as waiters when the run starts. */
  readonly runnable: readonly PlannedSlot[];
  readonly waiters: WaiterIndex;
  /** Started Executions by plan position. */
  readonly running: ReadonlyMap<number, Execution>;
  readonly physical: PhysicalAdmission;
  readonly judge: JudgeGate;
  readonly builds: BuildGate;
  readonly lifecycles: readonly ExperimentLifecycle[];
  readonly recovery: StartupRecovery;
  readonly stops: StopControl;
  readonly admission: Admission;
  /** The ramp's window controller, when the run ramps (scheduling.md §23). */
  readonly ramp: RampController | null;
}

/**
 * Creates the parts of a run of `plan`; `options.onEvent` is already the serialized sink. One
 * constructor call per part, in dependency order: helpers would only pass the same values on.
 */
export function createRunParts(
  plan: Plan,
  runAttempt: RunAttempt,
  options: RunPlanOptions,
): RunParts {
  const { clock, onEvent: emit, cap } = options;
  const { order, rank } = priorityOrder(plan, cap);
  const waiters = new WaiterIndex(plan.slots, { order, rank }, plan.experiments.length);
  const running = new Map<number, Execution>();
  // Aborted on interrupt and on internal errors: hooks and probes see it.
  const stopAll = new AbortController();
  const signal = stopAll.signal;
  const physical = new PhysicalAdmission(plan, {
    gmax: options.ramp?.settings.to ?? cap, // REUSE-1: a ramp's ceiling
    clock,
    emit,
    ...(options.sandbox ? { options: options.sandbox } : {}),
  });
  const { lifecycles, recovery } = createLifecycles(plan, {
    options,
    signal,
    onSetupFailed: (index) => stops.setupFailed(index),
  });
  const judge = new JudgeGate(plan, options.judge, { clock, signal, emit });
  const builds = new BuildGate(options.builds, { clock, signal });
  const shared = { waiters, running, lifecycles, physical };
  const stops = new StopControl(plan, {
    ...shared,
    clock,
    emit,
    stopAll,
    groups: physical.groups,
    rules: {
      ...(options.bailAfter !== undefined ? { bailAfter: options.bailAfter } : {}),
      ...(options.blocked ? { blocked: options.blocked } : {}),
    },
  });
  const ramp: RampController | null = options.ramp
    ? createRamp(options, emit, (): Admission => admission, waiters)
    : null;
  const admission: Admission = new Admission(plan, {
    ...shared,
    cap,
    ramp,
    keys: rank,
    builds,
    judge,
    stops,
    execution: { ...options, emit, runAttempt, physical },
    backpressure: options.backpressure,
    retain: options.retain,
  });
  const runnable = order;
  return {
    runnable,
    waiters,
    running,
    physical,
    judge,
    builds,
    lifecycles,
    recovery,
    stops,
    admission,
    ramp,
  };
}

/**
 * The ramp's controller over the global gate. Its windows start at the first grant (RAMP-4),
 * and every change of the held slots is accounted for saturation (RAMP-5).
 */
function createRamp(
  options: RunPlanOptions,
  emit: RunEventSink,
  admission: () => Admission,
  waiters: WaiterIndex,
): RampController {
  const { settings, readControl, publish } = options.ramp!;
  return new RampController(settings, {
    clock: options.clock,
    emit,
    setCap: (cap) => admission().global.setCapacity(cap),
    held: () => admission().global.held,
    queued: () => waiters.size,
    ...(readControl ? { readControl } : {}),
    ...(publish ? { publish } : {}),
  });
}
