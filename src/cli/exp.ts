/**
 * `niceeval exp` — the composition root of a run: plan, then hand `runPlan` the attempt runner and
 * subscribe the Record writer and the reporters to its events. No domain logic lives here.
 */
import { resolve } from "node:path";
import type { RunEvent } from "../_shared/mod.ts";
import { abandonedResult, createAttemptRunner } from "../attempt/mod.ts";
import { RecordWriter } from "../record/mod.ts";
import { dryDocument, dryLines, OutcomeTable, planLines } from "../report/mod.ts";
import { FORCE_CLEANUP_MS, runPlan } from "../scheduler/mod.ts";
import { humanMode } from "../panel/mod.ts";
import { isoTime, onAbort, raceAbort, sleep } from "../_shared/mod.ts";
import {
  createKeyedMutex,
  createProcessProbe,
  lockRecordRoot,
  readProcessIdentity,
  stateDirOf,
} from "../coordination/mod.ts";
import type { RunPlanOptions, SchedulerCoordination } from "../scheduler/mod.ts";
import type { ExpOptions } from "./exp_options.ts";
import { finishRun, type Invocation, openInvocation } from "./exp_invocation.ts";
import type { Io } from "./io.ts";
import { internalHint, writeErrorLine } from "./json_errors.ts";
import { failedPreconditions, openSandboxes, planRun, type SandboxWiring } from "./plan_run.ts";
import { orNothingFailed } from "./last_failed.ts";
import { loadProject, printWarnings, requireConfig } from "./project.ts";
import { checkRecordRoot, junitTarget } from "./path_flags.ts";
import { DEFAULT_RECORD_ROOT } from "./exp_defaults.ts";
import { salvageNotice, unpublishedWarning } from "./exp_warnings.ts";
import { openRampFiles, type RampFiles } from "./ramp_run.ts";
import { processHeapGovernor } from "./heap_governor.ts";

/** Runs `exp` (or `exp --dry`); returns the exit code. */
export async function runExp(io: Io, options: ExpOptions): Promise<number> {
  if (options.teardown) {
    const { runTeardownMode } = await import("./teardown.ts");
    return await runTeardownMode(io, options.teardown);
  }
  const recordRoot = resolve(io.cwd, options.record ?? DEFAULT_RECORD_ROOT);
  await checkRecordRoot(recordRoot, options.record);
  if (options.junit !== undefined) await junitTarget(io.cwd, options.junit);
  if (options.dry) return await runDry(io, options, recordRoot);
  await requireConfig(io.cwd);
  await using _lock = await lockRecordRoot(recordRoot, stateDirOf(io.env), {
    pid: io.pid,
    hostname: io.hostname,
    startedAt: isoTime(io.clock.now()),
  });
  const project = await loadProject(io, { experiments: true });
  if (!options.json) printWarnings(io, project.discovered.warnings);
  const planned = await orNothingFailed(io, options, planRun(io, { project, options, recordRoot }));
  if (planned === null) return 0;
  // Read once (rule 92): the same identity stamps coordination records and sandbox owners.
  const probe = createProcessProbe();
  const identity = await readProcessIdentity({ host: io.hostname, pid: io.pid, probe });
  const heap = await processHeapGovernor();
  const invocation = openInvocation(io, { options, planned, project, recordRoot, heap });
  heap.check();
  const sandboxes = await openSandboxes(io, {
    planned,
    project,
    runIds: invocation.runIds,
    identity,
    probe,
    ...(options.maxBuildConcurrency !== undefined
      ? { maxBuildConcurrency: options.maxBuildConcurrency }
      : {}),
  });
  await using live = await openRampFiles(io, project.root, invocation);
  return await execute(io, invocation, {
    ramp: live,
    sandboxes,
    blocked: await failedPreconditions(planned.plan, project.env),
    coordination: {
      projectRoot: project.root,
      invocationId: invocation.id,
      identity,
      probe,
      mutex: createKeyedMutex(),
      force: io.forceInterrupt,
    },
  });
}

async function runDry(io: Io, options: ExpOptions, recordRoot: string): Promise<number> {
  const project = await loadProject(io, { experiments: true });
  if (!options.json) printWarnings(io, project.discovered.warnings);
  const planned = await orNothingFailed(io, options, planRun(io, { project, options, recordRoot }));
  return planned === null ? 0 : printDry(io, options, planned, recordRoot);
}

function printDry(
  io: Io,
  options: ExpOptions,
  planned: Awaited<ReturnType<typeof planRun>>,
  recordRoot: string,
): number {
  const { plan, cap } = planned;
  // REC-10: one reader warning per command; stderr, or `problems` with --json (cli.md §4.2).
  const unpublished = unpublishedWarning(planned.unpublished, recordRoot);
  const salvage = salvageNotice(planned.salvage, recordRoot, true);
  const problems = [
    ...(salvage ? [{ code: "record-salvage-pending", message: salvage }] : []),
    ...(unpublished ? [{ code: "record-unpublished-runs", message: unpublished }] : []),
  ];
  // FLAG-3: the same notice as a real run (`experiment-no-evals`), on stdout after PLAN.
  const notices = planned.emptyExperimentIds.map((id) => ({
    code: "experiment-no-evals",
    message: `experiment ${id} has no selected evals; left out`,
    experimentId: id,
  }));
  if (options.json) {
    const experimentConcurrency: Record<string, number> = {};
    for (const e of plan.experiments) {
      if (e.maxConcurrency !== null) experimentConcurrency[e.id] = e.maxConcurrency;
    }
    io.stdout.write(
      JSON.stringify(dryDocument(plan, {
        recordRoot,
        total: plan.total,
        evals: plan.evalCount,
        configs: plan.experiments.length,
        reused: plan.reused,
        toRun: plan.toRun,
        concurrency: cap.cap,
        concurrencySource: cap.source,
        concurrencyProvider: cap.provider,
        ramp: planned.ramp
          ? {
            from: planned.ramp.from,
            to: planned.ramp.to,
            step: planned.ramp.step,
            windowMs: planned.ramp.windowMs,
            held: planned.ramp.held,
          }
          : null,
        experimentConcurrency,
        rerun: options.rerun === "none" ? null : options.rerun,
        problems,
        notices,
      })) + "\n",
    );
    return 0;
  }
  const lines = [
    ...planLines(
      {
        plan,
        cap: cap.cap,
        capAnnotation: planned.capAnnotation,
        machineBudgets: planned.machineBudgets,
        ramp: planned.ramp,
        dry: true,
      },
      terminalLayout(io),
    ),
    ...notices.map((n) => `i ${n.message}`),
    ...dryLines(plan),
  ];
  for (const p of problems) io.stderr.write(`! ${p.message}\n`);
  io.stdout.write(lines.join("\n") + "\n");
  return 0;
}

/** Dispatches the plan and publishes the Runs. */
async function execute(
  io: Io,
  inv: Invocation,
  wiring: {
    sandboxes: SandboxWiring;
    coordination: SchedulerCoordination;
    ramp: RampFiles | null;
    /** Experiments whose agent precondition failed (docs/bail.md). */
    blocked: NonNullable<RunPlanOptions["blocked"]>;
  },
): Promise<number> {
  const { sandboxes, coordination } = wiring;
  const stop = new AbortController();
  // Every slot's outcome, in compact form: a long run keeps numbers, not result objects.
  const outcomes = new OutcomeTable(inv.planned.plan.slots.length);
  const writer = new RecordWriter(inv.recordRoot, {
    clock: io.clock,
    random: io.random,
    redactor: io.redactor,
  });
  writer.onFailure = (error) => {
    inv.output.writeFailure(error);
    stop.abort(error);
  };
  const heap = await processHeapGovernor();
  const emit = (event: RunEvent) => {
    writer.handle(event);
    inv.output.event(event);
    heap.tick();
  };
  const onInterrupt = () =>
    emit({
      type: "interrupted",
      at: io.clock.now(),
      signal: String(io.interrupt.reason ?? "SIGINT"),
    });
  using _relay = onAbort(io.interrupt, onInterrupt);
  if (io.interrupt.aborted) onInterrupt();
  try {
    await writer.begin(inv.takeRunSpecs());
    heap.check();
    const dispatched = runPlan(
      inv.planned.plan,
      createAttemptRunner({
        plan: inv.planned.plan,
        root: inv.root,
        clock: io.clock,
        random: io.random,
        pricing: inv.pricing,
        ...(io.console ? { console: io.console } : {}),
        ...sandboxes.runner,
      }),
      {
        signal: AbortSignal.any([io.interrupt, stop.signal]),
        clock: io.clock,
        random: io.random,
        onEvent: emit,
        cap: inv.planned.cap.cap,
        capSource: inv.planned.cap.source,
        ...(wiring.ramp ? { ramp: wiring.ramp.options } : {}),
        abandon: abandonedResult,
        coordination,
        backpressure: () => writer.backpressure(),
        onOutcome: (slot, outcome) => outcomes.record(slot, outcome),
        blocked: wiring.blocked,
        ...(inv.options.noBail ? { bailAfter: 0 } : {}),
        ...sandboxes.scheduler(emit),
      },
    );
    // After a second signal nothing is published (INT-2).
    const work = dispatched.then<number | typeof FORCED>(() =>
      io.forceInterrupt.aborted ? FORCED : finishRun(io, inv, writer, outcomes, heap)
    );
    const forced = await raceAbort(work, io.forceInterrupt).catch((error): typeof FORCED => {
      if (io.forceInterrupt.aborted && error === io.forceInterrupt.reason) return FORCED;
      throw error;
    });
    if (forced === FORCED) {
      await forcedCleanup(io, dispatched);
      inv.output.forced();
      return 130;
    }
    return forced;
  } catch (error) {
    // The `error` line goes before the receipt, which stays the last line (issue 18.8, OUT-J3).
    if (inv.options.json) writeErrorLine(io, error, internalHint());
    inv.output.failed();
    throw error;
  }
}

const FORCED = Symbol("forced");

/**
 * Gives the forced unwinds up to FORCE_CLEANUP_MS before the process exits: a second signal stops
 * waiting for Attempts and hooks, but those unwinds still remove the remaining sandboxes (provider
 * stop and slot release only) (INT-2).
 */
async function forcedCleanup(io: Io, dispatched: Promise<unknown>): Promise<void> {
  const bound = new AbortController();
  try {
    await Promise.race([
      dispatched.catch(() => undefined), // a failure after a forced exit changes nothing
      sleep(io.clock, FORCE_CLEANUP_MS, { signal: bound.signal }),
    ]);
  } finally {
    bound.abort();
  }
}

/** Boxed or unboxed permanent output for this terminal (OUT-H2). */
function terminalLayout(io: Io): { boxed: boolean; width: number; color: boolean } {
  const mode = humanMode({
    env: io.env,
    stdoutIsTerminal: io.stdout.isTerminal,
    stderrIsTerminal: io.stderr.isTerminal,
    stdoutColumns: io.stdout.columns(),
  });
  return { boxed: mode.boxed, width: mode.width, color: mode.color };
}
