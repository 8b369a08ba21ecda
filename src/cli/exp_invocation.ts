/** One Invocation of `exp`: its ids, Run specs, reporters, and how it ends (receipt, exit code). */
import { dirname } from "node:path";
import type { RunEvent, SlotOutcome } from "../_shared/mod.ts";
import { errorMessage } from "../_shared/mod.ts";
import { VERSION } from "../_shared/mod.ts";
import type { PricingTable } from "../expect/mod.ts";
import {
  type RecordWriteError,
  type RecordWriter,
  type RunSpec,
  writeTextAtomic,
} from "../record/mod.ts";
import {
  endLines,
  exitCodeOf,
  junitXml,
  NdjsonReporter,
  PermanentLines,
  planLines,
  summarize,
} from "../report/mod.ts";
import type { ExpOptions } from "./exp_options.ts";
import { unpublishedWarning } from "./exp_warnings.ts";
import type { Io } from "./io.ts";
import { type PlannedRun, slotIdentity } from "./plan_run.ts";
import type { LoadedProject } from "./project.ts";

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
  readonly runSpecs: readonly RunSpec[];
  /** Sends one event to the reporter of this Invocation. */
  report(event: RunEvent): void;
  emitWriteFailure(error: RecordWriteError): void;
  /** Writes the `failed` receipt of an internal error (OUT-J3). */
  failReceipt(): void;
  readonly ndjson: NdjsonReporter | undefined;
}

/** Creates the Invocation: ids, Run specs, the start of the output. */
export async function openInvocation(
  io: Io,
  input: { options: ExpOptions; planned: PlannedRun; project: LoadedProject; recordRoot: string },
): Promise<Invocation> {
  const { options, planned, project, recordRoot } = input;
  const { plan } = planned;
  const id = io.random.uuid();
  const startedAt = io.clock.now();
  const runIds = plan.experiments.map(() => io.random.uuid());
  const runSpecs = runSpecsOf(input.planned, runIds, {
    invocationId: id,
    startedAt,
    rerun: options.rerun,
  });
  const runIdOf = (experimentId: string) =>
    runIds[plan.experiments.findIndex((e) => e.id === experimentId)]!;
  const out = (line: string) => io.stdout.write(line + "\n");
  let ndjson: NdjsonReporter | undefined;
  let permanent: PermanentLines | undefined;
  if (options.json) {
    ndjson = new NdjsonReporter((line) => io.stdout.write(line), {
      now: () => io.clock.now(),
      runIdOf,
    });
    ndjson.start(plan, {
      invocationId: id,
      startedAt,
      recordRoot,
      concurrency: planned.cap.cap,
      concurrencySource: planned.cap.source,
      concurrencyProvider: planned.cap.provider,
      runs: plan.experiments.map((e, i) => ({ experimentId: e.id, runId: runIds[i]! })),
    });
  } else {
    planLines({ plan, cap: planned.cap.cap, capAnnotation: planned.capAnnotation }).forEach(out);
    permanent = new PermanentLines(plan, out);
  }
  const unpublished = unpublishedWarning(planned.unpublished, recordRoot);
  if (unpublished) {
    const event: RunEvent = {
      type: "diagnostic",
      at: startedAt,
      level: "warning",
      code: "record-unpublished-runs",
      message: unpublished,
      experimentId: null,
      evalId: null,
      data: null,
      persist: false,
    };
    ndjson?.event(event);
    permanent?.event(event);
  }
  for (const empty of planned.emptyExperimentIds) {
    const event: RunEvent = {
      type: "diagnostic",
      at: startedAt,
      level: "info",
      code: "experiment-no-evals",
      message: `experiment ${empty} has no selected evals; left out`,
      experimentId: empty,
      evalId: null,
      data: null,
      persist: false,
    };
    ndjson?.event(event);
    permanent?.event(event);
  }
  let receiptWritten = false;
  return {
    id,
    startedAt,
    root: project.root,
    recordRoot,
    options,
    planned,
    pricing: project.config.pricing,
    runIds,
    runSpecs,
    ndjson,
    report: (event) => {
      ndjson?.event(event);
      permanent?.event(event);
    },
    emitWriteFailure: (error) => {
      if (ndjson) {
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
        });
      } else out(`✗ record-write-failed · ${error.path}: ${error.message}`);
    },
    failReceipt: () => {
      if (!ndjson || receiptWritten) return;
      receiptWritten = true;
      ndjson.receipt({
        invocationId: id,
        runIds: [],
        recordRoot,
        startedAt,
        completedAt: io.clock.now(),
        completion: "failed",
        headline: null,
        exitCode: 3,
      });
    },
  };
}

function runSpecsOf(
  planned: PlannedRun,
  runIds: readonly string[],
  info: { invocationId: string; startedAt: number; rerun: ExpOptions["rerun"] },
): RunSpec[] {
  const { plan, identity } = planned;
  return plan.experiments.map((experiment, i) => {
    const def = experiment.discovered.definition;
    const slots = plan.slots.filter((s) => s.experimentIndex === i).map((s) => {
      const ids = slotIdentity(identity, s.experimentId, s.evalId, s.ordinal);
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
          timeoutMs: def.timeoutMs ?? null,
          budgetUSD: experiment.budgetUSD,
          rerun: info.rerun,
        },
        expectedSlots: slots.map((
          { slotId, evalId, ordinal, kind, groupId, inputFingerprint, executionIdentityDigest },
        ) => ({
          slotId,
          evalId,
          ordinal,
          kind,
          groupId,
          inputFingerprint,
          executionIdentityDigest,
        })),
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
  outcomes: readonly SlotOutcome[],
): Promise<number> {
  const { plan } = inv.planned;
  const interrupted = io.interrupt.aborted;
  const summary = summarize(plan, outcomes, { runIdOf: (i) => inv.runIds[i]!, interrupted });
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
  if (inv.ndjson) {
    inv.ndjson.evals(summary);
    inv.ndjson.receipt({
      invocationId: inv.id,
      runIds: published,
      recordRoot: inv.recordRoot,
      startedAt: inv.startedAt,
      completedAt,
      completion: writer.failure ? "failed" : interrupted ? "interrupted" : "completed",
      headline: summary.headline,
      exitCode,
    });
  } else {
    const lines = endLines(summary, {
      plan,
      wallMs: completedAt - inv.startedAt,
      runIds: inv.runIds,
      positionals: inv.options.positionals,
    });
    io.stdout.write(lines.join("\n") + "\n");
  }
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
    { startedAt: inv.startedAt, endedAt: completedAt },
  );
  try {
    const full = path.startsWith("/") ? path : `${io.cwd}/${path}`;
    await Deno.mkdir(dirname(full), { recursive: true });
    await writeTextAtomic(full, xml, io.random);
    return true;
  } catch (error) {
    const message = errorMessage(error);
    if (inv.ndjson) {
      inv.ndjson.reporterError("junit", true, `${path}: ${message}`);
    } else io.stdout.write(`✗ JUnit report not written: ${path}: ${message}\n`);
    return false;
  }
}
