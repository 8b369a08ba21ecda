/** Mutable per-Attempt bookkeeping shared by the test context and the runner. */
import type { Clock } from "../_shared/mod.ts";
import type { RecordedDiagnostic, RetryTally, TurnLog } from "../_shared/mod.ts";
import {
  deepFreeze,
  isJsonValue,
  isPlainObject,
  type JsonValue,
  raceAbort,
} from "../_shared/mod.ts";
import type { TurnRecord } from "../agents/mod.ts";
import type { AttemptControl, BackoffRequest } from "../scheduler/mod.ts";
import type { RecordedFailure } from "./failure.ts";

const DIAGNOSTIC_CODE_REGEXP = /^[a-z0-9][a-z0-9.-]{0,63}$/;
const LEVELS: readonly string[] = ["info", "warning", "error"];

/** Everything one Attempt accumulates while it runs. */
export class AttemptState {
  readonly #clock: Clock;
  #failure: RecordedFailure | undefined;
  readonly turns: TurnRecord[] = [];
  readonly turnLogs: TurnLog[] = [];
  readonly diagnostics: RecordedDiagnostic[] = [];
  readonly #dedupe = new Set<string>();
  readonly logs: { at: number; text: string }[] = [];
  readonly phases: { phase: string; startedAt: number; endedAt: number }[] = [];
  readonly #retries = new Map<string, RetryTally>();
  readonly #backoffs = new Set<Promise<unknown>>();
  #backoffChain: Promise<unknown> = Promise.resolve();
  /** Retries used so far in this Attempt (ATTEMPT_MAX_RETRIES). */
  retriesUsed = 0;
  /** Sends that reached the agent. */
  turnCount = 0;
  /** `t.skip` reason, once called. */
  skipReason: string | undefined;
  /** True when the agent setup or the test body ended by a throw after the signal aborted. */
  cutShort = false;
  /** True once the test body settled; a later `t.skip` registers nothing. */
  bodySettled = false;
  /** True when the runner stopped waiting for the timed part after the abort grace (TIME-3). */
  abandoned = false;
  #timedEndedAt: number | undefined;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /**
   * Marks the end of the timed part, once: the body and its assertions are done, and teardowns
   * and cleanup that follow are outside the deadline and outside `timedMs`.
   */
  endTimed(): void {
    this.#timedEndedAt ??= this.#clock.now();
  }

  /** When the timed part ended, if it did. */
  get timedEndedAt(): number | undefined {
    return this.#timedEndedAt;
  }

  /** The first recorded execution failure. */
  get failure(): RecordedFailure | undefined {
    return this.#failure;
  }

  /** Records an execution failure; the first one wins. */
  fail(failure: RecordedFailure): void {
    this.#failure ??= failure;
  }

  /** Counts one retry. */
  retried(phase: RetryTally["phase"], reason: string): void {
    const key = `${phase}\u0000${reason}`;
    const prev = this.#retries.get(key);
    this.#retries.set(key, { phase, reason, count: (prev?.count ?? 0) + 1 });
    this.retriesUsed++;
  }

  /**
   * Adds provisioning retries to the tallies (`retries` of the result, cli.md §9). They do not use
   * the Attempt's send-retry budget (ATTEMPT_MAX_RETRIES): sandbox create has its own limit
   * (RETRY-6).
   */
  tally(phase: RetryTally["phase"], reason: string, count: number): void {
    if (count <= 0) return;
    const key = `${phase}\u0000${reason}`;
    const prev = this.#retries.get(key);
    this.#retries.set(key, { phase, reason, count: (prev?.count ?? 0) + count });
  }

  /** Retry tallies in first-seen order. */
  retries(): RetryTally[] {
    return [...this.#retries.values()];
  }

  /**
   * Sleeps one send-retry backoff through `control`, or rejects with `signal.reason` as soon as
   * `signal` aborts. Backoffs of concurrent sessions run one after another: the scheduler takes
   * one backoff at a time from an Attempt that holds its global slot. Each backoff is tracked
   * until it settles, so that the runner can outwait it (`idle()`).
   */
  backoff(control: AttemptControl, request: BackoffRequest, signal: AbortSignal): Promise<void> {
    const sleeping = this.#backoffChain.then(() =>
      signal.aborted ? Promise.reject(signal.reason) : control.backoff(request)
    );
    const tracked = sleeping.catch(() => undefined).finally(() => this.#backoffs.delete(tracked));
    this.#backoffChain = tracked;
    this.#backoffs.add(tracked);
    return raceAbort(sleeping, signal);
  }

  /** Resolves once no scheduler backoff of this Attempt is still sleeping. */
  async idle(): Promise<void> {
    while (this.#backoffs.size > 0) await Promise.all([...this.#backoffs]);
  }

  /**
   * Adds a diagnostic; `(code, dedupeKey)` pairs are stored once. An invalid code is replaced by
   * `diagnostic-invalid-code`, an invalid level by `warning`, and data that is not JSON is dropped.
   */
  diagnostic(d: {
    code: string;
    level: "info" | "warning" | "error";
    message: string;
    data?: Record<string, JsonValue> | undefined;
    dedupeKey?: string | undefined;
  }): void {
    const input: Partial<typeof d> = typeof d === "object" && d !== null ? d : {};
    const code = typeof input.code === "string" && DIAGNOSTIC_CODE_REGEXP.test(input.code)
      ? input.code
      : "diagnostic-invalid-code";
    if (input.dedupeKey !== undefined) {
      const key = `${code}\u0000${String(input.dedupeKey)}`;
      if (this.#dedupe.has(key)) return;
      this.#dedupe.add(key);
    }
    const data = isPlainObject(input.data) && isJsonValue(input.data)
      ? deepFreeze(structuredClone(input.data))
      : null;
    this.diagnostics.push({
      code,
      level: LEVELS.includes(input.level as string) ? input.level! : "warning",
      message: String(input.message),
      data,
    });
  }

  /**
   * Keeps a log line: `t.log`, `ctx.log`, sandbox command evidence, and `console.*` output made
   * during the Attempt (the runner's `console` option hands this state to the console scope).
   */
  log(text: string): void {
    this.logs.push({ at: this.#clock.now(), text });
  }

  /** Runs `body` as a named phase, recording its start and end. */
  async phase<T>(name: string, body: () => Promise<T>): Promise<T> {
    const startedAt = this.#clock.now();
    try {
      return await body();
    } finally {
      this.phases.push({ phase: name, startedAt, endedAt: this.#clock.now() });
    }
  }
}
