/**
 * Runs sandbox Attempts in process ([T] harness of scenarios.md): real planning (pairing, physical
 * resolution through the registry), the real scheduler and the real attempt runner with a
 * `SandboxRuntime`, over the fake provider wrapped in `defineSandbox`, all on a fake clock. Eval
 * bodies hold until the test releases them, or settle after `durationMs` of fake time.
 */
import { sleep } from "../../src/_shared/mod.ts";
import type { SlotOutcome } from "../../src/_shared/mod.ts";
import { completeEvidenceCoverage, defineAgent } from "../../src/agents/mod.ts";
import { abandonedResult, createAttemptRunner, SandboxRuntime } from "../../src/attempt/mod.ts";
import type { TestContext } from "../../src/discovery/mod.ts";
import {
  defineEval,
  defineEvalGroup,
  defineExperiment,
  type DiscoveredEval,
  type DiscoveredExperiment,
  type DiscoveredGroup,
  type EvalDefinition,
} from "../../src/discovery/mod.ts";
import { isTrue } from "../../src/expect/mod.ts";
import {
  buildPlan,
  type CarryDecision,
  type Plan,
  type PlannedSandbox,
  sandboxPairs,
  select,
} from "../../src/plan/mod.ts";
import {
  artifactPreparer,
  createPhysicalResolver,
  createProviderRegistry,
  defineSandbox,
  type ProviderLoader,
  type SandboxLayer,
} from "../../src/sandbox/mod.ts";
import {
  createScheduler,
  type MachineSlotSource,
  type Scheduler,
} from "../../src/scheduler/mod.ts";
import { EventLog } from "../_fakes/attempt.ts";
import { createFakeClock, type FakeClock } from "../_fakes/clock.ts";
import {
  createFakeProvider,
  type FakeProvider,
  type FakeProviderOptions,
} from "../_fakes/provider.ts";
import { createSeededRandom } from "../_fakes/random.ts";

/** One eval of a sandbox project. */
export interface SandboxEvalSpec {
  readonly id: string;
  readonly groupId?: string;
  /** The eval's own layer. */
  readonly sandbox?: SandboxLayer;
  /** Fake ms the body takes; without it the body holds until `release`. */
  readonly durationMs?: number;
  readonly timeoutMs?: number;
}

/** One experiment of a sandbox project; its template is the fake provider. */
export interface SandboxExperimentSpec {
  readonly id: string;
  readonly evals?: readonly string[];
  readonly attempts?: number;
  readonly maxConcurrency?: number;
  readonly sandboxReuse?: boolean;
  readonly timeoutMs?: number;
  /** Another template than the harness's fake one (or none: a direct agent). */
  readonly sandbox?: SandboxLayer | null;
  readonly direct?: boolean;
  /** Carried ordinals, `"<evalId>#<ordinal>"`. */
  readonly carried?: readonly string[];
}

/** Everything a sandbox run is built from. */
export interface SandboxRunSpec {
  readonly cap: number;
  readonly evals: readonly SandboxEvalSpec[];
  readonly experiments: readonly SandboxExperimentSpec[];
  readonly groups?: readonly {
    readonly id: string;
    readonly onUnavailable: "stop-group" | "replace-sandbox";
    /** Members in the order given to `defineEvalGroup`. */
    readonly members: readonly string[];
    /** The group's own (template-less) layer. */
    readonly sandbox?: SandboxLayer;
  }[];
  /** The fake provider (name `fake` unless given). */
  readonly provider?: Omit<FakeProviderOptions, "clock">;
  /** `defineSandbox` options of the template. */
  readonly exclusive?: boolean;
  readonly recommendedConcurrency?: number;
  readonly machineSlots?: MachineSlotSource;
  readonly createsPerSecond?: Readonly<Record<string, number>>;
  /**
   * Registered providers (built-in names) for the planning and the runtime registry, e.g. a fake
   * with artifacts behind `localSandbox()`. @default {the built-in providers}
   */
  readonly providers?: Readonly<Record<string, ProviderLoader>>;
  /** `maxBuildConcurrency` of the run's build gate. @default {2} */
  readonly maxBuildConcurrency?: number;
}

/** A planned sandbox run, started on fake time. */
export interface SandboxRun {
  readonly plan: Plan;
  readonly clock: FakeClock;
  readonly provider: FakeProvider;
  readonly log: EventLog;
  readonly scheduler: Scheduler;
  readonly runtime: SandboxRuntime;
  readonly interrupt: AbortController;
  readonly done: Promise<SlotOutcome[]>;
  /** `"<experimentId>:<evalId>"` of every body that holds now, in start order. */
  holding(): string[];
  /** Bodies' begin and end with the id of the sandbox they ran in, in order. */
  readonly uses: {
    readonly name: string;
    readonly sandbox: string;
    readonly event: "begin" | "end";
  }[];
  /** Releases the oldest holding body of `name` (`"<experimentId>:<evalId>"`). */
  release(name: string): void;
  /** Releases every holding body, and every later one, until the run ends. */
  finish(): Promise<SlotOutcome[]>;
  flush(): Promise<void>;
}

/** Builds the discovered project, plans it like `exp` does, and starts the scheduler. */
export async function startSandboxRun(spec: SandboxRunSpec): Promise<SandboxRun> {
  const clock = createFakeClock();
  const provider = createFakeProvider({ clock, ...spec.provider });
  const template = defineSandbox({
    name: provider.name,
    create: (ctx) => provider.create("fake-plan", ctx),
    classifyCreateError: (e) => provider.classifyCreateError(e),
    ...(spec.exclusive !== undefined ? { exclusive: spec.exclusive } : {}),
    ...(spec.recommendedConcurrency !== undefined
      ? { recommendedConcurrency: spec.recommendedConcurrency }
      : {}),
  });
  const holds: { name: string; release: () => void }[] = [];
  const uses: SandboxRun["uses"][number][] = [];
  let releaseAll = false;
  const body = (name: string, durationMs: number | undefined) => async (t: TestContext) => {
    const sandbox = t.sandbox.id;
    uses.push({ name, sandbox, event: "begin" });
    try {
      if (durationMs !== undefined) await sleep(clock, durationMs, { signal: t.signal });
      else if (!releaseAll) {
        await new Promise<void>((resolve) => holds.push({ name, release: resolve }));
      }
      t.check(true, isTrue());
    } finally {
      uses.push({ name, sandbox, event: "end" });
    }
  };
  const plan = await planOf(spec, template, body);
  const log = new EventLog(plan, { cap: spec.cap, experimentCaps: capsOf(plan) });
  const registry = createProviderRegistry({ hostEnv: {}, clock }, spec.providers);
  const random = createSeededRandom(7);
  const runtime = new SandboxRuntime({
    registry,
    owner: { host: "test-host", pid: 1, processStart: "unknown" },
    runIds: plan.experiments.map((e) => `run-${e.id}`),
    clock,
    random,
    projectRoot: "/project",
  });
  const interrupt = new AbortController();
  const scheduler = createScheduler(
    plan,
    createAttemptRunner({ plan, root: "/project", clock, random, pricing: {}, sandboxes: runtime }),
    {
      signal: interrupt.signal,
      clock,
      random,
      onEvent: log.sink,
      cap: spec.cap,
      abandon: abandonedResult,
      beforeTeardown: async (id) => (await runtime.stopPools(id)).length === 0,
      sandbox: {
        ...(spec.machineSlots ? { machineSlots: spec.machineSlots } : {}),
        ...(spec.createsPerSecond ? { createsPerSecond: spec.createsPerSecond } : {}),
      },
      // As `exp` wires it: each key goes to its template provider's `prepareArtifacts`.
      builds: {
        ...(spec.maxBuildConcurrency !== undefined
          ? { maxConcurrency: spec.maxBuildConcurrency }
          : {}),
        prepare: artifactPreparer(registry),
      },
    },
  );
  log.snapshot = () => scheduler.snapshot();
  const done = scheduler.run();
  done.catch(() => undefined);
  return {
    plan,
    clock,
    provider,
    log,
    scheduler,
    runtime,
    interrupt,
    done,
    uses,
    holding: () => holds.map((h) => h.name),
    release: (name) => {
      const i = holds.findIndex((h) => h.name === name);
      if (i < 0) throw new Error(`${name} is not holding; holding: ${holds.map((h) => h.name)}`);
      holds.splice(i, 1)[0]!.release();
    },
    finish: async () => {
      releaseAll = true;
      let settled = false;
      done.finally(() => void (settled = true)).catch(() => undefined);
      // Machine slot files are real: their I/O settles outside fake time, so keep both moving.
      const deadline = Date.now() + 120_000; // only turns a hang into a failure
      while (!settled) {
        for (const h of holds.splice(0)) h.release();
        await clock.runAllAsync();
        await new Promise((resolve) => setTimeout(resolve, 1));
        if (Date.now() > deadline) {
          const slots = JSON.stringify(scheduler.snapshot().machineSlots);
          throw new Error(`The sandbox run did not end: is a slot never released? ${slots}`);
        }
      }
      return await done;
    },
    flush: () => clock.flush(),
  };
}

type Body = (name: string, durationMs: number | undefined) => (t: TestContext) => Promise<void>;

/** The plan `exp` would build: selection, sandbox pairing, physical resolution, buildPlan. */
export async function planOf(
  spec: Omit<SandboxRunSpec, "cap">,
  template: SandboxLayer,
  body: Body = () => () => Promise.resolve(),
): Promise<Plan> {
  const boxed = defineAgent({
    name: "boxed",
    kind: "sandbox",
    evidenceCoverage: completeEvidenceCoverage,
    send: () => Promise.resolve({ status: "completed", events: [] }),
  });
  const direct = defineAgent({
    name: "direct",
    evidenceCoverage: completeEvidenceCoverage,
    send: () => Promise.resolve({ status: "completed", events: [] }),
  });
  const experiments: DiscoveredExperiment[] = spec.experiments.map((e, index) => ({
    id: e.id,
    index,
    file: `experiments/${e.id}.ts`,
    definition: defineExperiment({
      agent: e.direct ? direct : boxed,
      // Bodies are shared by experiments; this tells them which one runs them.
      flags: { experiment: e.id },
      ...(e.sandbox === null ? {} : { sandbox: e.sandbox ?? template }),
      ...(e.attempts !== undefined ? { attempts: e.attempts } : {}),
      ...(e.maxConcurrency !== undefined ? { maxConcurrency: e.maxConcurrency } : {}),
      ...(e.sandboxReuse !== undefined ? { sandboxReuse: e.sandboxReuse } : {}),
      ...(e.timeoutMs !== undefined ? { timeoutMs: e.timeoutMs } : {}),
      ...(e.evals !== undefined ? { evals: e.evals } : {}),
    }),
  }));
  // One definition per eval, shared by the experiments that run it; the body names the slot.
  const evals: DiscoveredEval[] = spec.evals.map((e, index) => ({
    id: e.id,
    index,
    file: `evals/${e.id}.eval.ts`,
    definition: defineEval({
      ...(e.sandbox ? { sandbox: e.sandbox } : {}),
      ...(e.timeoutMs !== undefined ? { timeoutMs: e.timeoutMs } : {}),
      test: (t) => named(t, e, body),
    }) as unknown as EvalDefinition,
    ...(e.groupId !== undefined ? { groupId: e.groupId } : {}),
  }));
  const groups: DiscoveredGroup[] = (spec.groups ?? []).map((g) => {
    const members = g.members.map((id) => evals.find((e) => e.id === id)!);
    // As discovery does (authoring.md §1.4): every member carries its group's layer.
    if (g.sandbox) { for (const m of members) m.groupSandbox = g.sandbox; }
    const definition = defineEvalGroup({
      evals: members.map((m) => m.definition),
      onUnavailable: g.onUnavailable,
      ...(g.sandbox ? { sandbox: g.sandbox } : {}),
    });
    return {
      id: g.id,
      file: `evals/${g.id}/eval-group.ts`,
      definition,
      memberIds: [...g.members].sort(),
    };
  });
  const selection = select(experiments, evals, { evalPrefixes: [], tags: [] });
  const registry = createProviderRegistry(
    { hostEnv: {}, clock: createFakeClock() },
    spec.providers,
  );
  const resolve = createPhysicalResolver({
    registry,
    projectRoot: "/project",
    signal: new AbortController().signal,
  });
  const sandboxes = new Map<string, PlannedSandbox>();
  for (const pair of sandboxPairs(selection, groups)) {
    const found = await resolve({
      layers: pair.layers,
      reuse: pair.reuse,
      evalId: pair.evalId,
      groupId: pair.groupId,
      agentIdentity: "boxed",
    });
    sandboxes.set(pair.key, { ...pair, ...found });
  }
  const carried = (experimentId: string, evalId: string, ordinal: number): CarryDecision => {
    const e = spec.experiments.find((x) => x.id === experimentId);
    return e?.carried?.includes(`${evalId}#${ordinal}`)
      ? {
        action: "carry",
        source: {
          runId: "prior",
          attemptId: `prior-${evalId}-${ordinal}`,
          originRunId: "prior",
          verdict: "passed",
          durationMs: 1,
          score: null,
        },
      }
      : { action: "run", reason: "new", detail: null, source: null };
  };
  return buildPlan(
    selection,
    { rerun: "none" },
    (k) => carried(k.experimentId, k.evalId, k.ordinal),
    { sandboxes },
  );

  function named(t: TestContext, e: SandboxEvalSpec, make: Body): Promise<void> {
    return make(`${String(t.flags.experiment ?? "")}:${e.id}`, e.durationMs)(t);
  }
}

function capsOf(plan: Plan): Record<string, number> {
  const caps: Record<string, number> = {};
  for (const e of plan.experiments) if (e.maxConcurrency !== null) caps[e.id] = e.maxConcurrency;
  return caps;
}
