/** `exp --json`: the NDJSON event stream (cli.md §6). Absent values are `null`, never omitted. */
import { isoTime } from "../_shared/mod.ts";
import type { AttemptResult, RunEvent } from "../_shared/mod.ts";
import type { Plan } from "../plan/mod.ts";
import { locatorOf } from "../record/mod.ts";
import type { Headline, RunSummary, SlotReport } from "./summary.ts";
import { isGap } from "./summary.ts";

/** Fields of the `start` line that the reporter cannot derive from the plan. */
export interface StartInfo {
  readonly invocationId: string;
  readonly startedAt: number;
  readonly recordRoot: string;
  readonly concurrency: number;
  readonly concurrencySource: string;
  readonly concurrencyProvider: string | null;
  readonly runs: readonly { readonly experimentId: string; readonly runId: string }[];
}

/** Fields of the `receipt` line. */
export interface ReceiptInfo {
  readonly invocationId: string;
  readonly runIds: readonly string[];
  readonly recordRoot: string;
  readonly startedAt: number;
  readonly completedAt: number;
  readonly completion: "completed" | "interrupted" | "failed";
  readonly headline: Headline | null;
  readonly exitCode: number;
}

/** Writes one JSON object per line through `write`. */
export class NdjsonReporter {
  readonly #write: (line: string) => void;
  readonly #now: () => number;
  readonly #runIdOf: (experimentId: string) => string;

  constructor(
    write: (line: string) => void,
    options: { now: () => number; runIdOf: (experimentId: string) => string },
  ) {
    this.#write = write;
    this.#now = options.now;
    this.#runIdOf = options.runIdOf;
  }

  #emit(type: string, fields: Record<string, unknown>, at = this.#now()): void {
    this.#write(JSON.stringify({ type, at: isoTime(at), ...fields }) + "\n");
  }

  /** The first line. */
  start(plan: Plan, info: StartInfo): void {
    const experimentConcurrency: Record<string, number> = {};
    for (const e of plan.experiments) {
      if (e.maxConcurrency !== null) experimentConcurrency[e.id] = e.maxConcurrency;
    }
    this.#emit("start", {
      format: "niceeval.exp",
      schemaVersion: 1,
      invocationId: info.invocationId,
      startedAt: isoTime(info.startedAt),
      recordRoot: info.recordRoot,
      total: plan.total,
      evals: plan.evalCount,
      configs: plan.experiments.length,
      concurrency: info.concurrency,
      concurrencySource: info.concurrencySource,
      concurrencyProvider: info.concurrencyProvider,
      ramp: null,
      experimentConcurrency,
      reused: plan.reused,
      toRun: plan.toRun,
      runs: info.runs,
    }, info.startedAt);
  }

  /** Serializes one run event (internal-only events are skipped). */
  event(e: RunEvent): void {
    switch (e.type) {
      case "attempt_start":
        return this.#emit("attempt_start", {
          ...slotFields(e.slot),
          attemptId: e.attemptId,
          locator: locatorOf(e.attemptId),
          runId: this.#runIdOf(e.slot.experimentId),
          startedAt: isoTime(e.at),
        }, e.at);
      case "attempt_end":
        return this.#attemptEnd(e.result, e.at);
      case "backoff":
        return this.#emit("backoff", {
          ...slotFields(e.slot),
          locator: null,
          state: e.state,
          reason: e.reason,
          retry: e.retry,
          maxRetries: e.maxRetries,
          delayMs: e.delayMs,
        }, e.at);
      case "not_dispatched":
        return this.#emit("not_dispatched", { ...slotFields(e.slot), reason: e.reason }, e.at);
      case "slot_errored":
        return this.#emit("error", {
          ...slotFields(e.slot),
          locator: null,
          code: e.code,
          phase: e.phase,
          message: e.message,
        }, e.at);
      case "experiment_setup":
      case "experiment_teardown":
        return this.#emit(e.type, {
          experimentId: e.experimentId,
          status: e.status,
          durationMs: e.durationMs,
          message: e.message,
        }, e.at);
      case "diagnostic": {
        if (e.code === "budget-exhausted") {
          return this.#emit("budget_exhausted", {
            experimentId: e.experimentId,
            budgetUSD: e.data?.budgetUSD ?? null,
            spentUSD: e.data?.spentUSD ?? null,
            unstarted: e.data?.unstarted ?? null,
          }, e.at);
        }
        const type = e.level === "info" ? "notice" : e.level;
        return this.#emit(type, {
          code: e.code,
          message: e.message,
          experimentId: e.experimentId,
          evalId: e.evalId,
          data: e.data,
        }, e.at);
      }
      case "interrupted":
        return this.#emit("interrupted", { signal: e.signal }, e.at);
      default:
        return;
    }
  }

  #attemptEnd(r: AttemptResult, at: number): void {
    const locator = locatorOf(r.attemptId);
    const slot = { experimentId: r.experimentId, evalId: r.evalId, ordinal: r.ordinal };
    this.#emit("attempt_end", {
      ...slot,
      attemptId: r.attemptId,
      locator,
      runId: this.#runIdOf(r.experimentId),
      startedAt: isoTime(r.startedAt),
      endedAt: isoTime(r.endedAt),
      durationMs: r.endedAt - r.startedAt,
      outcome: r.outcome,
      verdict: r.verdict,
      score: r.score,
      skipReason: r.skipReason,
      errorCode: r.error?.code ?? null,
      usage: r.usage,
      estimatedCostUSD: r.estimatedCostUSD,
    }, at);
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
      this.#emit("failure", { ...slot, locator, assertions }, at);
    } else if (r.verdict === "errored" && r.error) {
      this.#emit("error", {
        ...slot,
        locator,
        code: r.error.code,
        phase: r.error.phase,
        message: r.error.message,
      }, at);
    }
  }

  /** The `eval` lines, one per (experiment, eval) in ORD-2 order. */
  evals(summary: RunSummary): void {
    const groups = new Map<string, SlotReport[]>();
    for (const row of summary.rows) {
      const key = `${row.slot.evalIndex}\u0000${row.slot.experimentIndex}`;
      groups.set(key, [...(groups.get(key) ?? []), row]);
    }
    for (const rows of groups.values()) this.#emit("eval", evalFields(rows));
  }

  /** The last line. */
  receipt(info: ReceiptInfo): void {
    this.#emit("receipt", {
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
    this.#emit("reporter_error", { reporter, required, message });
  }
}

function slotFields(slot: { experimentId: string; evalId: string; ordinal: number }) {
  return { experimentId: slot.experimentId, evalId: slot.evalId, ordinal: slot.ordinal };
}

function evalFields(rows: readonly SlotReport[]): Record<string, unknown> {
  const first = rows[0]!.slot;
  const count = (pred: (r: SlotReport) => boolean) => rows.filter(pred).length;
  const scored = rows.filter((r) => r.verdict === "scored");
  const c = {
    passed: count((r) => r.verdict === "passed"),
    failed: count((r) => r.verdict === "failed"),
    errored: count((r) => r.verdict === "errored"),
    skipped: count((r) => r.verdict === "skipped"),
    scored: scored.length,
    reused: count((r) => r.state === "carried"),
    unstarted: count((r) => isGap(r)),
    notNeeded: count((r) => r.reason === "early-exit" && r.verdict === null),
  };
  const interrupted = count((r) => r.verdict === "interrupted" || r.reason === "interrupted");
  const verdict = c.errored > 0
    ? "errored"
    : c.failed > 0
    ? "failed"
    : interrupted > 0
    ? "interrupted"
    : c.unstarted > 0
    ? "incomplete"
    : c.passed > 0
    ? "passed"
    : c.scored > 0
    ? "scored"
    : "skipped";
  return {
    experimentId: first.experimentId,
    evalId: first.evalId,
    kind: first.kind,
    verdict,
    planned: rows.length,
    ...c,
    score: scored.length > 0
      ? scored.reduce((sum, r) => sum + (r.score ?? 0), 0) / scored.length
      : null,
    attempts: rows.map((r) => ({
      ordinal: r.slot.ordinal,
      locator: r.locator,
      verdict: r.verdict ?? (r.reason === "interrupted" ? "interrupted" : "skipped"),
      carried: r.state === "carried",
      reason: r.state === "executed" ? r.result?.skipReason ?? null : r.reason,
    })),
  };
}
