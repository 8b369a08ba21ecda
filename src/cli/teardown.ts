/**
 * `niceeval exp <selector> --teardown`: teardown compensation only (ORPH-7, CMD-10), and the
 * inspection or explicit recovery of a sharedState lease (LEASE-10, CMD-11). No Eval, no `setup`,
 * no Run and no Record-root lock.
 */
import { formatDuration, type RunEvent, UsageError } from "../_shared/mod.ts";
import {
  claimOrphan,
  createProcessProbe,
  inspectLease,
  type LeaseEvidence,
  type ProcessIdentity,
  type ProcessProbe,
  readProcessIdentity,
  recoverLease,
  type RecoverLeaseResult,
  scanRegistrations,
} from "../coordination/mod.ts";
import type { DiscoveredExperiment } from "../discovery/mod.ts";
import { select, selectExperiments } from "../plan/mod.ts";
import { experimentHookContext, type HookOutcome, runBoundedHook } from "../scheduler/mod.ts";
import type { TeardownOptions } from "./exp_options.ts";
import type { Io } from "./io.ts";
import { type LoadedProject, loadProject, printWarnings } from "./project.ts";

/** One selected Experiment and the Eval IDs its `teardown` receives without a registration. */
interface Target {
  readonly experiment: DiscoveredExperiment;
  readonly evalIds: readonly string[];
}

/** What every step of this mode needs. */
interface Mode {
  readonly io: Io;
  readonly project: LoadedProject;
  readonly identity: ProcessIdentity;
  readonly probe: ProcessProbe;
}

/** Runs the `--teardown` mode; returns the exit code. */
export async function runTeardownMode(io: Io, options: TeardownOptions): Promise<number> {
  const project = await loadProject(io, { experiments: true });
  printWarnings(io, project.discovered.warnings);
  const targets = targetsOf(project, options.selector);
  const mode: Mode = {
    io,
    project,
    identity: await readProcessIdentity({ host: io.hostname, pid: io.pid }),
    probe: createProcessProbe(),
  };
  const key = options.recoverSharedState;
  if (key === undefined) return await compensate(mode, targets);
  if (options.ownerToken === undefined) return await inspect(mode, key);
  return await recover(mode, key, { ...options, ownerToken: options.ownerToken }, targets);
}

/** The selected Experiments in selection order, each with its own selected Eval IDs. */
function targetsOf(project: LoadedProject, selector: string): Target[] {
  const { experiments, evals } = project.discovered;
  const chosen = selectExperiments(experiments, selector);
  let selected: ReturnType<typeof select>["experiments"] = [];
  try {
    selected = select(experiments, evals, { selector, evalPrefixes: [], tags: [] }).experiments;
  } catch (error) {
    // Experiments without Evals still get their teardown; only an empty selection is tolerated.
    if (!(error instanceof UsageError && error.code === "nothing-selected")) throw error;
  }
  return chosen.map((experiment) => ({
    experiment,
    evalIds: selected.find((s) => s.experiment.id === experiment.id)?.evals.map((e) => e.id) ?? [],
  }));
}

/** Compensates each selected Experiment and prints one status line each (ORPH-7, CMD-10). */
async function compensate(mode: Mode, targets: readonly Target[]): Promise<number> {
  const { io } = mode;
  const width = Math.max(...targets.map((t) => t.experiment.id.length));
  let failed = false;
  for (const target of targets) {
    if (io.interrupt.aborted) return 130;
    const { status, ok } = await compensateOne(mode, target);
    if (status === "interrupted") return 130;
    failed ||= !ok;
    io.stdout.write(`${target.experiment.id.padEnd(width)}  ${status}\n`);
  }
  return failed ? 1 : 0;
}

async function compensateOne(
  mode: Mode,
  target: Target,
): Promise<{ status: string; ok: boolean }> {
  const { experiment } = target;
  if (!experiment.definition.teardown) return { status: "not-configured", ok: true };
  const { io } = mode;
  const { root } = mode.project;
  const scan = { projectRoot: root, identity: mode.identity, probe: mode.probe, clock: io.clock };
  const entries = await scanRegistrations(experiment.id, scan);
  if (entries.length === 0) {
    const startedAt = io.clock.now();
    const outcome = await runTeardown(mode, experiment, target.evalIds);
    if (!outcome.ok) return outcome.forced ? interrupted() : failure(outcome.message);
    const duration = formatDuration(io.clock.now() - startedAt);
    return { status: `ran (no registration) · ${duration}`, ok: true };
  }
  let ran = 0;
  for (const entry of entries.filter((e) => e.status === "orphan")) {
    if (io.interrupt.aborted) return interrupted();
    const claimed = await claimOrphan(entry, { clock: io.clock });
    if (!claimed) continue; // another process claimed it first
    const outcome = await runTeardown(mode, experiment, claimed.selectedEvalIds);
    if (!outcome.ok && outcome.forced) {
      claimed.abandon(); // the claim stays an orphan for the next run (ORPH-3)
      return interrupted();
    }
    await claimed.done();
    if (!outcome.ok) return failure(outcome.message);
    ran++;
  }
  if (ran > 0) return { status: `ran for ${ran} orphaned registration(s)`, ok: true };
  return { status: `left ${entries.length} live registration(s) alone`, ok: true };
}

function failure(message: string): { status: string; ok: boolean } {
  return { status: `failed: ${message}`, ok: false };
}

function interrupted(): { status: string; ok: boolean } {
  return { status: "interrupted", ok: false };
}

/** Runs the current definition's `teardown` once, bounded; a second signal stops waiting. */
function runTeardown(
  mode: Mode,
  experiment: DiscoveredExperiment,
  selectedEvalIds: readonly string[],
): Promise<HookOutcome> {
  const { io } = mode;
  const teardown = experiment.definition.teardown!;
  return runBoundedHook(
    (signal) =>
      teardown(experimentHookContext({
        experimentId: experiment.id,
        selectedEvalIds,
        hook: "teardown",
        signal,
        clock: io.clock,
        emit: hookOutput(io),
      })),
    { clock: io.clock, stop: io.forceInterrupt },
  );
}

/** Hook progress and hook diagnostics go to stderr; stdout keeps the CMD-10 lines only. */
function hookOutput(io: Io): (event: RunEvent) => void {
  return (event) => {
    if (event.type === "hook_progress") {
      io.stderr.write(`  ${event.experimentId} · ${event.text}\n`);
    } else if (event.type === "diagnostic") {
      io.stderr.write(`! ${event.message} [${event.code}]\n`);
    }
  };
}

/** Prints a lease key's evidence; exit 0 iff the key is free (LEASE-10 without a token, CMD-11). */
async function inspect(mode: Mode, key: string): Promise<number> {
  const evidence = await inspectLease(key, { projectRoot: mode.project.root });
  const rows = evidenceRows(evidence);
  const width = Math.max(...rows.map(([label]) => label.length));
  mode.io.stdout.write(rows.map(([l, v]) => `${l.padEnd(width)}  ${v}\n`).join(""));
  const { owner } = evidence;
  if (evidence.state === "retained" && owner) {
    mode.io.stderr.write(
      `hint: after checking that the owner has ended and nothing remote still writes the state, run niceeval exp ${owner.experimentId} --teardown --recover-shared-state ${key} --owner-token ${owner.ownerToken} --confirm-owner-terminated --confirm-remote-quiesced\n`,
    );
  }
  return evidence.state === "free" ? 0 : 1;
}

function evidenceRows(evidence: LeaseEvidence): [string, string][] {
  const { owner } = evidence;
  const last = evidence.recoveries.at(-1);
  return [
    ["key", evidence.key],
    ["state", evidence.state],
    ["experiment", owner?.experimentId ?? "—"],
    ["owner token", owner?.ownerToken ?? "—"],
    ["owner host", owner?.host ?? "—"],
    ["owner pid", owner ? String(owner.pid) : "—"],
    ["process start", owner?.processStartedAt ?? "—"],
    ["acquired", owner?.acquiredAt ?? "—"],
    ["lock", evidence.lockTaken ? "taken" : "free"],
    [
      "recoveries",
      last
        ? `${evidence.recoveries.length} (last by ${last.operatorHost} pid ${last.operatorPid} at ${last.startedAt})`
        : "none",
    ],
  ];
}

/** Recovers a lease with its token, or prints one of the refusals (LEASE-10 with a token). */
async function recover(
  mode: Mode,
  key: string,
  options: TeardownOptions & { ownerToken: string },
  targets: readonly Target[],
): Promise<number> {
  const { io } = mode;
  const only = targets.length === 1 ? targets[0] : undefined;
  const result = await recoverLease(key, {
    projectRoot: mode.project.root,
    ownerToken: options.ownerToken,
    confirmOwnerTerminated: options.confirmOwnerTerminated,
    confirmRemoteQuiesced: options.confirmRemoteQuiesced,
    selectedExperimentIds: targets.map((t) => t.experiment.id),
    identity: mode.identity,
    probe: mode.probe,
    clock: io.clock,
    ...(only?.experiment.definition.teardown
      ? {
        runTeardown: async ({ selectedEvalIds }) => {
          const outcome = await runTeardown(mode, only.experiment, selectedEvalIds ?? only.evalIds);
          if (!outcome.ok) throw new Error(`teardown failed: ${outcome.message}`);
        },
      }
      : {}),
  });
  return report(io, key, result);
}

function report(io: Io, key: string, result: RecoverLeaseResult): number {
  if (result.ok && result.outcome === "recovered") {
    io.stdout.write(`recovered sharedState key ${key} for ${result.experimentId}\n`);
    return 0;
  }
  if (result.ok) {
    const removed = result.removedRegistrations;
    io.stdout.write(
      `sharedState key ${key} is already free${
        removed > 0 ? `; removed ${removed} registration(s) of its last owner` : ""
      }\n`,
    );
    return 0;
  }
  io.stderr.write(`error: ${result.message} [${result.code}]\n`);
  io.stderr.write(`hint: ${refusalHint(result.code, key)}\n`);
  return 1;
}

function refusalHint(code: string, key: string): string {
  if (code === "shared-state-owner-alive") {
    return "wait until the owner process has ended, then run the same command again";
  }
  if (code === "shared-state-token-mismatch") {
    return `inspect the lease for its current owner token: niceeval exp <selector> --teardown --recover-shared-state ${key}`;
  }
  return "make the teardown succeed, then run the same command again with the same token";
}
