/**
 * Planning for `exp`: wires selection, identity, carry decisions, physical sandboxes, the plan and
 * the global cap from their domains; `openSandboxes` wires the sandbox side of a run.
 */
import { errorMessage, realClock, type RunEventSink } from "../_shared/mod.ts";
import { SandboxRuntime } from "../attempt/mod.ts";
import {
  isRecordRootBusy,
  machineSlotLimits,
  type ProcessIdentity,
  type ProcessProbe,
  stateDirOf,
} from "../coordination/mod.ts";
import type { ConfigDefinition } from "../config/mod.ts";
import type { DiscoveredExperiment } from "../discovery/mod.ts";
import { checkPrecondition, resolveAgent } from "../agents/mod.ts";
import {
  buildPlan,
  type CarryDecider,
  type PairingProblem,
  type Plan,
  type PlannedSandbox,
  sandboxPairs,
  select,
  type Selection,
} from "../plan/mod.ts";
import {
  agentInstallIdentity,
  artifactPreparer,
  createPhysicalResolver,
  createProviderRegistry,
  layerIdentity,
  localTmpDir,
  type MachineBudget,
  machineBudgetsBelow,
  ownerIdentityOf,
  type ProviderRegistry,
  resolvePhysicalPairs,
  sweepLocalOrphans,
} from "../sandbox/mod.ts";
import {
  carryDecider,
  loadCandidates,
  type PlanIdentity,
  planIdentityOf,
  RecordReader,
  type SalvageOutcome,
  salvageRuns,
  slotIdentifier,
} from "../record/mod.ts";
import {
  capAnnotation,
  fileMachineSlots,
  PROVIDER_DEFAULTS,
  type ProviderDefaults,
  type ResolvedCap,
  resolvePlanCap,
  type RunPlanOptions,
} from "../scheduler/mod.ts";
import { runDockerChecks } from "./docker_checks.ts";
import { processHeapGovernor } from "./heap_governor.ts";
import type { ExpOptions } from "./exp_options.ts";
import { narrowToLastFailed } from "./last_failed.ts";
import { type PlannedRamp, resolveRamp } from "./ramp_options.ts";
import type { Io } from "./io.ts";
import type { LoadedProject } from "./project.ts";

/** The plan with everything the run and the reporters need. */
export interface PlannedRun {
  readonly plan: Plan;
  readonly cap: ResolvedCap;
  readonly capAnnotation: string;
  /**
   * Configuration hashes and input fingerprints; `null` once `openInvocation` has built the Run
   * specs, which hold every identity the Record needs (a 10,000-eval run frees its map).
   */
  identity: PlanIdentity | null;
  readonly emptyExperimentIds: readonly string[];
  /** Unpublished Run directories the readers ignored (REC-10). */
  readonly unpublished: readonly string[];
  /** Runs left by dead processes that salvage sealed (or, `--dry`, would seal). */
  readonly salvage: readonly SalvageOutcome[];
  /** Providers in use whose machine sandbox budget is below G (MSB-7), for PLAN. */
  readonly machineBudgets: readonly MachineBudget[];
  /** The adaptive ramp, when the run ramps; `cap` is then its `from` (RAMP-3). */
  readonly ramp: PlannedRamp | null;
  /** `--max-concurrency` turned a config ramp off (`ramp-disabled`, RAMP-2). */
  readonly rampDisabled: boolean;
}

/** What {@link planRun} plans. */
interface PlanRunInput {
  readonly project: LoadedProject;
  readonly options: ExpOptions;
  readonly recordRoot: string;
}

/** Builds the complete plan before anything is dispatched (PLAN-1). */
export async function planRun(io: Io, input: PlanRunInput): Promise<PlannedRun> {
  // Planning a large project leaves garbage in every phase: the heap governor looks between them.
  const heap = await processHeapGovernor();
  heap.check();
  const { project, options, recordRoot } = input;
  const { config } = project;
  const selected = selectionOf(project, options);
  const salvage = await salvageOf(io, recordRoot, options.dry);
  const reader = new RecordReader(recordRoot);
  const selection = options.lastFailed
    ? await narrowToLastFailed(reader, { project, options, selection: selected })
    : selected;
  heap.check();
  const identity = await identityOf(project, selection.experiments);
  heap.check();
  const decideCarry = await carryOf(reader, { selection, identity, rerun: options.rerun });
  const physical = await physicalSandboxes(io, { selection, project });
  heap.check();
  const plan = buildPlan(selection, settingsOf(options, config), decideCarry, physical);
  heap.check();
  const { ramp, disabled } = resolveRamp(options, config, {
    noRamp: options.noRamp,
    projectRoot: project.root,
  });
  const cap: ResolvedCap = ramp
    ? {
      cap: ramp.from,
      source: ramp.source === "flag" ? "ramp-flag" : "ramp-config",
      provider: null,
    }
    : capOf(plan, options, config);
  return {
    ramp,
    rampDisabled: disabled,
    plan,
    cap,
    capAnnotation: capAnnotation(cap),
    identity,
    emptyExperimentIds: selection.emptyExperimentIds,
    unpublished: (await reader.scan()).unpublished,
    salvage,
    machineBudgets: machineBudgetsBelow(plan.slots, {
      maxSandboxes: config.maxSandboxes,
      cpus: io.cpus,
      cap: ramp?.to ?? cap.cap, // a ramp may reach its ceiling
    }),
  };
}

/**
 * Salvages the Runs that dead processes left unpublished, before carry reads the Record (the
 * caller holds the root lock). `--dry` only counts, and only when no process holds the lock: the
 * unpublished Runs of a live run are in progress, not left behind.
 */
async function salvageOf(
  io: Io,
  recordRoot: string,
  dry: boolean,
): Promise<readonly SalvageOutcome[]> {
  if (dry && await isRecordRootBusy(recordRoot, stateDirOf(io.env))) return [];
  return await salvageRuns(new RecordReader(recordRoot), {
    clock: io.clock,
    redactor: io.redactor,
    dryRun: dry,
  });
}

/** The experiments and evals that the flags select (PLAN-1). */
function selectionOf(project: LoadedProject, options: ExpOptions): Selection {
  const { discovered } = project;
  return select(discovered.experiments, discovered.evals, {
    ...(options.selector !== undefined ? { selector: options.selector } : {}),
    evalPrefixes: options.evalPrefixes,
    tags: options.tags,
    ...(options.grep !== undefined ? { grep: options.grep } : {}),
  });
}

/** The global cap G: flag, then config, then the plan's provider defaults (CAP-2). */
function capOf(plan: Plan, options: ExpOptions, config: ConfigDefinition): ResolvedCap {
  return resolvePlanCap(plan, {
    ...(options.maxConcurrency !== undefined ? { flag: options.maxConcurrency } : {}),
    ...(config.maxConcurrency !== undefined ? { config: config.maxConcurrency } : {}),
    lookup: providerLookup(plan),
  });
}

/**
 * Configuration hashes and input fingerprints of the selected pairs (REC-4), with the sandbox
 * domain's layer identities; `show` computes the current identity the same way.
 */
export function identityOf(
  project: LoadedProject,
  selected: readonly {
    readonly experiment: DiscoveredExperiment;
    readonly evals: readonly { readonly id: string }[];
  }[],
): Promise<PlanIdentity> {
  return planIdentityOf(selected, {
    root: project.root,
    evals: project.discovered.evals,
    groups: project.discovered.groups,
    layerIdentity,
  });
}

/** Carry decisions from the stored candidates of the selected pairs and their current identity. */
async function carryOf(
  reader: RecordReader,
  input: { selection: Selection; identity: PlanIdentity; rerun: ExpOptions["rerun"] },
): Promise<CarryDecider> {
  const { selection, identity } = input;
  const pairs = selection.experiments.flatMap((s) =>
    s.evals.map((e) => ({ experimentId: s.experiment.id, evalId: e.id }))
  );
  const candidates = await loadCandidates(reader, pairs);
  const identify = slotIdentifier(identity);
  const current = {
    configHash: (experimentId: string) => identity.configHash.get(experimentId)!,
    inputFingerprint: (evalId: string) => identity.inputFingerprint.get(evalId)!,
    digest: (experimentId: string, evalId: string) =>
      identify({ experimentId, evalId, ordinal: 0 }).executionIdentityDigest,
  };
  return carryDecider(candidates, current, input.rerun);
}

/**
 * Resolves the physical sandbox of every pair through the provider registry (sandboxes.md rules
 * 2, 7, 21): provider plans do no daemon I/O, so `--dry` may do this too. Problems come back to
 * be reported with the pairing conflicts (rule 4).
 */
function physicalSandboxes(
  io: Io,
  input: { selection: Selection; project: LoadedProject },
): Promise<{ sandboxes: Map<string, PlannedSandbox>; problems: PairingProblem[] }> {
  const { selection, project } = input;
  // Plans need no credentials: providers are created with the host environment at run time.
  const registry = createProviderRegistry({ hostEnv: {}, clock: io.clock });
  const experimentOf = (pair: { experimentIndex: number }) =>
    selection.experiments[pair.experimentIndex]!.experiment;
  return resolvePhysicalPairs(sandboxPairs(selection, project.discovered.groups), {
    resolve: createPhysicalResolver({
      registry,
      projectRoot: project.root,
      signal: new AbortController().signal,
    }),
    inputOf: (pair) => {
      const experiment = experimentOf(pair);
      const agent = resolveAgent(experiment.definition.agent);
      return {
        layers: pair.layers,
        reuse: pair.reuse,
        evalId: pair.evalId,
        groupId: pair.groupId,
        agentIdentity: agentInstallIdentity({
          name: experiment.definition.agent.name,
          identity: agent?.identity ?? null,
        }),
      };
    },
    fileOf: (pair) => experimentOf(pair).file,
  });
}

/** Looks up provider defaults by name: built-in, else the plan's custom providers (CAP-2). */
function providerLookup(plan: Plan): (name: string) => ProviderDefaults | undefined {
  const custom = new Map<string, ProviderDefaults>();
  for (const slot of plan.slots) {
    const s = slot.sandbox;
    if (!s || custom.has(s.provider)) continue;
    custom.set(s.provider, {
      name: s.provider,
      defaultConcurrency: s.defaultConcurrency,
      exclusive: s.exclusive,
    });
  }
  return (name) => PROVIDER_DEFAULTS[name] ?? custom.get(name);
}

function settingsOf(options: ExpOptions, config: ConfigDefinition) {
  return {
    rerun: options.rerun,
    ...(options.attempts !== undefined ? { attempts: options.attempts } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.earlyExit !== undefined ? { earlyExit: options.earlyExit } : {}),
    ...(options.budget !== undefined ? { budget: options.budget } : {}),
    ...(config.timeoutMs !== undefined ? { configTimeoutMs: config.timeoutMs } : {}),
  };
}

/** What `exp` hands the attempt runner and `runPlan` for sandbox Attempts. */
export interface SandboxWiring {
  /** Spread into `createAttemptRunner` options. */
  readonly runner: {
    readonly sandboxes?: SandboxRuntime;
    readonly hostEnv: Record<string, string>;
  };
  /** Spread into `runPlan` options; `emit` receives `sandbox-reuse-cleanup-failed`. */
  scheduler(emit: RunEventSink): Pick<RunPlanOptions, "sandbox" | "beforeTeardown" | "builds">;
}

/**
 * Prepares the sandbox side of a run (not `--dry`): removes local sandboxes of dead owners (rule
 * 97), stamps sandboxes with this process's identity (read once by the caller, rule 92), and wires
 * providers, pools, machine slots (MSB), create pacing and image/template builds (CHAIN-2).
 */
export async function openSandboxes(
  io: Io,
  input: {
    planned: PlannedRun;
    project: LoadedProject;
    runIds: readonly string[];
    identity: ProcessIdentity;
    probe: ProcessProbe;
    /** `--max-build-concurrency`; overrides config `maxBuildConcurrency` (cli.md §3.2). */
    maxBuildConcurrency?: number;
  },
): Promise<SandboxWiring> {
  const { planned, project, runIds, identity, probe } = input;
  await sweepLocalOrphans({
    tmpDir: localTmpDir(io.env),
    host: io.hostname,
    probe,
    ...(io.uid !== null ? { uid: io.uid } : {}),
  }).catch(() => undefined); // a failed sweep never blocks a run; `sandbox prune` reports it
  const hostEnv = { ...project.env };
  if (!planned.plan.slots.some((s) => s.sandbox !== undefined)) {
    return { runner: { hostEnv }, scheduler: () => ({}) };
  }
  const dockerChecks = await runDockerChecks(io, {
    plan: planned.plan,
    cap: planned.cap.cap,
    maxSandboxes: project.config.maxSandboxes,
    hostEnv,
    probe,
  });
  const registry = createProviderRegistry({
    hostEnv,
    clock: io.clock,
    user: io.user,
    dockerNetworkPermits: dockerChecks.networkPermits,
  });
  const runtime = new SandboxRuntime({
    registry,
    owner: ownerIdentityOf(identity),
    runIds,
    clock: io.clock,
    random: io.random,
    force: io.forceInterrupt,
    projectRoot: project.root,
  });
  const machineSlots = fileMachineSlots({
    stateDir: stateDirOf(io.env),
    limits: machineSlotLimits(project.config.maxSandboxes, { cpus: io.cpus }),
    owner: { pid: io.pid, host: io.hostname },
    runIdOf: (experimentId) => {
      const index = planned.plan.experiments.findIndex((e) => e.id === experimentId);
      return index < 0 ? undefined : runIds[index];
    },
    clock: io.clock,
  });
  return {
    runner: { sandboxes: runtime, hostEnv },
    scheduler: (emit) => ({
      sandbox: { machineSlots, createsPerSecond: project.config.createsPerSecond },
      builds: {
        maxConcurrency: input.maxBuildConcurrency ?? project.config.maxBuildConcurrency,
        prepare: artifactPreparer(registry),
      },
      beforeTeardown: async (experimentId) => {
        const failures = await runtime.stopPools(experimentId);
        if (failures.length === 0) return true;
        emit({
          type: "diagnostic",
          at: io.clock.now(),
          level: "warning",
          code: "sandbox-reuse-cleanup-failed",
          message: `Cannot stop the reuse pools of ${experimentId}: ${failures[0]!.message}`,
          experimentId,
          evalId: null,
          data: { failures: failures.length },
          persist: true,
        });
        return false;
      },
    }),
  };
}

/**
 * Checks the agent precondition of every experiment that has Attempts to run, once, before
 * dispatch (docs/bail.md), then the precondition of each built-in provider its runnable slots use
 * (a missing credential, docs/e2b.md); not under `--dry`. Returns the experiments that must start
 * none. `registry` defaults to the built-in providers over `env`.
 */
export async function failedPreconditions(
  plan: Plan,
  env: Readonly<Record<string, string>>,
  o: { registry?: ProviderRegistry } = {},
): Promise<NonNullable<RunPlanOptions["blocked"]>> {
  const blocked = new Map<string, { message: string; hint: string | null }>();
  const registry = o.registry ?? createProviderRegistry({ hostEnv: { ...env }, clock: realClock });
  const providers = new Map<string, Promise<{ message: string; hint: string | null } | null>>();
  for (const experiment of plan.experiments) {
    if (experiment.runnable === 0) continue;
    const def = experiment.discovered.definition;
    const failure = await checkPrecondition(def.agent, {
      experimentId: experiment.id,
      model: def.model,
      env: (name) => env[name],
    });
    if (failure) {
      blocked.set(experiment.id, failure);
      continue;
    }
    for (const name of runnableProviders(plan, experiment.index)) {
      if (!registry.names().includes(name)) continue; // custom providers declare none
      if (!providers.has(name)) providers.set(name, providerPrecondition(registry, name));
      const found = await providers.get(name)!;
      if (found) {
        blocked.set(experiment.id, found);
        break;
      }
    }
  }
  return blocked;
}

/** The providers of an experiment's slots that will run (not carried), in slot order. */
function runnableProviders(plan: Plan, experimentIndex: number): string[] {
  const names = new Set<string>();
  for (const slot of plan.slots) {
    if (slot.experimentIndex !== experimentIndex || slot.carry.action !== "run") continue;
    if (slot.sandbox) names.add(slot.sandbox.provider);
  }
  return [...names];
}

/** One built-in provider's precondition as a halt message (`provider "<name>" cannot run: …`). */
async function providerPrecondition(
  registry: ProviderRegistry,
  name: string,
): Promise<{ message: string; hint: string | null } | null> {
  const prefix = `provider "${name}" cannot run`;
  try {
    const found = (await registry.get(name)).precondition?.() ?? null;
    if (found === null) return null;
    return {
      message: `${prefix}: ${found.message}`,
      hint: typeof found.hint === "string" && found.hint !== "" ? found.hint : null,
    };
  } catch (error) {
    return { message: `${prefix}: its precondition threw: ${errorMessage(error)}`, hint: null };
  }
}
