/** Mutable per-Attempt bookkeeping shared by the test context and the runner. */
import type { Clock } from "../_shared/mod.ts";
import type { RecordedDiagnostic, RetryTally, TurnLog } from "../_shared/mod.ts";
import type { JsonValue } from "../_shared/mod.ts";
import type { TurnRecord } from "../agents/mod.ts";
import type { RecordedFailure } from "./failure.ts";

const DIAGNOSTIC_CODE_REGEXP = /^[a-z0-9][a-z0-9.-]{0,63}$/;

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
  /** Retries used so far in this Attempt (ATTEMPT_MAX_RETRIES). */
  retriesUsed = 0;
  /** Sends that reached the agent. */
  turnCount = 0;
  /** `t.skip` reason, once called. */
  skipReason: string | undefined;

  constructor(clock: Clock) {
    this.#clock = clock;
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

  /** Retry tallies in first-seen order. */
  retries(): RetryTally[] {
    return [...this.#retries.values()];
  }

  /** Adds a diagnostic; `(code, dedupeKey)` pairs are stored once. Invalid codes are replaced. */
  diagnostic(d: {
    code: string;
    level: "info" | "warning" | "error";
    message: string;
    data?: Record<string, JsonValue> | undefined;
    dedupeKey?: string | undefined;
  }): void {
    const code = DIAGNOSTIC_CODE_REGEXP.test(d.code) ? d.code : "diagnostic-invalid-code";
    if (d.dedupeKey !== undefined) {
      const key = `${code}\u0000${d.dedupeKey}`;
      if (this.#dedupe.has(key)) return;
      this.#dedupe.add(key);
    }
    this.diagnostics.push({
      code,
      level: d.level,
      message: String(d.message),
      data: d.data ?? null,
    });
  }

  /** Keeps a log line. */
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
