/**
 * A fake `RunAttempt` for scheduler tests: each Attempt blocks on a test-controlled gate and then
 * passes, fails, errors (with a code and scope), scores, reports cost and turns, requests
 * `control.backoff(...)`, or ignores its abort signal. Scripted Attempts settle by themselves on
 * fake time. Also: an event log that replays `attempt_start` / `attempt_end` / `backoff` as in
 * `cli.md` OUT-J6 (and the RUN-3 counters) after every event.
 */
import type { AbortKind, AttemptError, AttemptResult, RunEvent } from "../../src/_shared/mod.ts";
import { abortKind, type Clock } from "../../src/_shared/mod.ts";
import type { Plan, PlannedSlot } from "../../src/plan/mod.ts";
import type {
  AbandonAttempt,
  AttemptControl,
  RunAttempt,
  SchedulerSnapshot,
} from "../../src/scheduler/mod.ts";
import { slotName } from "./plan.ts";

/** Verdicts a fake Attempt can settle with. */
export type FakeVerdict = "passed" | "failed" | "errored" | "scored" | "skipped" | "interrupted";

/** Details of a settlement. */
export interface SettleOptions {
  /** Error code of an `errored` settlement; default `agent-error`. */
  readonly code?: string;
  readonly scope?: AttemptError["scope"];
  readonly costUSD?: number | null;
  readonly turnCount?: number;
  readonly score?: number;
  /** Fake-clock ms of Attempt cleanup (sandbox destroy) before the body returns. */
  readonly cleanupMs?: number;
}

/** A self-settling Attempt: optional backoffs, then a verdict after `durationMs`. */
export interface AutoScript extends SettleOptions {
  readonly durationMs?: number;
  readonly verdict?: FakeVerdict;
  /** Send backoffs requested in order, each after `afterMs` of work. */
  readonly backoffs?: readonly { readonly afterMs: number; readonly reason?: string }[];
}

/** Builds a complete AttemptResult for `slot`. */
export function fakeResult(
  slot: PlannedSlot,
  control: Pick<AttemptControl, "attemptId" | "startedAt">,
  verdict: FakeVerdict,
  o: SettleOptions & { readonly endedAt: number },
): AttemptResult {
  const errored = verdict === "errored";
  return {
    attemptId: control.attemptId,
    experimentId: slot.experimentId,
    evalId: slot.evalId,
    ordinal: slot.ordinal,
    kind: slot.kind,
    outcome: errored ? "errored" : verdict === "interrupted" ? "interrupted" : "completed",
    verdict,
    score: verdict === "scored" ? o.score ?? 1 : null,
    scoreResult: null,
    skipReason: verdict === "skipped" ? "early-exit" : null,
    error: errored
      ? {
        code: o.code ?? "agent-error",
        phase: "test",
        message: "fake error",
        scope: o.scope ?? "attempt",
        location: null,
        stack: null,
      }
      : null,
    startedAt: control.startedAt,
    endedAt: o.endedAt,
    timedMs: o.endedAt - control.startedAt,
    usage: null,
    estimatedCostUSD: o.costUSD ?? null,
    turnCount: o.turnCount ?? 1,
    retries: [],
    details: { assertions: [], turns: [], phases: [], diagnostics: [], logs: [] },
  };
}

/** The abandoned result a production runner would build (TIME-3). */
export function fakeAbandon(
  slot: PlannedSlot,
  info: Parameters<AbandonAttempt>[1],
): AttemptResult {
  const verdict = info.kind === "interrupt" ? "interrupted" : "errored";
  const result = fakeResult(slot, info, verdict, {
    endedAt: info.endedAt,
    code: "timeout",
    turnCount: 0,
  });
  const logs = [{ at: info.endedAt, text: "abandoned" }];
  return { ...result, details: { ...result.details, logs } };
}

/** One started fake Attempt, controlled by the test. */
export class FakeAttempt {
  readonly slot: PlannedSlot;
  readonly control: AttemptControl;
  readonly name: string;
  /** Fake time at which the body started. */
  readonly startedAt: number;
  #resolve!: (result: AttemptResult) => void;
  readonly #clock: Clock;
  readonly #timeline: string[];
  #settled = false;
  #retries = 0;
  readonly result: Promise<AttemptResult>;

  constructor(slot: PlannedSlot, control: AttemptControl, clock: Clock, timeline: string[]) {
    this.slot = slot;
    this.control = control;
    this.name = slotName(slot);
    this.#clock = clock;
    this.#timeline = timeline;
    this.startedAt = clock.now();
    this.result = new Promise((resolve) => this.#resolve = resolve);
    timeline.push(`create:${this.name}`);
  }

  /** True once the test (or the script) settled it. */
  get settled(): boolean {
    return this.#settled;
  }

  /** The abort kind of its signal, if aborted. */
  get aborted(): AbortKind | undefined {
    return this.control.signal.aborted ? abortKind(this.control.signal.reason) : undefined;
  }

  pass(o: SettleOptions = {}): void {
    this.settle("passed", o);
  }

  fail(o: SettleOptions = {}): void {
    this.settle("failed", o);
  }

  error(code: string, o: SettleOptions = {}): void {
    this.settle("errored", { ...o, code });
  }

  /** Settles with `verdict`; with `cleanupMs` the body returns that much fake time later. */
  settle(verdict: FakeVerdict, o: SettleOptions = {}): void {
    if (this.#settled) throw new Error(`${this.name} settled twice`);
    this.#settled = true;
    const finish = () => {
      this.#timeline.push(`destroy:${this.name}`);
      this.#resolve(
        fakeResult(this.slot, this.control, verdict, { ...o, endedAt: this.#clock.now() }),
      );
    };
    if (o.cleanupMs) this.#clock.setTimeout(finish, o.cleanupMs);
    else finish();
  }

  /** Requests a send-retry backoff (RETRY-4); retries count up from 1. */
  backoff(reason = "rate_limit", retryAfterMs = 0): Promise<void> {
    return this.control.backoff({ reason, retry: ++this.#retries, retryAfterMs });
  }
}

/** Options of {@link FakeAttempts}. */
export interface FakeAttemptsOptions {
  readonly clock: Clock;
  /** Scripts a slot's Attempt; undefined leaves it to the test. */
  readonly script?: (slot: PlannedSlot) => AutoScript | undefined;
  /** On abort: settle at once as production does (default), or leave it to the test. */
  readonly onAbort?: "settle" | "manual";
  /** Shared with the event log so tests can order body marks against events. */
  readonly timeline?: string[];
}

/** The fake per-Attempt work and every Attempt it started. */
export class FakeAttempts {
  readonly started: FakeAttempt[] = [];
  readonly timeline: string[];
  readonly #byName = new Map<string, FakeAttempt>();
  readonly #o: FakeAttemptsOptions;

  constructor(options: FakeAttemptsOptions) {
    this.#o = options;
    this.timeline = options.timeline ?? [];
  }

  /** The `RunAttempt` to hand the scheduler. */
  readonly run: RunAttempt = (slot, control) => {
    const attempt = new FakeAttempt(slot, control, this.#o.clock, this.timeline);
    this.started.push(attempt);
    this.#byName.set(attempt.name, attempt);
    if ((this.#o.onAbort ?? "settle") === "settle") {
      control.signal.addEventListener("abort", () => {
        if (!attempt.settled) attempt.settle(abortVerdict(attempt.aborted), { code: "timeout" });
      }, { once: true });
    }
    const script = this.#o.script?.(slot);
    if (script) void this.#play(attempt, script);
    return attempt.result;
  };

  /** The started Attempt named `"<experimentId>:<evalId>#<ordinal>"`. */
  get(name: string): FakeAttempt {
    const attempt = this.#byName.get(name);
    if (!attempt) throw new Error(`${name} has not started; started: ${this.names().join(", ")}`);
    return attempt;
  }

  /** True once the Attempt named `name` started. */
  has(name: string): boolean {
    return this.#byName.has(name);
  }

  /** Names of started Attempts in start order. */
  names(): string[] {
    return this.started.map((a) => a.name);
  }

  /** Started Attempts not yet settled. */
  live(): FakeAttempt[] {
    return this.started.filter((a) => !a.settled);
  }

  async #play(attempt: FakeAttempt, script: AutoScript): Promise<void> {
    const wait = (ms: number) =>
      new Promise<void>((resolve) => this.#o.clock.setTimeout(resolve, ms));
    try {
      for (const step of script.backoffs ?? []) {
        await wait(step.afterMs);
        if (attempt.settled) return;
        await attempt.backoff(step.reason ?? "rate_limit");
      }
      await wait(script.durationMs ?? 0);
    } catch {
      // The signal aborted during a backoff; the abort listener settles the Attempt.
      return;
    }
    if (!attempt.settled) attempt.settle(script.verdict ?? "passed", script);
  }
}

function abortVerdict(kind: AbortKind | undefined): FakeVerdict {
  if (kind === "interrupt") return "interrupted";
  if (kind === "early-exit") return "skipped";
  return "errored";
}

// ------------------------------------------------------------------------------------------------
// Event log and replay (OUT-J6, RUN-3)

/** The fields of one event the concurrency replay needs (RunEvent or NDJSON object). */
export interface AuditEvent {
  readonly type: string;
  readonly experimentId?: string;
  readonly evalId?: string;
  readonly ordinal?: number;
  readonly state?: string;
  /** A `ramp` event's new cap: cap(t) from then on (OUT-J6). */
  readonly cap?: number;
}

/** The limits a replay checks. */
export interface AuditLimits {
  readonly cap: number;
  /** `experimentConcurrency` of the `start` event. */
  readonly experimentCaps?: Readonly<Record<string, number>>;
  /** Experiments sharing one exclusive lane: at most one of their Attempts runs at a time. */
  readonly serialGroups?: readonly (readonly string[])[];
}

/** Replays start/end/backoff events and records every violation of OUT-J6. */
export class ConcurrencyReplay {
  readonly violations: string[] = [];
  peakHeld = 0;
  peakRunning = 0;
  readonly peakByExperiment: Record<string, number> = {};
  readonly #limits: AuditLimits;
  /** cap(t): the limits' cap, replaced by each `ramp` event's (OUT-J6). */
  #cap: number;
  readonly #running = new Map<string, string>();
  readonly #backoff = new Set<string>();
  readonly #byExperiment = new Map<string, number>();

  constructor(limits: AuditLimits) {
    this.#limits = limits;
    this.#cap = limits.cap;
  }

  /** Held global slots as the stream shows them: running − backoff. */
  get held(): number {
    return this.#running.size - this.#backoff.size;
  }

  /** Attempts between start and end, and those of them in backoff. */
  get running(): number {
    return this.#running.size;
  }
  get backoff(): number {
    return this.#backoff.size;
  }

  /** Folds one event. */
  apply(e: AuditEvent): void {
    if (e.type === "ramp" && e.cap !== undefined) this.#cap = e.cap;
    if (e.experimentId === undefined) return;
    const slot = `${e.experimentId}:${e.evalId}#${e.ordinal}`;
    if (e.type === "attempt_start") {
      if (this.#running.has(slot)) this.violations.push(`${slot} started twice`);
      this.#running.set(slot, e.experimentId);
      const n = (this.#byExperiment.get(e.experimentId) ?? 0) + 1;
      this.#byExperiment.set(e.experimentId, n);
      this.peakByExperiment[e.experimentId] = Math.max(
        this.peakByExperiment[e.experimentId] ?? 0,
        n,
      );
      this.peakRunning = Math.max(this.peakRunning, this.#running.size);
      this.#checkHeld(slot, "start");
      this.#checkExperiment(slot, e.experimentId, n);
      this.#checkSerial(slot);
    } else if (e.type === "attempt_end") {
      if (!this.#running.delete(slot)) this.violations.push(`${slot} ended without a start`);
      this.#backoff.delete(slot);
      this.#byExperiment.set(e.experimentId, (this.#byExperiment.get(e.experimentId) ?? 1) - 1);
    } else if (e.type === "backoff" && e.state === "sleeping") {
      if (!this.#running.has(slot)) this.violations.push(`${slot} backed off while not running`);
      this.#backoff.add(slot);
    } else if (e.type === "backoff" && e.state === "resumed") {
      // Right after `attempt_end`: closes a sleep the deadline or an interrupt cut short.
      if (!this.#running.has(slot)) return;
      if (!this.#backoff.delete(slot)) this.violations.push(`${slot} resumed without sleeping`);
      this.#checkHeld(slot, "resume");
    }
  }

  #checkHeld(slot: string, at: string): void {
    this.peakHeld = Math.max(this.peakHeld, this.held);
    if (this.held > this.#cap) {
      this.violations.push(
        `${at} of ${slot}: running − backoff = ${this.held} > cap ${this.#cap}`,
      );
    }
  }

  #checkExperiment(slot: string, experimentId: string, n: number): void {
    const cap = this.#limits.experimentCaps?.[experimentId];
    if (cap !== undefined && n > cap) {
      this.violations.push(`start of ${slot}: ${experimentId} runs ${n} > its cap ${cap}`);
    }
  }

  #checkSerial(slot: string): void {
    for (const group of this.#limits.serialGroups ?? []) {
      const n = [...this.#running.values()].filter((id) => group.includes(id)).length;
      if (n > 1) this.violations.push(`start of ${slot}: ${n} Attempts on one exclusive lane`);
    }
  }
}

/** The audit fields of an in-process event. */
export function auditEventOf(e: RunEvent): AuditEvent {
  if (e.type === "ramp") return { type: e.type, cap: e.cap };
  if (!("slot" in e)) return { type: e.type };
  const { experimentId, evalId, ordinal } = e.slot;
  return {
    type: e.type,
    experimentId,
    evalId,
    ordinal,
    ...(e.type === "backoff" ? { state: e.state } : {}),
  };
}

/** The RunEvent members whose `type` can be `T` (some members carry two types). */
type Members<E, T> = E extends { type: infer U } ? (T extends U ? E : never) : never;
/** The event of one type. */
export type EventOf<T extends RunEvent["type"]> = Members<RunEvent, T>;

/** Live counters (OUT-3) derived from events, with illegal transitions recorded (RUN-3). */
export type Counters = Record<
  | "total"
  | "reused"
  | "running"
  | "backoff"
  | "queued"
  | "passed"
  | "failed"
  | "errored"
  | "skipped",
  number
>;

/** Records every event, replays it, and checks the scheduler snapshot after each one. */
export class EventLog {
  readonly events: RunEvent[] = [];
  readonly timeline: string[] = [];
  readonly replay: ConcurrencyReplay;
  readonly counters: Counters;
  /** Violations of RUN-3, RUN-4 and PRIO-6 found after some event. */
  readonly violations: string[] = [];
  readonly #state = new Map<number, "queued" | "running" | "done">();
  #overCap = false;
  snapshot: (() => SchedulerSnapshot) | undefined;

  constructor(plan: Plan, limits: AuditLimits) {
    this.replay = new ConcurrencyReplay(limits);
    this.counters = {
      total: plan.total,
      reused: plan.reused,
      running: 0,
      backoff: 0,
      queued: plan.toRun,
      passed: 0,
      failed: 0,
      errored: 0,
      skipped: 0,
    };
    for (const slot of plan.slots) {
      if (slot.carry.action === "run") this.#state.set(slot.position, "queued");
    }
  }

  /** The sink to hand the scheduler. */
  readonly sink = (e: RunEvent): void => {
    this.events.push(e);
    this.timeline.push(describe(e));
    this.replay.apply(auditEventOf(e));
    this.#count(e);
    this.#check(e);
  };

  /** Events of one type. */
  ofType<T extends RunEvent["type"]>(type: T): EventOf<T>[] {
    return this.events.filter((e): e is EventOf<T> => e.type === type);
  }

  /** Slot names in `attempt_start` order. */
  starts(): string[] {
    return this.ofType("attempt_start").map((e) => slotName(e.slot));
  }

  /** Diagnostics with `code`. */
  diagnostics(code: string): EventOf<"diagnostic">[] {
    return this.ofType("diagnostic").filter((d) => d.code === code);
  }

  /** Every violation found by the replay and the snapshot checks. */
  allViolations(): string[] {
    return [...this.replay.violations, ...this.violations];
  }

  #move(
    position: number,
    from: "queued" | "running",
    to: "running" | "done",
    e: RunEvent,
  ): boolean {
    if (this.#state.get(position) !== from) {
      this.violations.push(`${describe(e)} in state ${this.#state.get(position)}`);
      return false;
    }
    this.#state.set(position, to);
    return true;
  }

  #count(e: RunEvent): void {
    const c = this.counters;
    if (e.type === "attempt_start" && this.#move(e.slot.position, "queued", "running", e)) {
      c.queued--;
      c.running++;
    } else if (e.type === "attempt_end" && this.#move(e.slot.position, "running", "done", e)) {
      c.running--;
      const v = e.result.verdict;
      if (v === "passed" || v === "scored") c.passed++;
      else if (v === "failed") c.failed++;
      else if (v === "errored") c.errored++;
      else c.skipped++;
    } else if (e.type === "not_dispatched" && this.#move(e.slot.position, "queued", "done", e)) {
      c.queued--;
      c.skipped++;
    } else if (e.type === "slot_errored" && this.#move(e.slot.position, "queued", "done", e)) {
      c.queued--;
      c.errored++;
    }
    c.backoff = this.replay.backoff;
  }

  #check(e: RunEvent): void {
    const c = this.counters;
    const sum = c.reused + c.running + c.queued + c.passed + c.failed + c.errored + c.skipped;
    if (sum !== c.total) {
      this.violations.push(`after ${describe(e)}: counters sum ${sum} ≠ ${c.total}`);
    }
    if (c.backoff > c.running) this.violations.push(`after ${describe(e)}: backoff > running`);
    const s = this.snapshot?.();
    if (!s) return;
    // A granted slot is held a few microtasks before its attempt_start, so between events
    // held may exceed running − backoff; it may never fall below it (RUN-4).
    if (s.heldSlots < s.running - s.backoff) {
      this.violations.push(
        `after ${describe(e)}: held ${s.heldSlots} < running ${s.running} − backoff ${s.backoff}`,
      );
    }
    // Right after a ramp lowered the cap, held slots may exceed it until enough settle (RUN-4).
    if (e.type === "ramp" && e.cap < e.previousCap) this.#overCap = true;
    if (s.heldSlots <= s.cap) this.#overCap = false;
    if (s.heldSlots > s.cap && !this.#overCap) {
      this.violations.push(`after ${describe(e)}: held ${s.heldSlots} > cap`);
    }
    if (s.globalWaiters > 0 && s.heldSlots < s.cap) {
      this.violations.push(
        `after ${describe(e)}: ${s.globalWaiters} waiters while held ${s.heldSlots} < cap`,
      );
    }
  }
}

function describe(e: RunEvent): string {
  if ("slot" in e) {
    const extra = e.type === "backoff"
      ? `:${e.state}`
      : e.type === "not_dispatched"
      ? `:${e.reason}`
      : "";
    return `${e.type}${extra}:${slotName(e.slot)}`;
  }
  if (e.type === "experiment_setup" || e.type === "experiment_teardown") {
    return `${e.type}:${e.status}:${e.experimentId}`;
  }
  if (e.type === "diagnostic") return `diagnostic:${e.code}`;
  return e.type;
}
