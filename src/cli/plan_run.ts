/** Planning for `exp`: selection, identity, carry decisions, plan and the global cap. */
import type { ConfigDefinition } from "../config/mod.ts";
import type { DiscoveredGroup } from "../discovery/mod.ts";
import { buildPlan, type Plan, select } from "../plan/mod.ts";
import {
  carryDecider,
  configHashOf,
  executionDigestOf,
  FingerprintCache,
  loadCandidates,
  RecordReader,
  slotIdOf,
} from "../record/mod.ts";
import { capAnnotation, type ResolvedCap, resolveGlobalCap } from "../scheduler/mod.ts";
import type { ExpOptions } from "./exp_options.ts";
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
  readonly identity: PlanIdentity;
  readonly emptyExperimentIds: readonly string[];
  /** Unpublished Run directories the readers ignored (REC-10). */
  readonly unpublished: readonly string[];
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
  const identity = await identityOf(
    project,
    selection.experiments.map((s) => ({ experiment: s.experiment, evals: s.evals })),
    discovered.groups,
  );
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
  const plan = buildPlan(
    selection,
    settingsOf(options, config),
    carryDecider(candidates, current, options.rerun),
  );
  const cap = resolveGlobalCap({
    ...(options.maxConcurrency !== undefined ? { flag: options.maxConcurrency } : {}),
    ...(config.maxConcurrency !== undefined ? { config: config.maxConcurrency } : {}),
    providers: [],
  });
  return {
    plan,
    cap,
    capAnnotation: capAnnotation(cap),
    identity,
    emptyExperimentIds: selection.emptyExperimentIds,
    unpublished: (await reader.scan()).unpublished,
  };
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

async function identityOf(
  project: LoadedProject,
  selected: readonly {
    experiment: Parameters<typeof configHashOf>[0];
    evals: readonly { id: string; groupId?: string }[];
  }[],
  groups: readonly DiscoveredGroup[],
): Promise<PlanIdentity> {
  const cache = new FingerprintCache(project.root);
  const configHash = new Map<string, string>();
  const inputFingerprint = new Map<string, string>();
  for (const { experiment, evals } of selected) {
    configHash.set(experiment.id, configHashOf(experiment));
    for (const e of evals) {
      if (inputFingerprint.has(e.id)) continue;
      const discovered = project.discovered.evals.find((d) => d.id === e.id)!;
      const group = groups.find((g) => g.id === discovered.groupId);
      inputFingerprint.set(e.id, await cache.fingerprint(discovered, group));
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
    executionIdentityDigest: executionDigestOf(configHash, inputFingerprint),
  };
}
