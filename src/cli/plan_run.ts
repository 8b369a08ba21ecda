/**
 * Planning for `exp`: selection, identity, carry decisions, sandbox pairing and physical plans,
 * the plan and the global cap.
 */
import { errorMessage, realClock, type RunEventSink } from "../_shared/mod.ts";
import { SandboxRuntime } from "../attempt/mod.ts";
import {
  machineSlotLimits,
  type ProcessIdentity,
  type ProcessProbe,
  stateDirOf,
} from "../coordination/mod.ts";
import type { ConfigDefinition } from "../config/mod.ts";
import type { DiscoveredExperiment } from "../discovery/mod.ts";
import { resolveAgent } from "../agents/mod.ts";
import {
  buildPlan,
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
  isSandboxError,
  layerIdentity,
  localTmpDir,
  ownerIdentityOf,
  sweepLocalOrphans,
} from "../sandbox/mod.ts";
import {
  carryDecider,
  configHashOf,
  executionDigestOf,
  FingerprintCache,
  loadCandidates,
  RecordReader,
  slotIdOf,
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
import type { ExpOptions } from "./exp_options.ts";
import type { Io } from "./io.ts";
import type { LoadedProject } from "./project.ts";

/** Identity of every selected (experiment, eval). */
export interface PlanIdentity {
  readonly configHash: ReadonlyMap<string, string>;
  readonly inputFingerprint: ReadonlyMap<string, string>;
}

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
  /** Providers in use whose machine sandbox budget is below G (MSB-7), for PLAN. */
  readonly machineBudgets: readonly { readonly provider: string; readonly limit: number }[];
}

/** Builds the complete plan before anything is dispatched (PLAN-1). */
export async function planRun(
  project: LoadedProject,
  options: ExpOptions,
  recordRoot: string,
): Promise<PlannedRun> {
  const { discovered, config } = project;
  const selection = select(discovered.experiments, discovered.evals, {
    ...(options.selector !== undefined ? { selector: options.selector } : {}),
    evalPrefixes: options.evalPrefixes,
    tags: options.tags,
  });
  const identity = await identityOf(project, selection.experiments);
  const reader = new RecordReader(recordRoot);
  const pairs = selection.experiments.flatMap((s) =>
    s.evals.map((e) => ({ experimentId: s.experiment.id, evalId: e.id }))
  );
  const candidates = await loadCandidates(reader, pairs);
  const current = {
    configHash: (experimentId: string) => identity.configHash.get(experimentId)!,
    inputFingerprint: (evalId: string) => identity.inputFingerprint.get(evalId)!,
    digest: (experimentId: string, evalId: string) =>
      slotIdentity(identity, { experimentId, evalId, ordinal: 0 }).executionIdentityDigest,
  };
  const physical = await physicalSandboxes(selection, project);
  const plan = buildPlan(
    selection,
    settingsOf(options, config),
    carryDecider(candidates, current, options.rerun),
    physical,
  );
  const cap = resolvePlanCap(plan, {
    ...(options.maxConcurrency !== undefined ? { flag: options.maxConcurrency } : {}),
    ...(config.maxConcurrency !== undefined ? { config: config.maxConcurrency } : {}),
    lookup: providerLookup(plan),
  });
  return {
    plan,
    cap,
    capAnnotation: capAnnotation(cap),
    identity,
    emptyExperimentIds: selection.emptyExperimentIds,
    unpublished: (await reader.scan()).unpublished,
    machineBudgets: machineBudgetsBelow(plan, config, cap.cap),
  };
}

/** MSB-7: the providers of runnable sandbox slots whose `maxSandboxes` is below G. */
function machineBudgetsBelow(
  plan: Plan,
  config: ConfigDefinition,
  g: number,
): { provider: string; limit: number }[] {
  const limits = machineSlotLimits(config.maxSandboxes, { cpus: navigator.hardwareConcurrency });
  const providers = new Set<string>();
  for (const slot of plan.slots) {
    if (slot.carry.action === "run" && slot.sandbox) providers.add(slot.sandbox.provider);
  }
  return [...providers]
    .filter((provider) => limits[provider] !== undefined && limits[provider]! < g)
    .map((provider) => ({ provider, limit: limits[provider]! }));
}

/**
 * Resolves the physical sandbox of every pair through the provider registry (sandboxes.md rules
 * 2, 7, 21): provider plans do no daemon I/O, so `--dry` may do this too. Problems come back to
 * be reported with the pairing conflicts (rule 4).
 */
async function physicalSandboxes(
  selection: Selection,
  project: LoadedProject,
): Promise<{ sandboxes: Map<string, PlannedSandbox>; problems: PairingProblem[] }> {
  // Plans need no credentials: providers are created with the host environment at run time.
  const registry = createProviderRegistry({ hostEnv: {}, clock: realClock });
  const resolve = createPhysicalResolver({
    registry,
    projectRoot: project.root,
    signal: new AbortController().signal,
  });
  const sandboxes = new Map<string, PlannedSandbox>();
  const problems = new Map<string, PairingProblem>();
  for (const pair of sandboxPairs(selection, project.discovered.groups)) {
    const experiment = selection.experiments[pair.experimentIndex]!.experiment;
    const agent = resolveAgent(experiment.definition.agent);
    try {
      const found = await resolve({
        layers: pair.layers,
        reuse: pair.reuse,
        evalId: pair.evalId,
        groupId: pair.groupId,
        agentIdentity: agentInstallIdentity({
          name: experiment.definition.agent.name,
          identity: agent?.identity ?? null,
        }),
      });
      sandboxes.set(pair.key, Object.freeze({ ...pair, ...found }));
    } catch (error) {
      if (!isSandboxError(error)) throw error;
      const message = `${experiment.file}: ${errorMessage(error)}`;
      problems.set(message, {
        code: error.code,
        message,
        hint: "fix the sandbox options of the experiment, eval or eval group",
      });
    }
  }
  return { sandboxes, problems: [...problems.values()] };
}

/** CAP-2 defaults by provider name: built-in ones, else what the plan's custom providers say. */
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

/**
 * Configuration hashes and input fingerprints of the selected pairs (REC-4), sandbox layers
 * included; `show` computes the current identity the same way.
 */
export async function identityOf(
  project: LoadedProject,
  selected: readonly {
    readonly experiment: DiscoveredExperiment;
    readonly evals: readonly { readonly id: string }[];
  }[],
): Promise<PlanIdentity> {
  const cache = new FingerprintCache(project.root);
  const evalsById = new Map(project.discovered.evals.map((e) => [e.id, e]));
  const groupsById = new Map(project.discovered.groups.map((g) => [g.id, g]));
  const configHash = new Map<string, string>();
  const inputFingerprint = new Map<string, string>();
  for (const { experiment, evals } of selected) {
    const sandbox = await layerIdentity(experiment.definition.sandbox);
    configHash.set(experiment.id, configHashOf(experiment, { sandbox }));
    for (const { id } of evals) {
      if (inputFingerprint.has(id)) continue;
      const discovered = evalsById.get(id)!;
      const group = discovered.groupId === undefined
        ? undefined
        : groupsById.get(discovered.groupId);
      // Most evals declare no layer: no identity to await.
      const sandbox = discovered.definition.sandbox;
      const groupSandbox = group?.definition.sandbox;
      inputFingerprint.set(
        id,
        await cache.fingerprint(discovered, group, {
          sandbox: sandbox === undefined ? null : await layerIdentity(sandbox),
          groupSandbox: groupSandbox === undefined ? null : await layerIdentity(groupSandbox),
        }),
      );
    }
  }
  return { configHash, inputFingerprint };
}

/** The identity fields of one planned slot. */
export interface SlotIdentity {
  readonly slotId: string;
  readonly configHash: string;
  readonly inputFingerprint: string;
  readonly executionIdentityDigest: string;
}

/** SlotId and execution identity digest of one slot. */
export function slotIdentity(
  identity: PlanIdentity,
  slot: { readonly experimentId: string; readonly evalId: string; readonly ordinal: number },
): SlotIdentity {
  const { experimentId, evalId, ordinal } = slot;
  const configHash = identity.configHash.get(experimentId)!;
  const inputFingerprint = identity.inputFingerprint.get(evalId)!;
  return {
    slotId: slotIdOf(evalId, ordinal),
    configHash,
    inputFingerprint,
    executionIdentityDigest: digestOf(configHash, inputFingerprint),
  };
}

/**
 * The execution identity digest, remembered for the last pair: the ordinals of a pair come one
 * after another, so they share one hash computation and one string.
 */
let lastDigest = { configHash: "", inputFingerprint: "", digest: "" };

function digestOf(configHash: string, inputFingerprint: string): string {
  const last = lastDigest;
  if (last.configHash === configHash && last.inputFingerprint === inputFingerprint) {
    return last.digest;
  }
  const digest = executionDigestOf(configHash, inputFingerprint);
  lastDigest = { configHash, inputFingerprint, digest };
  return digest;
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
  },
): Promise<SandboxWiring> {
  const { planned, project, runIds, identity, probe } = input;
  const uid = Deno.uid();
  await sweepLocalOrphans({
    tmpDir: localTmpDir(io.env),
    host: io.hostname,
    probe,
    ...(uid !== null ? { uid } : {}),
  }).catch(() => undefined); // a failed sweep never blocks a run; `sandbox prune` reports it
  const hostEnv = { ...project.env };
  if (!planned.plan.slots.some((s) => s.sandbox !== undefined)) {
    return { runner: { hostEnv }, scheduler: () => ({}) };
  }
  const registry = createProviderRegistry({ hostEnv, clock: io.clock });
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
    limits: machineSlotLimits(project.config.maxSandboxes, {
      cpus: navigator.hardwareConcurrency,
    }),
    owner: { pid: io.pid, host: io.hostname },
    clock: io.clock,
  });
  return {
    runner: { sandboxes: runtime, hostEnv },
    scheduler: (emit) => ({
      sandbox: { machineSlots, createsPerSecond: project.config.createsPerSecond },
      builds: {
        maxConcurrency: project.config.maxBuildConcurrency,
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
