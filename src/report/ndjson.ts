/** `exp --json`: the NDJSON event stream (cli.md §6). Absent values are `null`, never omitted. */
import { isoTime, USAGE_FIELDS } from "../_shared/mod.ts";
import type { AttemptResult, RunEvent, Usage } from "../_shared/mod.ts";
import type { Plan } from "../plan/mod.ts";
import { locatorOf } from "../record/mod.ts";
import { evalGroups, evalLine, type NdjsonLine } from "./_eval_line.ts";
import type { Headline, RunSummary } from "./summary.ts";

/** Fields of the `start` line that the reporter cannot derive from the plan. */
interface StartInfo {
  readonly invocationId: string;
  readonly startedAt: number;
  readonly recordRoot: string;
  readonly concurrency: number;
  readonly concurrencySource: string;
  readonly concurrencyProvider: string | null;
  /** The ramp, when the run ramps (OUT-6); absent or null: no ramp. */
  readonly ramp?: StartRamp | null;
  readonly runs: readonly { readonly experimentId: string; readonly runId: string }[];
}

/** The `start` line's `ramp` (OUT-J2): its settings and a hold in force at start. */
export interface StartRamp {
  readonly from: number;
  readonly to: number;
  readonly step: number;
  readonly windowMs: number;
  readonly held: string | null;
}

/** Fields of the `receipt` line. */
interface ReceiptInfo {
  readonly invocationId: string;
  readonly runIds: readonly string[];
  readonly recordRoot: string;
  readonly startedAt: number;
  readonly completedAt: number;
  readonly completion: "completed" | "interrupted" | "failed";
  readonly headline: Headline | null;
  readonly exitCode: number;
}

/** Eval lines are written in chunks of about this many characters (one stdout write each). */
const EVAL_CHUNK_CHARS = 32 * 1024;

/**
 * Writes one JSON object per line through `write` (whole lines, one or more per call). Each line
 * is one object literal, `type` and `at` first, serialized once.
 */
export class NdjsonReporter {
  readonly #write: (text: string) => void;
  readonly #now: () => number;
  readonly #runIdOf: (experimentId: string) => string;
  /** Locators of the Attempts between `attempt_start` and `attempt_end`, by Attempt id. */
  readonly #locators = new Map<string, string>();

  constructor(
    write: (text: string) => void,
    options: { now: () => number; runIdOf: (experimentId: string) => string },
  ) {
    this.#write = write;
    this.#now = options.now;
    this.#runIdOf = options.runIdOf;
  }

  #emit(line: NdjsonLine): void {
    this.#write(JSON.stringify(line) + "\n");
  }

  /** The first line. */
  start(plan: Plan, info: StartInfo): void {
    const experimentConcurrency: Record<string, number> = {};
    for (const e of plan.experiments) {
      if (e.maxConcurrency !== null) experimentConcurrency[e.id] = e.maxConcurrency;
    }
    const startedAt = isoTime(info.startedAt);
    this.#emit({
      type: "start",
      at: startedAt,
      format: "niceeval.exp",
      schemaVersion: 1,
      invocationId: info.invocationId,
      startedAt,
      recordRoot: info.recordRoot,
      total: plan.total,
      evals: plan.evalCount,
      configs: plan.experiments.length,
      concurrency: info.concurrency,
      concurrencySource: info.concurrencySource,
      concurrencyProvider: info.concurrencyProvider,
      ramp: info.ramp ?? null,
      experimentConcurrency,
      reused: plan.reused,
      toRun: plan.toRun,
      runs: info.runs,
    });
  }

  /** Serializes one run event (internal-only events are skipped). */
  event(e: RunEvent): void {
    switch (e.type) {
      case "attempt_start":
        return this.#attemptStart(e);
      case "attempt_end":
        return this.#attemptEnd(e.result, e.at);
      case "backoff":
        return this.#emit({
          type: "backoff",
          at: isoTime(e.at),
          experimentId: e.slot.experimentId,
          evalId: e.slot.evalId,
          ordinal: e.slot.ordinal,
          locator: null,
          state: e.state,
          reason: e.reason,
          retry: e.retry,
          maxRetries: e.maxRetries,
          delayMs: e.delayMs,
        });
      case "not_dispatched":
        return this.#emit({
          type: "not_dispatched",
          at: isoTime(e.at),
          experimentId: e.slot.experimentId,
          evalId: e.slot.evalId,
          ordinal: e.slot.ordinal,
          reason: e.reason,
        });
      case "slot_errored":
        return this.#emit({
          type: "error",
          at: isoTime(e.at),
          experimentId: e.slot.experimentId,
          evalId: e.slot.evalId,
          ordinal: e.slot.ordinal,
          locator: null,
          code: e.code,
          phase: e.phase,
          message: e.message,
          location: null,
          stack: null,
        });
      case "experiment_setup":
      case "experiment_teardown":
        return this.#emit({
          type: e.type,
          at: isoTime(e.at),
          experimentId: e.experimentId,
          status: e.status,
          durationMs: e.durationMs,
          message: e.message,
        });
      case "diagnostic":
        return this.#diagnostic(e);
      case "interrupted":
        return this.#emit({ type: "interrupted", at: isoTime(e.at), signal: e.signal });
      case "ramp":
        return this.#emit({
          type: "ramp",
          at: isoTime(e.at),
          cap: e.cap,
          previousCap: e.previousCap,
          from: e.from,
          to: e.to,
          state: e.state,
          cause: e.cause,
          reason: e.reason,
        });
      default:
        return;
    }
  }

  #attemptStart(e: Extract<RunEvent, { type: "attempt_start" }>): void {
    const locator = locatorOf(e.attemptId);
    this.#locators.set(e.attemptId, locator);
    const at = isoTime(e.at);
    this.#emit({
      type: "attempt_start",
      at,
      experimentId: e.slot.experimentId,
      evalId: e.slot.evalId,
      ordinal: e.slot.ordinal,
      attemptId: e.attemptId,
      locator,
      runId: this.#runIdOf(e.slot.experimentId),
      startedAt: at,
    });
  }

  #attemptEnd(r: AttemptResult, at: number): void {
    const locator = this.#locators.get(r.attemptId) ?? locatorOf(r.attemptId);
    this.#locators.delete(r.attemptId);
    const atText = isoTime(at);
    this.#emit({
      type: "attempt_end",
      at: atText,
      experimentId: r.experimentId,
      evalId: r.evalId,
      ordinal: r.ordinal,
      attemptId: r.attemptId,
      locator,
      runId: this.#runIdOf(r.experimentId),
      startedAt: isoTime(r.startedAt),
      endedAt: r.endedAt === at ? atText : isoTime(r.endedAt),
      durationMs: r.endedAt - r.startedAt,
      outcome: r.outcome,
      verdict: r.verdict,
      score: r.score,
      // Score evals (docs/scores.md): the possible score and the pass threshold, else null.
      possible: r.possible ?? null,
      passAt: r.passAt ?? null,
      skipReason: r.skipReason,
      errorCode: r.error?.code ?? null,
      errorLocation: r.error?.location ?? null,
      usage: usageLine(r.usage),
      estimatedCostUSD: r.estimatedCostUSD,
    });
    if (r.verdict === "failed") {
      const assertions = r.details.assertions.filter((a) => a.status === "failed").slice(0, 10).map(
        (a) => ({
          criterion: a.criterion,
          matcher: a.matcher,
          expected: a.expected,
          received: a.received,
          reason: a.reason,
          source: a.source,
        }),
      );
      this.#emit({
        type: "failure",
        at: atText,
        experimentId: r.experimentId,
        evalId: r.evalId,
        ordinal: r.ordinal,
        locator,
        assertions,
      });
    } else if (r.verdict === "errored" && r.error) {
      this.#emit({
        type: "error",
        at: atText,
        experimentId: r.experimentId,
        evalId: r.evalId,
        ordinal: r.ordinal,
        locator,
        code: r.error.code,
        phase: r.error.phase,
        message: r.error.message,
        location: r.error.location ?? null,
        stack: r.error.stack ?? null,
      });
    }
  }

  #diagnostic(e: Extract<RunEvent, { type: "diagnostic" }>): void {
    const at = isoTime(e.at);
    if (e.code === "budget-exhausted") {
      return this.#emit({
        type: "budget_exhausted",
        at,
        experimentId: e.experimentId,
        budgetUSD: e.data?.budgetUSD ?? null,
        spentUSD: e.data?.spentUSD ?? null,
        unstarted: e.data?.unstarted ?? null,
      });
    }
    if (e.level === "error") {
      // An `error` line has the fields of OUT-J2 whatever raised it (a halt has no Attempt).
      const data = e.data ?? {};
      return this.#emit({
        type: "error",
        at,
        experimentId: e.experimentId,
        evalId: e.evalId,
        ordinal: typeof data.ordinal === "number" ? data.ordinal : null,
        locator: typeof data.locator === "string" ? data.locator : null,
        code: e.code,
        phase: typeof data.phase === "string" ? data.phase : null,
        message: e.message,
        data: e.data,
      });
    }
    this.#emit({
      type: e.level === "info" ? "notice" : e.level,
      at,
      code: e.code,
      message: e.message,
      experimentId: e.experimentId,
      evalId: e.evalId,
      data: e.data,
    });
  }

  /** The `eval` lines, one per (experiment, eval) in ORD-2 order, written in a few chunks. */
  evals(summary: RunSummary): void {
    let chunk = "";
    for (const rows of evalGroups(summary.rows)) {
      chunk += JSON.stringify(evalLine(rows, isoTime(this.#now()))) + "\n";
      if (chunk.length >= EVAL_CHUNK_CHARS) {
        this.#write(chunk);
        chunk = "";
      }
    }
    if (chunk !== "") this.#write(chunk);
  }

  /** The last line. */
  receipt(info: ReceiptInfo): void {
    this.#emit({
      type: "receipt",
      at: isoTime(this.#now()),
      invocationId: info.invocationId,
      runIds: info.runIds,
      recordRoot: info.recordRoot,
      startedAt: isoTime(info.startedAt),
      completedAt: isoTime(info.completedAt),
      completion: info.completion,
      headline: info.headline,
      exitCode: info.exitCode,
    });
  }

  /** A reporter failed (`--junit` is required: the exit code becomes 1). */
  reporterError(reporter: string, required: boolean, message: string): void {
    this.#emit({ type: "reporter_error", at: isoTime(this.#now()), reporter, required, message });
  }
}

/**
 * `attempt_end.usage`: null without usage, else every key of {@link USAGE_FIELDS}, absent ones
 * null (OUT-J1); other keys an agent reported are kept.
 */
function usageLine(usage: Usage | null): Record<string, unknown> | null {
  if (usage === null) return null;
  const line: Record<string, unknown> = {};
  for (const key of USAGE_FIELDS) line[key] = null;
  for (const [key, value] of Object.entries(usage)) line[key] = value ?? null;
  return line;
}
