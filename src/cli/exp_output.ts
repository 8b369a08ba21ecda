/**
 * The output of one `exp` Invocation: NDJSON (`--json`) or human (plain today; the live panel
 * plugs in here). `exp_invocation.ts` talks only to {@link ExpOutput}.
 */
import type { RunEvent } from "../_shared/mod.ts";
import type { RecordWriteError } from "../record/mod.ts";
import {
  endLines,
  NdjsonReporter,
  PermanentLines,
  planLines,
  type RunSummary,
} from "../report/mod.ts";
import type { Io } from "./io.ts";
import type { PlannedRun } from "./plan_run.ts";

/** What every output of `exp` receives. */
export interface ExpOutput {
  /** PLAN, or the NDJSON `start` line. */
  start(): void;
  /** One run event. */
  event(event: RunEvent): void;
  /** A Record write failed (REC-9). */
  writeFailure(error: RecordWriteError): void;
  /** A required reporter failed (JUNIT-6). */
  reporterFailed(reporter: string, path: string, message: string): void;
  /** End panels, or the NDJSON `eval` lines and the receipt. */
  end(summary: RunSummary, info: EndInfo): void;
  /** The receipt of an internal error (OUT-J3). */
  failed(): void;
  /** The receipt of a forced exit after a second interrupt (INT-2). */
  forced(): void;
}

/** How the Invocation ended. */
export interface EndInfo {
  readonly publishedRunIds: readonly string[];
  readonly completedAt: number;
  readonly completion: "completed" | "interrupted" | "failed";
  readonly exitCode: number;
}

/** What an output knows of its Invocation. */
export interface OutputContext {
  readonly io: Io;
  readonly invocationId: string;
  readonly startedAt: number;
  readonly recordRoot: string;
  readonly planned: PlannedRun;
  readonly runIds: readonly string[];
  /** Positionals of the command as typed, for NEXT lines. */
  readonly positionals: readonly string[];
}

/** The NDJSON stream of `exp --json` (cli.md §6). */
export function jsonOutput(ctx: OutputContext): ExpOutput {
  const { io, planned, runIds } = ctx;
  const { plan } = planned;
  const runIdOf = (experimentId: string) =>
    runIds[plan.experiments.findIndex((e) => e.id === experimentId)]!;
  const ndjson = new NdjsonReporter((line) => io.stdout.write(line), {
    now: () => io.clock.now(),
    runIdOf,
  });
  let receipt = false;
  const finalReceipt = (
    completion: EndInfo["completion"],
    exitCode: number,
    runIdsDone: readonly string[],
    headline: RunSummary["headline"] | null,
  ) => {
    if (receipt) return;
    receipt = true;
    ndjson.receipt({
      invocationId: ctx.invocationId,
      runIds: runIdsDone,
      recordRoot: ctx.recordRoot,
      startedAt: ctx.startedAt,
      completedAt: io.clock.now(),
      completion,
      headline,
      exitCode,
    });
  };
  return {
    start: () =>
      ndjson.start(plan, {
        invocationId: ctx.invocationId,
        startedAt: ctx.startedAt,
        recordRoot: ctx.recordRoot,
        concurrency: planned.cap.cap,
        concurrencySource: planned.cap.source,
        concurrencyProvider: planned.cap.provider,
        runs: plan.experiments.map((e, i) => ({ experimentId: e.id, runId: runIds[i]! })),
      }),
    event: (event) => ndjson.event(event),
    writeFailure: (error) =>
      ndjson.event({
        type: "diagnostic",
        at: io.clock.now(),
        level: "error",
        code: "record-write-failed",
        message: `${error.path}: ${error.message}`,
        experimentId: null,
        evalId: null,
        data: null,
        persist: false,
      }),
    reporterFailed: (reporter, path, message) =>
      ndjson.reporterError(reporter, true, `${path}: ${message}`),
    end: (summary, info) => {
      ndjson.evals(summary);
      finalReceipt(info.completion, info.exitCode, info.publishedRunIds, summary.headline);
    },
    failed: () => finalReceipt("failed", 3, [], null),
    forced: () => finalReceipt("interrupted", 130, [], "INTERRUPTED"),
  };
}

/** Plain, append-only human output (cli.md §5, OUT-H16). */
export function humanOutput(ctx: OutputContext): ExpOutput {
  const { io, planned } = ctx;
  const out = (line: string) => io.stdout.write(line + "\n");
  const permanent = new PermanentLines(planned.plan, out);
  return {
    start: () =>
      planLines({ plan: planned.plan, cap: planned.cap.cap, capAnnotation: planned.capAnnotation })
        .forEach(out),
    event: (event) => permanent.event(event),
    writeFailure: (error) => out(`✗ record-write-failed · ${error.path}: ${error.message}`),
    reporterFailed: (_reporter, path, message) =>
      out(`✗ JUnit report not written: ${path}: ${message}`),
    end: (summary, info) =>
      endLines(summary, {
        plan: planned.plan,
        wallMs: info.completedAt - ctx.startedAt,
        runIds: ctx.runIds,
        positionals: ctx.positionals,
      }).forEach(out),
    failed: () => {},
    forced: () => out("INTERRUPTED  forced exit: unfinished Runs were left unpublished"),
  };
}
