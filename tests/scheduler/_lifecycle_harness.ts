/**
 * A scheduler with cross-process coordination on fake time and real files: a temporary project
 * directory, real flocks, a fake process probe, and helpers that move fake time while real I/O
 * completes (coordination reads and writes files between timers).
 */
import type { SlotOutcome } from "../../src/_shared/mod.ts";
import {
  createKeyedMutex,
  type ProcessIdentity,
  type ProcessProbe,
  registerTeardown,
} from "../../src/coordination/mod.ts";
import type { Plan, PlannedExperiment } from "../../src/plan/mod.ts";
import { createScheduler, type RunAttempt, type Scheduler } from "../../src/scheduler/mod.ts";
import { type AutoScript, EventLog, fakeAbandon, FakeAttempts } from "../_fakes/attempt.ts";
import { createFakeClock, type FakeClock } from "../_fakes/clock.ts";
import { createSeededRandom } from "../_fakes/random.ts";
import { fakeProbe, identity, watch, type Watched } from "../coordination/_helpers.ts";

/** This Invocation's process in every test: host-a, pid 4242. */
export const SELF: ProcessIdentity = identity();

/** Options of {@link startCoordinated}. */
export interface CoordinatedOptions {
  readonly cap: number;
  readonly root: string;
  readonly probe?: ProcessProbe;
  readonly script?: (slot: Plan["slots"][number]) => AutoScript | undefined;
  readonly beforeTeardown?: (experimentId: string) => Promise<boolean>;
  /** Wraps the fake Attempt runner (to add diagnostics to results, for example). */
  readonly wrap?: (run: RunAttempt) => RunAttempt;
}

/** A running coordinated scheduler. */
export interface CoordinatedRun {
  readonly clock: FakeClock;
  readonly log: EventLog;
  readonly fake: FakeAttempts;
  readonly scheduler: Scheduler;
  /** The first interrupt (INT-1). */
  readonly interrupt: AbortController;
  /** The second interrupt (INT-2). */
  readonly force: AbortController;
  readonly done: Watched<SlotOutcome[]>;
}

/** Creates the scheduler with coordination under `root` and starts `run()`. */
export function startCoordinated(plan: Plan, options: CoordinatedOptions): CoordinatedRun {
  const clock = createFakeClock();
  const log = new EventLog(plan, { cap: options.cap });
  const fake = new FakeAttempts({
    clock,
    timeline: log.timeline,
    script: options.script ?? (() => ({ durationMs: 10 })),
  });
  const interrupt = new AbortController();
  const force = new AbortController();
  const scheduler = createScheduler(plan, options.wrap ? options.wrap(fake.run) : fake.run, {
    signal: interrupt.signal,
    clock,
    random: createSeededRandom(5),
    onEvent: log.sink,
    cap: options.cap,
    abandon: fakeAbandon,
    coordination: {
      projectRoot: options.root,
      invocationId: "inv-now",
      identity: SELF,
      probe: options.probe ??
        fakeProbe({ [SELF.pid]: true }, { [SELF.pid]: SELF.processStartedAt }),
      mutex: createKeyedMutex(),
      force: force.signal,
    },
    ...(options.beforeTeardown ? { beforeTeardown: options.beforeTeardown } : {}),
  });
  log.snapshot = () => scheduler.snapshot();
  return { clock, log, fake, scheduler, interrupt, force, done: watch(scheduler.run()) };
}

/** Lets real I/O complete (a macrotask turn), without moving fake time. */
export function ioTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 1));
}

/** Moves fake time in `stepMs` steps, letting real I/O run between them, until `condition`. */
export async function until(
  clock: FakeClock,
  condition: () => boolean,
  what: string,
  stepMs = 5,
): Promise<void> {
  // Real I/O runs between the fake-time steps; the bound only turns a hang into a failure.
  const deadline = Date.now() + 120_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await clock.tickAsync(stepMs);
    await ioTurn();
  }
}

/** Runs until the scheduler resolved; returns its outcomes. */
export async function finish(run: CoordinatedRun, stepMs = 50): Promise<SlotOutcome[]> {
  await until(run.clock, () => run.done.settled, "the run ended", stepMs);
  return await run.done.promise;
}

/** Returns `plan` with `sharedState: { key }` on the named Experiments. */
export function withSharedState(plan: Plan, keys: Readonly<Record<string, string>>): Plan {
  const experiments = plan.experiments.map((e): PlannedExperiment => {
    const key = keys[e.id];
    if (key === undefined) return e;
    const definition = { ...e.discovered.definition, sharedState: { key } };
    return { ...e, discovered: { ...e.discovered, definition } };
  });
  return { ...plan, experiments };
}

/**
 * Leaves an orphan: a registration of `experimentId` written by `owner` whose flock is dropped
 * (as if its process died). Returns its path.
 */
export async function plantOrphan(
  root: string,
  experimentId: string,
  owner: ProcessIdentity,
  selectedEvalIds: readonly string[],
): Promise<string> {
  const result = await registerTeardown({
    projectRoot: root,
    experimentId,
    selectedEvalIds,
    invocationId: `inv-${owner.pid}`,
    identity: owner,
    clock: createFakeClock(),
  });
  if (!result.ok) throw new Error(result.message);
  result.held.abandon();
  return result.held.path;
}

/** True when `path` exists. */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}
