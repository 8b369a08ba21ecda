/**
 * The rows `show` and `view` report: the project's current result of every expected slot
 * (CMD-12), or the slots of published Runs as stored. Reads only.
 */
import { UsageError } from "../_shared/mod.ts";
import { select } from "../plan/mod.ts";
import type { DiscoveredEval, DiscoveredExperiment } from "../discovery/mod.ts";
import {
  candidateOf,
  loadCandidates,
  type PublishedRun,
  type RecordReader,
  slotIdentifier,
  slotIdOf,
} from "../record/mod.ts";
import { type RunInput, type ShowRow, sourceRuns } from "../report/mod.ts";
import { identityOf } from "./plan_run.ts";
import { runByIdOrPrefix } from "./_run_lookup.ts";
import type { Io } from "./io.ts";
import { loadProject } from "./project.ts";

/** The project-current scope: its experiments, their own evals, and one row per slot. */
export interface CurrentRows {
  readonly experiments: readonly DiscoveredExperiment[];
  /** Every eval of the project, in discovery order. */
  readonly evals: readonly DiscoveredEval[];
  readonly rows: readonly ShowRow[];
  /** The Runs each experiment's results come from, newest first. */
  readonly runIds: ReadonlyMap<string, readonly string[]>;
}

/** Gathers the project-current rows of the experiments `only` names (all when empty). */
export async function currentRows(
  io: Io,
  reader: RecordReader,
  only: readonly string[],
): Promise<CurrentRows> {
  const project = await loadProject(io, { experiments: true });
  const { experiments, evals } = project.discovered;
  for (const id of only) {
    if (!experiments.some((e) => e.id === id)) {
      throw new UsageError(
        "experiment-not-found",
        `no experiment "${id}"`,
        `available experiments: ${experiments.map((e) => e.id).slice(0, 10).join(", ")}`,
      );
    }
  }
  const chosen = experiments.filter((e) => only.length === 0 || only.includes(e.id));
  const selected = chosen.map((experiment) => ({ experiment, evals: ownEvals(experiment, evals) }));
  const identify = slotIdentifier(await identityOf(project, selected));
  const pairs = selected.flatMap(({ experiment, evals: own }) =>
    own.map((e) => ({
      experimentId: experiment.id,
      evalId: e.id,
      kind: e.definition.evaluationKind,
      attempts: experiment.definition.attempts,
      digest: identify({ experimentId: experiment.id, evalId: e.id, ordinal: 0 })
        .executionIdentityDigest,
    }))
  );
  const candidates = await loadCandidates(reader, pairs);
  const rows: ShowRow[] = [];
  const startedAtMs = new Map<string, number>();
  for (const pair of pairs) {
    for (let ordinal = 0; ordinal < pair.attempts; ordinal++) {
      const c = candidateOf(candidates, pair.experimentId, pair.evalId, ordinal);
      const current = c?.stored && c.stored.doc.executionIdentityDigest === pair.digest;
      if (c) startedAtMs.set(c.run.runId, c.run.startedAtMs);
      rows.push({
        experimentId: pair.experimentId,
        evalId: pair.evalId,
        ordinal,
        kind: pair.kind,
        runId: c?.run.runId ?? null,
        slotId: slotIdOf(pair.evalId, ordinal),
        state: current ? (c!.originRunId === c!.run.runId ? "executed" : "carried") : "missing",
        reason: current ? null : c?.stored ? "identity-changed" : "new",
        attempt: current ? attemptOf(c!.stored!.doc, c!.stored!.verdict) : null,
      });
    }
  }
  return { experiments: chosen, evals, rows, runIds: sourceRuns(rows, startedAtMs) };
}

/** One row per expected slot of a published Run, as stored. */
export async function rowsOfRun(reader: RecordReader, run: PublishedRun): Promise<ShowRow[]> {
  const rows: ShowRow[] = [];
  for (const slot of run.doc.expectedSlots) {
    const { member, stored } = await reader.slot(run, slot);
    rows.push({
      experimentId: run.doc.experimentId,
      evalId: slot.evalId,
      ordinal: slot.ordinal,
      kind: slot.kind,
      runId: run.runId,
      slotId: slot.slotId,
      state: member.action,
      reason: member.reason,
      attempt: stored ? attemptOf(stored.doc, stored.verdict) : null,
    });
  }
  return rows;
}

/** Every published Run, newest first (by start, then RunId), each with its rows. */
export async function runsNewestFirst(
  reader: RecordReader,
  runs: readonly PublishedRun[],
): Promise<RunInput[]> {
  const newest = [...runs].sort((a, b) =>
    b.startedAtMs - a.startedAtMs || (a.runId < b.runId ? 1 : a.runId > b.runId ? -1 : 0)
  );
  const out: RunInput[] = [];
  for (const run of newest) {
    const { completedAt, completion, diagnostics } = await reader.details(run);
    out.push({
      runId: run.runId,
      experimentId: run.doc.experimentId,
      agent: run.doc.config.agent,
      model: run.doc.config.model,
      startedAt: run.doc.startedAt,
      completedAt,
      completion,
      diagnostics,
      rows: await rowsOfRun(reader, run),
    });
  }
  return out;
}

/** The published Run `--run <id>` names: a full RunId or a unique prefix; else `run-not-found`. */
export function findRun(id: string, runs: readonly PublishedRun[]): PublishedRun {
  const found = runByIdOrPrefix(id, runs);
  if (found) return found;
  throw new UsageError(
    "run-not-found",
    `no published run "${id}"`,
    id.length < 8
      ? "give a full RunId or a unique prefix of at least 8 characters"
      : "run niceeval show to list current results",
  );
}

/** The Attempt part of a row. */
export function attemptOf(
  doc: {
    attemptId: string;
    originRunId: string;
    score: number | null;
    possible?: number | null | undefined;
    passAt?: number | null | undefined;
    outcome: string;
    durationMs: number;
    estimatedCostUSD: number | null;
    usage: { inputTokens: number | null; outputTokens: number | null } | null;
  },
  verdict: string,
): NonNullable<ShowRow["attempt"]> {
  return {
    attemptId: doc.attemptId,
    originRunId: doc.originRunId,
    verdict,
    score: doc.score,
    outcome: doc.outcome,
    durationMs: doc.durationMs,
    estimatedCostUSD: doc.estimatedCostUSD,
    usage: doc.usage,
    possible: doc.possible ?? null,
    passAt: doc.passAt ?? null,
  };
}

/** An experiment's own eval selection, without command-line narrowing. */
function ownEvals(
  experiment: DiscoveredExperiment,
  evals: readonly DiscoveredEval[],
): readonly DiscoveredEval[] {
  try {
    return select([experiment], evals, { evalPrefixes: [], tags: [] }).experiments[0]?.evals ?? [];
  } catch (error) {
    if ((error as { code?: string }).code === "nothing-selected") return [];
    throw error;
  }
}
