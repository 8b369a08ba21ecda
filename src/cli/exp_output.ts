/**
 * The output of one `exp` Invocation: NDJSON (`--json`) or human, live (panel on stderr) or plain
 * (append-only). `exp_invocation.ts` talks only to {@link ExpOutput}.
 */
import { isoTime, type RunEvent } from "../_shared/mod.ts";
import {
  CounterTally,
  heartbeatLine,
  humanMode,
  LiveWriter,
  type PanelStart,
  PlainProgress,
  SilenceTimer,
} from "../panel/mod.ts";
import type { RecordWriteError } from "../record/mod.ts";
import {
  endLines,
  NdjsonReporter,
  PermanentLines,
  planLines,
  type RunSummary,
  type StartRamp,
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
interface EndInfo {
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
  /** Flags NEXT lines repeat: `--record` on `show` lines; on `exp` lines also `--attempts` … */
  readonly nextFlags?: { readonly show: readonly string[]; readonly exp: readonly string[] };
}

/** The NDJSON stream of `exp --json` (cli.md §6). */
export function jsonOutput(ctx: OutputContext): ExpOutput {
  const { io, planned, runIds } = ctx;
  const { plan } = planned;
  const runIdById = new Map(plan.experiments.map((e, i) => [e.id, runIds[i]!]));
  const runIdOf = (experimentId: string) => runIdById.get(experimentId)!;
  const progress = progressStream(ctx);
  const ndjson = new NdjsonReporter(progress.write, { now: () => io.clock.now(), runIdOf });
  let receipt = false;
  const finalReceipt = (
    completion: EndInfo["completion"],
    exitCode: number,
    runIdsDone: readonly string[],
    headline: RunSummary["headline"] | null,
  ) => {
    if (receipt) return;
    receipt = true;
    progress.stop();
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
        ramp: startRamp(planned),
        runs: plan.experiments.map((e, i) => ({ experimentId: e.id, runId: runIds[i]! })),
      }),
    event: (event) => {
      progress.event(event);
      ndjson.event(event);
    },
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

/**
 * The stdout of `--json`: every line restarts the silence after which a `progress` line with the
 * live counters is written (OUT-J2).
 */
function progressStream(ctx: OutputContext): {
  /** Writes whole lines. */
  write(text: string): void;
  event(event: RunEvent): void;
  stop(): void;
} {
  const { io } = ctx;
  const tally = new CounterTally(panelStart(ctx));
  const write = (text: string) => {
    io.stdout.write(text);
    silence.touch();
  };
  // The cap in force: the start's, then each `ramp` event's (OUT-J6).
  let cap = ctx.planned.cap.cap;
  const silence = new SilenceTimer(io.clock, {
    onSilence: () => write(progressLine(ctx, tally, cap)),
  });
  return {
    write,
    event: (event) => {
      if (event.type === "ramp") cap = event.cap;
      tally.event(event);
    },
    stop: () => silence.stop(),
  };
}

/** The NDJSON `progress` line (OUT-J2): elapsed time and the live counters. */
function progressLine(ctx: OutputContext, tally: CounterTally, cap: number): string {
  const now = ctx.io.clock.now();
  const c = tally.counters;
  return JSON.stringify({
    type: "progress",
    at: isoTime(now),
    elapsedMs: now - ctx.startedAt,
    total: c.total,
    reused: c.reused,
    running: c.running,
    backoff: c.backoff,
    queued: c.queued,
    passed: c.passed,
    failed: c.failed,
    errored: c.errored,
    skipped: c.skipped,
    cap,
  }) + "\n";
}

/** What the panel is told before the first event. */
function panelStart(ctx: OutputContext): PanelStart {
  const { plan } = ctx.planned;
  return {
    title: ["niceeval exp", ...ctx.positionals].join(" "),
    startedAt: ctx.startedAt,
    total: plan.total,
    reused: plan.reused,
    cap: ctx.planned.cap.cap,
    ramp: ctx.planned.ramp
      ? {
        cap: ctx.planned.ramp.from,
        from: ctx.planned.ramp.from,
        to: ctx.planned.ramp.to,
        state: ctx.planned.ramp.held === null ? "steady" : "held",
        reason: ctx.planned.ramp.held,
      }
      : null,
  };
}

/** The `start` line's `ramp` (OUT-J2), or null when the run does not ramp. */
function startRamp(planned: PlannedRun): StartRamp | null {
  const { ramp } = planned;
  if (!ramp) return null;
  const { from, to, step, windowMs, held } = ramp;
  return { from, to, step, windowMs, held };
}

/** Where human output goes during the run: the live panel, or plain append-only text. */
interface HumanSink {
  /** Called once, after PLAN. */
  start(): void;
  /** One run event and the permanent lines it caused (OUT-H9). */
  event(event: RunEvent, lines: readonly string[]): void;
  /** Permanent lines without an event. */
  lines(lines: readonly string[]): void;
  /** Ends the live part for good: timers cleared, panel erased, cursor shown. Idempotent. */
  stop(): void;
}

/** Human output of `exp` (cli.md §5): live panel on a terminal, else plain (OUT-H1, OUT-H16). */
export function humanOutput(ctx: OutputContext): ExpOutput {
  const { io, planned } = ctx;
  const mode = humanMode({
    env: io.env,
    stdoutIsTerminal: io.stdout.isTerminal,
    stderrIsTerminal: io.stderr.isTerminal,
    stdoutColumns: io.stdout.columns(),
  });
  const layout = { boxed: mode.boxed, width: mode.width, color: mode.color, wrap: mode.wrap };
  const sink = mode.live ? liveSink(ctx, mode.noColor) : plainSink(ctx);
  const pending: string[] = [];
  const permanent = new PermanentLines(planned.plan, (line) => pending.push(line), {
    color: mode.color,
    rampLines: !mode.live, // the live panel shows the ramp on its own line (OUT-5)
    ...(mode.wrap ? { wrapWidth: mode.width } : {}),
  });
  const direct = (lines: readonly string[]) => io.stdout.write(lines.map((l) => l + "\n").join(""));
  return {
    start: () => {
      sink.lines(planLines(
        {
          plan: planned.plan,
          cap: planned.cap.cap,
          capAnnotation: planned.capAnnotation,
          machineBudgets: planned.machineBudgets,
          ramp: planned.ramp,
        },
        layout,
      ));
      sink.start();
    },
    event: (event) => {
      permanent.event(event);
      sink.event(event, pending.splice(0));
    },
    writeFailure: (error) =>
      sink.lines([`✗ record-write-failed · ${error.path}: ${error.message}`]),
    reporterFailed: (_reporter, path, message) =>
      sink.lines([`✗ JUnit report not written: ${path}: ${message}`]),
    end: (summary, info) => {
      sink.stop();
      const wallMs = info.completedAt - ctx.startedAt;
      const { runIds, positionals, nextFlags } = ctx;
      const end = { plan: planned.plan, wallMs, runIds, positionals, nextFlags, layout };
      direct(endLines(summary, { ...end, buildFailures: permanent.buildFailures }));
    },
    failed: () => sink.stop(),
    forced: () => {
      sink.stop();
      direct(["INTERRUPTED  forced exit: unfinished Runs were left unpublished"]);
    },
  };
}

/** Live mode: the panel on stderr, permanent lines above it on stdout (OUT-H6). */
function liveSink(ctx: OutputContext, noColor: boolean): HumanSink {
  const { io } = ctx;
  const writer = new LiveWriter(panelStart(ctx), {
    panel: {
      write: (text) => io.stderr.write(text),
      columns: () => io.stderr.columns(),
      rows: () => io.stderr.rows?.(),
    },
    lines: io.stdout,
    clock: io.clock,
    noColor,
  });
  let unregister: (() => void) | undefined;
  return {
    start: () => {
      // A hard exit (third signal) must still erase the panel and show the cursor.
      unregister = io.atExit?.(() => writer.stop());
      writer.start();
    },
    event: (event, lines) => writer.event(event, lines),
    lines: (lines) => writer.permanent(lines),
    stop: () => {
      writer.stop();
      unregister?.();
    },
  };
}

/** Plain mode: append-only stdout with a heartbeat after 30 s of silence (OUT-H16). */
function plainSink(ctx: OutputContext): HumanSink {
  const { io } = ctx;
  const tally = new CounterTally(panelStart(ctx));
  // With a ramp the heartbeat names the cap in force (OUT-H16).
  let cap = ctx.planned.ramp ? ctx.planned.cap.cap : undefined;
  const silence = new SilenceTimer(io.clock, {
    onSilence: () => io.stdout.write(heartbeatLine(tally, io.clock.now(), cap) + "\n"),
  });
  const lines = (lines: readonly string[]) => {
    if (lines.length === 0) return;
    io.stdout.write(lines.map((line) => line + "\n").join(""));
    silence.touch();
  };
  // The progress line every 10 s and at each tenth of the Attempts (docs/progress.md).
  const progress = new PlainProgress({ clock: io.clock, tally, write: (line) => lines([line]) });
  return {
    start: () => {
      silence.touch();
      progress.start();
    },
    event: (event, permanent) => {
      if (event.type === "ramp" && cap !== undefined) cap = event.cap;
      tally.event(event);
      lines(permanent);
      progress.update();
    },
    lines,
    stop: () => {
      silence.stop();
      progress.stop();
    },
  };
}
