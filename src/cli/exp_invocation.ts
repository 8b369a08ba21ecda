/** One Invocation of `exp`: its ids, Run specs, reporters, and how it ends (receipt, exit code). */
import type { RunEvent } from "../_shared/mod.ts";
import { errorMessage } from "../_shared/mod.ts";
import { VERSION } from "../_shared/mod.ts";
import type { PricingTable } from "../expect/mod.ts";
import { type RecordWriter, type RunSpec, slotIdentifier, writeTextAtomic } from "../record/mod.ts";
import {
  exitCodeOf,
  junitXml,
  type OutcomeTable,
  summarize,
  withCarriedResults,
} from "../report/mod.ts";
import { type ExpOutput, humanOutput, jsonOutput } from "./exp_output.ts";
import type { ExpOptions } from "./exp_options.ts";
import { salvageNotice, unpublishedWarning } from "./exp_warnings.ts";
import type { HeapGovernor } from "./heap_governor.ts";
import type { Io } from "./io.ts";
import type { PlannedRun } from "./plan_run.ts";
import type { LoadedProject } from "./project.ts";
import { assertReplaceable, junitTarget } from "./path_flags.ts";
import { oneLine } from "./flags.ts";

/** Everything one running Invocation holds. */
export interface Invocation {
  readonly id: string;
  readonly startedAt: number;
  readonly root: string;
  readonly recordRoot: string;
  readonly options: ExpOptions;
  readonly planned: PlannedRun;
  readonly pricing: PricingTable;
  readonly runIds: readonly string[];
  /**
   * The Run specs for the writer's `begin`, once: they hold every slot's identity, which the
   * writer keeps in compact form, so the Invocation lets go of them (issue 20).
   */
  takeRunSpecs(): readonly RunSpec[];
  /** Where the Invocation reports (NDJSON or human). */
  readonly output: ExpOutput;
}

/** Creates the Invocation: ids, Run specs, and the start of its output. */
export function openInvocation(
  io: Io,
  input: {
    options: ExpOptions;
    planned: PlannedRun;
    project: LoadedProject;
    recordRoot: string;
    /** Looks at the heap while the Run specs are built (one look per slot); none in tests. */
    heap?: HeapGovernor;
  },
): Invocation {
  const { options, planned, project, recordRoot } = input;
  const id = io.random.uuid();
  const startedAt = io.clock.now();
  const runIds = planned.plan.experiments.map(() => io.random.uuid());
  let runSpecs: RunSpec[] | undefined = runSpecsOf(planned, runIds, {
    invocationId: id,
    startedAt,
    rerun: options.rerun,
    timeoutMs: options.timeoutMs,
    heap: input.heap,
  });
  planned.identity = null;
  const ctx = {
    io,
    invocationId: id,
    startedAt,
    recordRoot,
    planned,
    runIds,
    positionals: options.positionals,
    nextFlags: nextFlagsOf(options),
  };
  const output = options.json ? jsonOutput(ctx) : humanOutput(ctx);
  output.start();
  for (const event of startDiagnostics(planned, recordRoot, startedAt)) output.event(event);
  return {
    id,
    startedAt,
    root: project.root,
    recordRoot,
    options,
    planned,
    pricing: project.config.pricing,
    runIds,
    takeRunSpecs: () => {
      const taken = runSpecs;
      if (taken === undefined) throw new Error("The Run specs were already taken");
      runSpecs = undefined;
      return taken;
    },
    output,
  };
}

/**
 * Flags NEXT repeats (issue 18.11): `--record` on every line, so `show` finds the Runs just
 * published; on `exp` lines also what shapes the plan (`--attempts`, `--timeout`, `--tag`, `--grep`).
 */
function nextFlagsOf(options: ExpOptions): { show: string[]; exp: string[] } {
  const record = options.record === undefined ? [] : ["--record", options.record];
  const exp: string[] = [];
  if (options.attempts !== undefined) exp.push("--attempts", String(options.attempts));
  if (options.timeoutMs !== undefined) exp.push("--timeout", String(options.timeoutMs));
  for (const tag of options.tags) exp.push("--tag", tag);
  for (const pattern of options.grep ?? []) exp.push("--grep", pattern);
  return { show: record, exp: [...exp, ...record] };
}

/**
 * Notices and warnings known before dispatch: unpublished Runs, a config ramp turned off
 * (RAMP-2), experiments left out.
 */
function startDiagnostics(planned: PlannedRun, recordRoot: string, at: number): RunEvent[] {
  const events: RunEvent[] = [];
  const base = { type: "diagnostic", at, evalId: null, data: null, persist: false } as const;
  const salvaged = salvageNotice(planned.salvage, recordRoot, false);
  if (salvaged) {
    events.push({
      ...base,
      level: "warning",
      code: "record-salvaged",
      message: salvaged,
      experimentId: null,
    });
  }
  const unpublished = unpublishedWarning(planned.unpublished, recordRoot);
  if (unpublished) {
    events.push({
      ...base,
      level: "warning",
      code: "record-unpublished-runs",
      message: unpublished,
      experimentId: null,
    });
  }
  if (planned.rampDisabled) {
    events.push({
      ...base,
      level: "info",
      code: "ramp-disabled",
      message: "--max-concurrency turns the config ramp off; the global cap stays fixed",
      experimentId: null,
    });
  }
  for (const empty of planned.emptyExperimentIds) {
    events.push({
      ...base,
      level: "info",
      code: "experiment-no-evals",
      message: `experiment ${empty} has no selected evals; left out`,
      experimentId: empty,
    });
  }
  return events;
}

function runSpecsOf(
  planned: PlannedRun,
  runIds: readonly string[],
  info: {
    invocationId: string;
    startedAt: number;
    rerun: ExpOptions["rerun"];
    timeoutMs: number | undefined;
    heap: HeapGovernor | undefined;
  },
): RunSpec[] {
  const { plan, identity } = planned;
  if (!identity) throw new Error("The Run specs of a plan are built once");
  const identify = slotIdentifier(identity);
  return plan.experiments.map((experiment, i) => {
    const def = experiment.discovered.definition;
    const slots = plan.slots.filter((s) => s.experimentIndex === i).map((s) => {
      info.heap?.tick();
      const ids = identify(s);
      return {
        position: s.position,
        slotId: ids.slotId,
        evalId: s.evalId,
        ordinal: s.ordinal,
        kind: s.kind,
        groupId: s.groupId,
        inputFingerprint: ids.inputFingerprint,
        executionIdentityDigest: ids.executionIdentityDigest,
        carried: s.carry.action === "carry"
          ? { originRunId: s.carry.source.originRunId, attemptId: s.carry.source.attemptId }
          : null,
      };
    });
    return {
      header: {
        runId: runIds[i]!,
        invocationId: info.invocationId,
        experimentId: experiment.id,
        niceevalVersion: VERSION,
        startedAt: info.startedAt,
        config: {
          agent: def.agent.name,
          model: def.model ?? null,
          flags: def.flags,
          provider: experiment.provider,
          configHash: identity.configHash.get(experiment.id)!,
        },
        options: {
          attempts: experiment.attempts,
          earlyExit: experiment.earlyExit,
          // The Run-wide deadline: --timeout, else the experiment's (TIME-1); an eval's own
          // timeout applies below these, per slot.
          timeoutMs: info.timeoutMs ?? def.timeoutMs ?? null,
          budgetUSD: experiment.budgetUSD,
          rerun: info.rerun,
        },
        // The same objects as `slots`: `run.json` takes only the expected-slot fields.
        expectedSlots: slots,
      },
      slots,
    };
  });
}

/** Publishes the Runs, prints the end of the output and the receipt; returns the exit code. */
export async function finishRun(
  io: Io,
  inv: Invocation,
  writer: RecordWriter,
  outcomes: OutcomeTable,
  heap?: HeapGovernor,
): Promise<number> {
  // The report rows of every slot are built next: first the run's garbage goes.
  heap?.check();
  const { plan } = inv.planned;
  const interrupted = io.interrupt.aborted;
  const summarized = summarize(plan, outcomes, { runIdOf: (i) => inv.runIds[i]!, interrupted });
  // FAILURES and JUnit explain a carried failure like a fresh one; `--json` alone shows neither.
  const summary = !inv.options.json || inv.options.junit
    ? await withCarriedResults(summarized)
    : summarized;
  await writer.flush();
  if (writer.hasUnsettledAttempts() && !interrupted && !writer.failure) {
    throw new Error("Cannot publish: a reserved Attempt has no outcome");
  }
  const published = await writer.finish(interrupted ? "interrupted" : "completed");
  const completedAt = io.clock.now();
  let reporterFailed = writer.failure !== undefined;
  if (inv.options.junit) {
    reporterFailed = !(await writeJunit(io, inv, summary, completedAt)) || reporterFailed;
  }
  const exitCode = exitCodeOf(summary, reporterFailed);
  inv.output.end(summary, {
    publishedRunIds: published,
    completedAt,
    completion: writer.failure ? "failed" : interrupted ? "interrupted" : "completed",
    exitCode,
  });
  return exitCode;
}

async function writeJunit(
  io: Io,
  inv: Invocation,
  summary: ReturnType<typeof summarize>,
  completedAt: number,
): Promise<boolean> {
  const path = inv.options.junit!;
  const { plan } = inv.planned;
  const xml = junitXml(
    summary,
    plan,
    plan.experiments.map((e, i) => ({
      experimentIndex: i,
      runId: inv.runIds[i]!,
      agent: e.discovered.definition.agent.name,
      model: e.discovered.definition.model ?? null,
      startedAt: inv.startedAt,
      endedAt: completedAt,
    })),
    { startedAt: inv.startedAt, endedAt: completedAt, redactor: io.redactor },
  );
  try {
    // Checked again: the path may have changed during the run. Only a regular file is ever
    // replaced, and the rename re-checks that right before it happens (JUNIT-6).
    const target = await junitTarget(io.cwd, path, { usage: false });
    await writeTextAtomic(target, xml, io.random, { beforeRename: assertReplaceable });
    return true;
  } catch (error) {
    inv.output.reporterFailed("junit", path, oneLine(errorMessage(error)));
    return false;
  }
}
