/**
 * Runs one sandbox-agent Attempt through the real runner on the real `local` provider: a private
 * roots directory, a planned sandbox resolved like `exp` does, a fake control and the real clock.
 */
import type { AttemptResult } from "../../src/_shared/mod.ts";
import { type Clock, realClock } from "../../src/_shared/clock.ts";
import type { Agent } from "../../src/agents/mod.ts";
import { createAttemptRunner, SandboxRuntime } from "../../src/attempt/mod.ts";
import {
  defineExperiment,
  type EvalDefinition,
  type EvalKind,
  type ExperimentOptions,
} from "../../src/discovery/mod.ts";
import type { PlannedSandbox, PlannedSlot } from "../../src/plan/mod.ts";
import {
  createLocalProvider,
  createPhysicalResolver,
  createProviderRegistry,
  type ProviderRegistry,
  type SandboxLayer,
} from "../../src/sandbox/mod.ts";
import { createFakeControl, type FakeControl, planFor } from "../_fakes/control.ts";
import { createSeededRandom } from "../_fakes/random.ts";
import { REPO_ROOT } from "./_run.ts";

/** A roots directory for local sandboxes, removed on dispose. */
export interface LocalRoots extends AsyncDisposable {
  readonly tmpDir: string;
  readonly registry: ProviderRegistry;
  /** Names of the roots left in `tmpDir`. */
  left(): Promise<string[]>;
}

/** Creates a private roots directory and a registry whose `local` provider uses it. */
export async function localRoots(hostEnv: Record<string, string> = {
  PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
}): Promise<LocalRoots> {
  const tmpDir = await Deno.realPath(await Deno.makeTempDir({ prefix: "niceeval-attempt-sb-" }));
  const registry = createProviderRegistry({ hostEnv, clock: realClock }, {
    local: () =>
      Promise.resolve(createLocalProvider({ hostEnv, clock: realClock, tmpDir }) as never),
  });
  return {
    tmpDir,
    registry,
    left: async () => (await Array.fromAsync(Deno.readDir(tmpDir))).map((e) => e.name).sort(),
    [Symbol.asyncDispose]: () => Deno.remove(tmpDir, { recursive: true }),
  };
}

/** Options of {@link runSandboxEval}. */
export interface SandboxEvalOptions {
  readonly agent: Agent;
  readonly template: SandboxLayer;
  readonly evalLayer?: SandboxLayer;
  readonly experiment?: Omit<ExperimentOptions, "agent" | "sandbox">;
  readonly control?: FakeControl;
  readonly hostEnv?: Record<string, string>;
  /** Fixtures must lie inside it (rule 7). @default {REPO_ROOT} */
  readonly projectRoot?: string;
  /** The runner's clock (grace, cleanup bounds); the provider keeps the real one. */
  readonly clock?: Clock;
}

/** Runs one Attempt of `evalDef` in a fresh local sandbox and returns its result. */
export async function runSandboxEval(
  roots: LocalRoots,
  evalDef: EvalDefinition<EvalKind, never>,
  o: SandboxEvalOptions,
): Promise<AttemptResult> {
  const experiment = defineExperiment({ agent: o.agent, sandbox: o.template, ...o.experiment });
  const { plan, slot } = planFor(experiment, evalDef, { file: "tests/attempt/sandbox_test.ts" });
  const resolve = createPhysicalResolver({
    registry: roots.registry,
    projectRoot: o.projectRoot ?? REPO_ROOT,
    signal: new AbortController().signal,
  });
  const layers = [
    { layer: o.template, owner: slot.experimentId, side: "experiment" as const },
    ...(o.evalLayer ? [{ layer: o.evalLayer, owner: slot.evalId, side: "eval" as const }] : []),
  ];
  const found = await resolve({
    layers,
    reuse: "fresh",
    evalId: slot.evalId,
    groupId: null,
    agentIdentity: "test",
  });
  const sandbox: PlannedSandbox = {
    key: "0\u0000" + slot.evalId,
    experimentIndex: 0,
    experimentId: slot.experimentId,
    evalId: slot.evalId,
    groupId: null,
    layers,
    reuse: "fresh",
    onUnavailable: null,
    ...found,
  };
  const boxed: PlannedSlot = { ...slot, sandbox };
  const boxedPlan = { ...plan, slots: [boxed] };
  const random = createSeededRandom(5);
  const clock = o.clock ?? realClock;
  const runner = createAttemptRunner({
    plan: boxedPlan,
    root: REPO_ROOT,
    clock,
    random,
    pricing: {},
    hostEnv: o.hostEnv ?? {},
    sandboxes: new SandboxRuntime({
      registry: roots.registry,
      owner: { host: Deno.hostname(), pid: Deno.pid, processStart: "unknown" },
      runIds: ["run-test"],
      clock,
      random,
      projectRoot: REPO_ROOT,
    }),
  });
  return await runner(boxed, o.control ?? createFakeControl());
}
