/**
 * A fake {@link AttemptControl} the test drives (abort, backoff, activities, limits) and a tiny
 * plan builder for one experiment and one eval, for tests of the per-Attempt runner.
 */
import { type AbortKind, AbortReason } from "../../src/_shared/abort.ts";
import type { EvalDefinition, EvalKind } from "../../src/discovery/mod.ts";
import type { ExperimentDefinition } from "../../src/discovery/mod.ts";
import type { Plan, PlannedExperiment, PlannedSlot } from "../../src/plan/mod.ts";
import type { AttemptControl, BackoffRequest, RetryLimits } from "../../src/scheduler/mod.ts";

/** One `backoff` call and how it was settled. */
export interface RecordedBackoff {
  readonly request: BackoffRequest;
  /** `resolved`, `rejected` (signal aborted) or `pending` (manual mode, not yet released). */
  state: "pending" | "resolved" | "rejected";
  /** Ends the sleep (manual mode); no effect once settled. */
  release(): void;
}

/** Options of {@link createFakeControl}. */
export interface FakeControlOptions {
  readonly attemptId?: string;
  readonly startedAt?: number;
  readonly deadline?: number | null;
  /** Default: 4 tries per send, 8 retries per Attempt (RETRY-2). */
  readonly limits?: Partial<RetryLimits>;
  /** `immediate` (default): every backoff resolves at once; `manual`: on `release()`. */
  readonly backoff?: "immediate" | "manual";
}

/** The control plus what the runner did with it. */
export interface FakeControl extends AttemptControl {
  /** Every backoff request in call order. */
  readonly backoffs: RecordedBackoff[];
  /** Every activity text in call order. */
  readonly activities: string[];
  /** Aborts `signal` with a niceeval reason, as the scheduler would. */
  abort(kind: AbortKind): void;
  /** Resolves once `n` backoff requests were made. */
  waitForBackoffs(n: number): Promise<void>;
}

/**
 * Creates a fake control. Backoffs reject with `signal.reason` when the signal aborts, and with a
 * `TypeError` when another backoff of the Attempt is still sleeping (the scheduler's contract).
 */
export function createFakeControl(options: FakeControlOptions = {}): FakeControl {
  const controller = new AbortController();
  const backoffs: RecordedBackoff[] = [];
  const activities: string[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const notify = () => {
    for (const waiter of waiters.splice(0)) {
      if (backoffs.length >= waiter.n) waiter.resolve();
      else waiters.push(waiter);
    }
  };
  const backoff = (request: BackoffRequest): Promise<void> => {
    const signal = controller.signal;
    if (signal.aborted) return Promise.reject(signal.reason);
    // Like the scheduler: an Attempt in backoff holds no global slot and cannot back off again.
    if (backoffs.some((b) => b.state === "pending")) {
      return Promise.reject(new TypeError("Cannot back off: the Attempt holds no global slot"));
    }
    return new Promise<void>((resolve, reject) => {
      const recorded: RecordedBackoff = {
        request: { ...request },
        state: "pending",
        release: () => settle("resolved"),
      };
      const onAbort = () => settle("rejected");
      function settle(state: "resolved" | "rejected") {
        if (recorded.state !== "pending") return;
        recorded.state = state;
        signal.removeEventListener("abort", onAbort);
        if (state === "resolved") resolve();
        else reject(signal.reason);
      }
      signal.addEventListener("abort", onAbort, { once: true });
      backoffs.push(recorded);
      notify();
      if ((options.backoff ?? "immediate") === "immediate") recorded.release();
    });
  };
  return {
    signal: controller.signal,
    attemptId: options.attemptId ?? "attempt-1",
    startedAt: options.startedAt ?? 0,
    deadline: options.deadline ?? null,
    limits: { sendMaxTries: 4, attemptMaxRetries: 8, ...options.limits },
    backoff,
    activity: (text) => void activities.push(text),
    backoffs,
    activities,
    abort: (kind) => controller.abort(new AbortReason(kind)),
    waitForBackoffs: (n) =>
      new Promise<void>((resolve) => {
        waiters.push({ n, resolve });
        notify();
      }),
  };
}

/** Options of {@link planFor}. */
export interface PlanForOptions {
  readonly experimentId?: string;
  readonly evalId?: string;
  /** Project-relative eval file. */
  readonly file?: string;
  readonly ordinal?: number;
  /** Per-Attempt deadline of the slot; default the experiment's, then the eval's, else null. */
  readonly timeoutMs?: number | null;
}

/** A plan of one experiment and one eval, and its only slot. */
export interface OnePlan {
  readonly plan: Plan;
  readonly slot: PlannedSlot;
}

/** Builds a one-slot plan around an experiment and an eval definition. */
export function planFor(
  experiment: ExperimentDefinition,
  evalDef: EvalDefinition<EvalKind, never>,
  options: PlanForOptions = {},
): OnePlan {
  const experimentId = options.experimentId ?? "local";
  const evalId = options.evalId ?? "greet/hello";
  const discoveredEval = {
    id: evalId,
    index: 0,
    file: options.file ?? `evals/${evalId}.eval.ts`,
    // Any eval definition, whatever its context type: the runner calls it with the right one.
    definition: evalDef as unknown as EvalDefinition,
  };
  const planned: PlannedExperiment = {
    index: 0,
    id: experimentId,
    discovered: {
      id: experimentId,
      index: 0,
      file: `experiments/${experimentId}.ts`,
      definition: experiment,
    },
    evals: [discoveredEval],
    attempts: 1,
    earlyExit: experiment.earlyExit,
    budgetUSD: experiment.budget ?? null,
    maxConcurrency: experiment.maxConcurrency ?? null,
    provider: null,
    laneKey: null,
    runnable: 1,
  };
  const timeoutMs = options.timeoutMs !== undefined
    ? options.timeoutMs
    : experiment.timeoutMs ?? evalDef.timeoutMs ?? null;
  const slot: PlannedSlot = {
    position: 0,
    experimentIndex: 0,
    experimentId,
    evalId,
    evalIndex: 0,
    ordinal: options.ordinal ?? 0,
    kind: evalDef.evaluationKind,
    groupId: null,
    timeoutMs,
    carry: { action: "run", reason: "new", detail: null, source: null },
  };
  const plan: Plan = {
    experiments: [planned],
    slots: [slot],
    evalCount: 1,
    total: 1,
    reused: 0,
    toRun: 1,
  };
  return { plan, slot };
}
