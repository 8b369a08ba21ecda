/** Starts a scheduler on fake time with fake Attempts, an event log and its replay. */
import type { SlotOutcome } from "../../src/_shared/mod.ts";
import type { Random } from "../../src/_shared/mod.ts";
import type { Plan } from "../../src/plan/mod.ts";
import {
  createScheduler,
  type JudgePrecheck,
  type RunPlanOptions,
  type Scheduler,
} from "../../src/scheduler/mod.ts";
import {
  type AuditLimits,
  type AutoScript,
  EventLog,
  fakeAbandon,
  FakeAttempts,
} from "../_fakes/attempt.ts";
import { createFakeClock, type FakeClock } from "../_fakes/clock.ts";
import { createSeededRandom } from "../_fakes/random.ts";

/** Options of {@link startRun}. */
export interface StartOptions {
  readonly cap: number;
  readonly script?: (slot: Plan["slots"][number]) => AutoScript | undefined;
  readonly onAbort?: "settle" | "manual";
  readonly random?: Random;
  readonly judge?: JudgePrecheck;
  /** Extra limits for the replay (experiment caps default to the plan's). */
  readonly serialGroups?: AuditLimits["serialGroups"];
  readonly backpressure?: RunPlanOptions["backpressure"];
  readonly retain?: RunPlanOptions["retain"];
  readonly onOutcome?: RunPlanOptions["onOutcome"];
  /** An adaptive ramp; `cap` must be its `from`. */
  readonly ramp?: RunPlanOptions["ramp"];
  /** The circuit breaker's count; 0 turns it off (docs/bail.md). */
  readonly bailAfter?: number;
  /** Experiments blocked by a failed agent precondition (docs/bail.md). */
  readonly blocked?: RunPlanOptions["blocked"];
}

/** A running scheduler and everything a test drives or observes. */
export interface Run {
  readonly plan: Plan;
  readonly clock: FakeClock;
  readonly log: EventLog;
  readonly fake: FakeAttempts;
  readonly scheduler: Scheduler;
  /** Aborting it is the interrupt (INT-1). */
  readonly interrupt: AbortController;
  /** The outcome of `run()`; observed so a rejection is never unhandled. */
  readonly done: Promise<SlotOutcome[]>;
  /** Lets pending promise callbacks run without moving time. */
  flush(): Promise<void>;
  /** Runs every timer until the run ends, then returns its outcomes. */
  finish(): Promise<SlotOutcome[]>;
  /** Passes every live Attempt, and every one that starts after, until the run ends. */
  passAll(): Promise<SlotOutcome[]>;
  /** Peak running Attempts of one experiment in the replayed stream. */
  replayPeak(experimentId: string): number;
}

/** Creates the scheduler and starts `run()`; nothing has been granted until the first flush. */
export function startRun(plan: Plan, options: StartOptions): Run {
  const clock = createFakeClock();
  const experimentCaps: Record<string, number> = {};
  for (const e of plan.experiments) {
    if (e.maxConcurrency !== null) experimentCaps[e.id] = e.maxConcurrency;
  }
  const log = new EventLog(plan, {
    cap: options.cap,
    experimentCaps,
    ...(options.serialGroups ? { serialGroups: options.serialGroups } : {}),
  });
  const fake = new FakeAttempts({
    clock,
    timeline: log.timeline,
    ...(options.script ? { script: options.script } : {}),
    ...(options.onAbort ? { onAbort: options.onAbort } : {}),
  });
  const interrupt = new AbortController();
  const scheduler = createScheduler(plan, fake.run, {
    signal: interrupt.signal,
    clock,
    random: options.random ?? createSeededRandom(3),
    onEvent: log.sink,
    cap: options.cap,
    abandon: fakeAbandon,
    ...(options.judge ? { judge: options.judge } : {}),
    ...(options.backpressure ? { backpressure: options.backpressure } : {}),
    ...(options.retain ? { retain: options.retain } : {}),
    ...(options.onOutcome ? { onOutcome: options.onOutcome } : {}),
    ...(options.ramp ? { ramp: options.ramp } : {}),
    ...(options.bailAfter !== undefined ? { bailAfter: options.bailAfter } : {}),
    ...(options.blocked ? { blocked: options.blocked } : {}),
  });
  log.snapshot = () => scheduler.snapshot();
  const done = scheduler.run();
  done.catch(() => undefined);
  return {
    plan,
    clock,
    log,
    fake,
    scheduler,
    interrupt,
    done,
    flush: () => clock.flush(),
    finish: async () => {
      await clock.runAllAsync();
      return await done;
    },
    passAll: async () => {
      for (;;) {
        await clock.runAllAsync();
        const live = fake.live();
        if (live.length === 0) break;
        for (const attempt of live) attempt.pass();
      }
      return await done;
    },
    replayPeak: (id) => log.replay.peakByExperiment[id] ?? 0,
  };
}

/** The outcome kinds (or verdicts of executed slots) by slot name, in plan order. */
export function outcomeSummary(plan: Plan, outcomes: readonly SlotOutcome[]): string[] {
  return outcomes.map((o, i) => {
    const s = plan.slots[i]!;
    const name = `${s.experimentId}:${s.evalId}#${s.ordinal}`;
    if (o.kind === "executed") return `${name} ${o.result.verdict}`;
    if (o.kind === "not-dispatched") return `${name} not-dispatched:${o.reason}`;
    if (o.kind === "errored-undispatched") return `${name} errored-undispatched:${o.code}`;
    return `${name} carried`;
  });
}
