/**
 * One executing Attempt (CHAIN-10 … CHAIN-12): its deadline, the control handed to the per-Attempt
 * work, send-retry backoff without a global slot (RETRY-4, W14/W15), abandonment after the abort
 * grace (TIME-3), and the settle-time rules that depend on why its signal aborted (EARLY-4, TIME-3,
 * INT-1). A pooled sandbox Attempt starts when its lease is handed over (sandboxes.md rule 46): the
 * work calls `control.start()`, and may first wait for a machine slot or pacing without a global
 * slot (W11, §4.4).
 */
import { type AbortKind, abortKind, AbortReason } from "../_shared/mod.ts";
import { type Clock, sleep, type TimerHandle } from "../_shared/mod.ts";
import type { AttemptResult, RunEvent, RunEventSink, SlotRef } from "../_shared/mod.ts";
import type { Random } from "../_shared/mod.ts";
import type { PlannedSlot } from "../plan/mod.ts";
import { ATTEMPT_ABORT_GRACE_MS, SEND_MAX_TRIES } from "./constants.ts";
import type {
  AbandonAttempt,
  AttemptControl,
  BackoffRequest,
  RunAttempt,
  SandboxAdmission,
} from "./control.ts";
import type { Permit, PriorityGate, Ticket } from "./gate.ts";
import { type PhysicalAdmission, type PhysicalHeld, releasePhysical } from "./physical.ts";
import type { PriorityKey } from "./priority_queue.ts";
import type { RampController } from "./ramp.ts";
import { sendBackoffMs } from "./retry.ts";
import { Control } from "./_control.ts";

/** Permits a slot holds along the chain (acquired in the order of CHAIN-13). */
export interface Held extends PhysicalHeld {
  experiment: Permit | null;
  slot: Permit | null;
  /** The place in the global queue taken when the last other unit was granted, until claimed. */
  ticket: Ticket | null;
}

/** Nothing held yet. */
export function emptyHeld(): Held {
  return {
    experiment: null,
    lane: null,
    pool: null,
    machine: null,
    paced: false,
    slot: null,
    ticket: null,
  };
}

/**
 * Releases whatever is still held in one synchronous step: an unclaimed global ticket, the
 * physical units, the experiment permit, and the global slot last. The waiters that the freed
 * permit or units let through take their places in the global queue within that step, so the
 * freed slot goes to the smallest key among everyone who could use it (PRIO-1, PRIO-7).
 */
export function releaseHeld(held: Held): void {
  held.ticket?.cancel();
  releasePhysical(held);
  held.experiment?.release();
  held.slot?.release();
  held.slot = held.experiment = held.ticket = null;
}

/** What an execution needs from its scheduler. */
export interface ExecutionDeps {
  readonly clock: Clock;
  readonly random: Random;
  readonly emit: RunEventSink;
  readonly runAttempt: RunAttempt;
  readonly abandon: AbandonAttempt;
  /** The global cap, re-entered after a backoff sleep with the Attempt's original key. */
  readonly global: PriorityGate;
  readonly physical: PhysicalAdmission;
  /** The ramp, told of every send retry (RETRY-7). */
  readonly ramp: RampController | null;
}

/** The event reference of a slot. */
export function slotRef(slot: PlannedSlot): SlotRef {
  return {
    position: slot.position,
    experimentId: slot.experimentId,
    evalId: slot.evalId,
    ordinal: slot.ordinal,
  };
}

/** One admitted Attempt from `attempt_start` to `attempt_end`. */
export class Execution {
  readonly slot: PlannedSlot;
  readonly #key: PriorityKey;
  readonly #held: Held;
  readonly #deps: ExecutionDeps;
  readonly #controller = new AbortController();
  readonly #ref: SlotRef;
  #attemptId = "";
  #startedAt = 0;
  #timer: TimerHandle | undefined;
  #inBackoff = false;
  /** The fields of the open `backoff` `sleeping` event, until `resumed` closes it. */
  #sleep: Omit<Extract<RunEvent, { type: "backoff" }>, "type" | "at" | "state"> | null = null;
  #started = false;
  #ended = false;
  /** Called once when the signal aborts while the work runs (arms the abort grace, TIME-3). */
  #onAborted: (() => void) | undefined;
  #graceTimer: TimerHandle | undefined;
  /** The work ended its timed part: only its bounded cleanup is left, which is not abandoned. */
  #cleaningUp = false;

  constructor(slot: PlannedSlot, key: PriorityKey, held: Held, deps: ExecutionDeps) {
    this.slot = slot;
    this.#key = key;
    this.#held = held;
    this.#deps = deps;
    this.#ref = slotRef(slot);
  }

  /** True while the Attempt holds no global slot because of send backoff (RUN-2). */
  get inBackoff(): boolean {
    return this.#inBackoff;
  }

  /** True once `attempt_start` was emitted (RUN-1 counts it as running from then on). */
  get started(): boolean {
    return this.#started;
  }

  /** Why the Attempt's signal aborted, if it did. */
  get abortReason(): unknown {
    return this.#controller.signal.aborted ? this.#controller.signal.reason : undefined;
  }

  /**
   * True when the work decides the start: a pooled or group sandbox starts at the lease hand-over
   * (sandboxes.md rule 46), after a new instance may have been created outside the deadline.
   */
  get defersStart(): boolean {
    const reuse = this.slot.sandbox?.reuse;
    return reuse === "pool" || reuse === "group";
  }

  /** Aborts the Attempt's signal; the first reason wins. */
  abort(kind: AbortKind): void {
    if (this.#controller.signal.aborted) return;
    this.#controller.abort(new AbortReason(kind));
    this.#onAborted?.();
  }

  /** Emits `attempt_start` and starts the deadline, synchronously and once (CHAIN-10, TIME-2). */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    const { clock, emit, random } = this.#deps;
    this.#attemptId = random.uuid();
    this.#startedAt = clock.now();
    emit({
      type: "attempt_start",
      at: this.#startedAt,
      slot: this.#ref,
      attemptId: this.#attemptId,
    });
    if (this.slot.timeoutMs !== null) {
      this.#timer = clock.setTimeout(() => this.abort("timeout"), this.slot.timeoutMs);
    }
  }

  /**
   * Runs the per-Attempt work and resolves with its settled result, abandoning a body that ignores
   * its aborted signal for ATTEMPT_ABORT_GRACE_MS (CHAIN-11). Rejects only on internal errors: the
   * work threw, or resolved without an outcome (INT-4).
   */
  async run(): Promise<AttemptResult> {
    const { runAttempt } = this.#deps;
    const { signal } = this.#controller;
    let work: Promise<AttemptResult>;
    try {
      work = Promise.resolve(runAttempt(this.slot, this.#control()));
    } catch (error) {
      work = Promise.reject(error);
    }
    const result = await this.#withAbandonment(work);
    if (!isAttemptResult(result)) {
      throw new Error(
        `Attempt ${this.slot.experimentId} · ${this.slot.evalId}#${this.slot.ordinal} ended without an outcome`,
      );
    }
    const abort = signal.aborted ? abortKind(signal.reason) : undefined;
    return settledResult(result, { timeoutMs: this.slot.timeoutMs, abort });
  }

  /**
   * Resolves with `work`'s value, or — once the signal aborted and ATTEMPT_ABORT_GRACE_MS passed
   * without `work` settling or ending its timed part — with the abandoned result. The abandoned
   * work keeps running unobserved (TIME-3). Work that ended its timed part (`endTimed()`) is
   * waited for: its cleanup destroys the sandbox, each step bounded (TIME-4, sandboxes.md rule 36).
   * `abort()` arms the grace directly: no listener per Attempt.
   */
  #withAbandonment(work: Promise<AttemptResult>): Promise<AttemptResult> {
    const { clock } = this.#deps;
    const { signal } = this.#controller;
    return new Promise((resolve, reject) => {
      const arm = () => {
        if (this.#cleaningUp) return;
        this.#graceTimer = clock.setTimeout(() => {
          resolve(this.#deps.abandon(this.slot, {
            attemptId: this.#attemptId,
            startedAt: this.#startedAt,
            endedAt: clock.now(),
            kind: abortKind(signal.reason) ?? "timeout",
          }));
        }, ATTEMPT_ABORT_GRACE_MS);
      };
      if (signal.aborted) arm();
      else this.#onAborted = arm;
      const done = () => {
        this.#onAborted = undefined;
        this.#disarmGrace();
      };
      work.then(
        (value) => {
          done();
          resolve(value);
        },
        (error) => {
          done();
          reject(error);
        },
      );
    });
  }

  /**
   * Stops the deadline, releases the machine slot, pool lease gate and lane, and emits
   * `attempt_end` (after `attempt_start`, if the work never started the Attempt): the first half
   * of CHAIN-12.
   */
  end(result: AttemptResult): void {
    this.start();
    this.#ended = true;
    this.#endTimed();
    releasePhysical(this.#held);
    const at = this.#deps.clock.now();
    this.#deps.emit({ type: "attempt_end", at, slot: this.#ref, result });
    // A sleep cut short by the deadline or an interrupt is closed right after the end: the
    // OUT-J6 replay (starts − ends − (sleeping − resumed)) counts the Attempt neither as
    // executing nor as sleeping from then on, and never more than the cap at that `resumed`.
    if (this.#sleep !== null) {
      this.#deps.emit({ type: "backoff", at, state: "resumed", ...this.#sleep });
      this.#sleep = null;
    }
  }

  #endTimed(): void {
    if (this.#timer !== undefined) this.#deps.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #disarmGrace(): void {
    if (this.#graceTimer !== undefined) this.#deps.clock.clearTimeout(this.#graceTimer);
    this.#graceTimer = undefined;
  }

  /** What the per-Attempt work reads while it runs (see {@link Control}). */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Set at `attempt_start`. */
  get attemptId(): string {
    return this.#attemptId;
  }

  /** When `attempt_start` was emitted. */
  get startedAt(): number {
    return this.#startedAt;
  }

  /** The deadline as epoch ms once started, else null. */
  get deadline(): number | null {
    return this.#started && this.slot.timeoutMs !== null
      ? this.#startedAt + this.slot.timeoutMs
      : null;
  }

  /** Ends the timed part: cleanup is outside the deadline and is not abandoned (TIME-3). */
  endTimed(): void {
    this.#endTimed();
    this.#cleaningUp = true;
    this.#onAborted = undefined;
    this.#disarmGrace();
  }

  /** Send-retry backoff (see {@link #backoff}). */
  backoff(request: BackoffRequest): Promise<void> {
    return this.#backoff(request);
  }

  /** Before `attempt_start` the Attempt has no row to show an activity in. */
  activity(text: string): void {
    if (this.#started && !this.#ended) {
      this.#deps.emit({ type: "activity", at: this.#deps.clock.now(), slot: this.#ref, text });
    }
  }

  #control(): AttemptControl {
    return new Control(this, this.slot.sandbox ? this.#sandboxAdmission() : undefined);
  }

  #sandboxAdmission(): SandboxAdmission {
    const { physical } = this.#deps;
    const provider = this.slot.sandbox!.provider;
    return {
      poolCapacity: physical.poolCapacity(this.slot),
      priority: this.#key,
      acquireMachineSlot: async (signal) => {
        if (!physical.machine.limited(provider)) return undefined;
        const experimentId = this.slot.experimentId;
        const permit = await physical.machine.tryAcquire(provider, experimentId) ??
          await this.#withoutSlot(() =>
            physical.machine.acquire(provider, this.#key, { signal, experimentId })
          );
        return () => permit.release();
      },
      pace: async (signal) => {
        const pacer = physical.pacing.of(provider);
        if (pacer === null || pacer.tryTake()) return;
        await this.#withoutSlot(() => pacer.take(this.#key, { signal }));
      },
      groupSandboxFailed: (phase) => physical.groups.report(this.slot, phase),
    };
  }

  /**
   * Waits for `wait` without the global slot before `attempt_start` (CHAIN-9, CHAIN-13), then
   * re-takes it with the original key (W12). A started Attempt keeps its slot (W13): releasing it
   * would let `running − backoff` exceed the cap.
   */
  async #withoutSlot<T>(wait: () => Promise<T>): Promise<T> {
    if (this.#started || this.#held.slot === null) return await wait();
    this.#held.slot.release();
    this.#held.slot = null;
    const value = await wait();
    this.#held.slot = await this.#deps.global.acquire(this.#key, {
      signal: this.#controller.signal,
    });
    return value;
  }

  /**
   * Sleeps the send-retry backoff without a global slot, then re-takes one under the original key
   * (RETRY-2, RETRY-4, RETRY-5, PRIO-5). The deadline keeps running: when it fires, the sleep or
   * the re-take rejects with the abort reason at that instant. An Attempt whose backoff was cut
   * short stays counted in `backoff` (it holds no slot) until it settles; `end()` then closes its
   * `sleeping` event with a `resumed` right after `attempt_end` (OUT-J6).
   */
  async #backoff(request: BackoffRequest): Promise<void> {
    const { clock, emit, global } = this.#deps;
    const { signal } = this.#controller;
    if (signal.aborted) throw signal.reason;
    if (this.#inBackoff || this.#held.slot === null) {
      throw new TypeError("Cannot back off: the Attempt holds no global slot");
    }
    this.#deps.ramp?.retried(request.reason); // RETRY-7
    const u = this.#deps.random.next();
    const delayMs = this.#deps.ramp?.backoffMs(request.reason, request.retryAfterMs) ??
      sendBackoffMs(request.retry - 1, u, request.retryAfterMs);
    const fields = {
      slot: this.#ref,
      reason: request.reason,
      retry: request.retry,
      // Retries a send can have: its tries after the first (RETRY-2).
      maxRetries: SEND_MAX_TRIES - 1,
      delayMs,
    };
    emit({ type: "backoff", at: clock.now(), state: "sleeping", ...fields });
    this.#sleep = fields;
    this.#held.slot.release();
    this.#held.slot = null;
    this.#inBackoff = true;
    await sleep(clock, delayMs, { signal });
    this.#held.slot = await global.acquire(this.#key, { signal });
    this.#inBackoff = false;
    this.#sleep = null;
    emit({ type: "backoff", at: clock.now(), state: "resumed", ...fields });
  }
}

function isAttemptResult(value: unknown): value is AttemptResult {
  return typeof value === "object" && value !== null &&
    typeof (value as { verdict?: unknown }).verdict === "string";
}

/**
 * Applies the rules that depend on why the Attempt's signal aborted, whatever the body reported:
 * early exit turns anything but a pass into `skipped` (EARLY-4, cost kept), a deadline into
 * `errored`/`timeout` (TIME-3), an interrupt into `interrupted` (INT-1).
 */
export function settledResult(
  result: AttemptResult,
  options: { readonly timeoutMs: number | null; readonly abort: AbortKind | undefined },
): AttemptResult {
  const { abort } = options;
  if (abort === "early-exit" && result.verdict !== "passed" && result.verdict !== "skipped") {
    return {
      ...result,
      verdict: "skipped",
      outcome: "cancelled",
      skipReason: "early-exit",
      score: null,
      error: null,
    };
  }
  if (abort === "timeout" && !(result.verdict === "errored" && result.error?.code === "timeout")) {
    return {
      ...result,
      verdict: "errored",
      outcome: "errored",
      score: null,
      error: {
        code: "timeout",
        phase: result.error?.phase ?? "test",
        message: `the Attempt exceeded its ${options.timeoutMs} ms deadline`,
        scope: "attempt",
        location: null,
        stack: null,
      },
    };
  }
  if (abort === "interrupt" && result.verdict !== "interrupted") {
    return { ...result, verdict: "interrupted", outcome: "interrupted", score: null, error: null };
  }
  return result;
}
