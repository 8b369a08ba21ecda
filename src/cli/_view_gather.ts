/**
 * Gathers a `niceeval view` report's data from the Record (issue 17, item 1): the same rows as
 * `show` (project-current or `--run`), every Attempt's documents, every published Run for the
 * history, and the comparison of `--compare`. Reads only.
 */
import { basename } from "node:path";
import { UsageError } from "../_shared/mod.ts";
import { type PublishedRun, RecordReader } from "../record/mod.ts";
import {
  type AttemptDetail,
  buildViewModel,
  compareDocument,
  compareRuns,
  type ExperimentInput,
  type ShowRow,
  type ViewEval,
  type ViewModel,
} from "../report/mod.ts";
import { currentRows, findRun, rowsOfRun, runsNewestFirst } from "./_show_rows.ts";
import { findSide, sideOf } from "./show_compare.ts";
import { unpublishedWarning } from "./exp_warnings.ts";
import type { Io } from "./io.ts";

/** What a report shows. */
export interface ViewSelection {
  readonly runs: readonly string[];
  readonly experiments: readonly string[];
  /** The two sides of `--compare`, or null. */
  readonly compare: readonly [string, string] | null;
}

/** Attempts whose documents are read at the same time. */
const READ_CONCURRENCY = 16;

/** Reads everything the report shows; the Record is read once per call. */
export async function gatherView(
  io: Io,
  recordRoot: string,
  selection: ViewSelection,
): Promise<ViewModel> {
  const reader = new RecordReader(recordRoot, { keepDocuments: true });
  const scan = await reader.scan();
  const warning = unpublishedWarning(scan.unpublished, recordRoot);
  const scope = selection.runs.length > 0
    ? await runsScope(reader, selection.runs, scan.runs)
    : await currentScope(io, reader, selection.experiments);
  const agents = new Map(scope.experiments.map((e) => [e.id, e]));
  const details = await detailsOf(reader, scope.rows, agents, scan.runs);
  const runs = await runsNewestFirst(reader, scan.runs);
  const compare = selection.compare === null ? null : compareDocument(
    compareRuns(
      await sideOf(reader, findSide(selection.compare[0], scan.runs)),
      await sideOf(reader, findSide(selection.compare[1], scan.runs)),
    ),
  );
  return buildViewModel({
    generatedAt: new Date(io.clock.now()).toISOString(),
    title: basename(io.cwd),
    scope: scope.scope,
    experiments: scope.experiments,
    evals: scope.evals,
    rows: scope.rows,
    details,
    runs,
    compare,
    problems: warning === undefined ? [] : [{ code: "record-unpublished-runs", message: warning }],
  });
}

interface Scope {
  readonly scope: ViewModel["scope"];
  readonly experiments: readonly ExperimentInput[];
  readonly evals: readonly ViewEval[];
  readonly rows: readonly ShowRow[];
}

async function currentScope(io: Io, reader: RecordReader, only: readonly string[]): Promise<Scope> {
  const current = await currentRows(io, reader, only);
  return {
    scope: "project-current",
    experiments: current.experiments.map((e) => ({
      id: e.id,
      agent: e.definition.agent.name,
      model: e.definition.model ?? null,
      runIds: current.runIds.get(e.id) ?? [],
    })),
    evals: current.evals.map((e) => ({
      id: e.id,
      kind: e.definition.evaluationKind,
      tags: e.definition.tags,
      description: e.definition.description ?? null,
    })),
    rows: current.rows,
  };
}

/** `--run`: each Run as stored; one Run per experiment, so that the matrix has one column each. */
async function runsScope(
  reader: RecordReader,
  ids: readonly string[],
  published: readonly PublishedRun[],
): Promise<Scope> {
  const runs = ids.map((id) => findRun(id, published));
  const seen = new Map<string, string>();
  for (const run of runs) {
    const other = seen.get(run.doc.experimentId);
    if (other !== undefined) {
      throw new UsageError(
        "usage",
        `--run ${other} and --run ${run.runId} are both Runs of experiment "${run.doc.experimentId}"`,
        `compare them with niceeval view --compare ${other} ${run.runId}`,
      );
    }
    seen.set(run.doc.experimentId, run.runId);
  }
  const rows: ShowRow[] = [];
  for (const run of runs) rows.push(...await rowsOfRun(reader, run));
  return {
    scope: "runs",
    experiments: runs.map((run) => ({
      id: run.doc.experimentId,
      agent: run.doc.config.agent,
      model: run.doc.config.model,
      runIds: [run.runId],
    })),
    evals: [],
    rows,
  };
}

/**
 * The documents of every row's Attempt: each v2 origin Run's log is read once; Attempts of v1
 * Runs are read a few at a time.
 */
async function detailsOf(
  reader: RecordReader,
  rows: readonly ShowRow[],
  experiments: ReadonlyMap<string, ExperimentInput>,
  published: readonly PublishedRun[],
): Promise<Map<string, AttemptDetail>> {
  const details = new Map<string, AttemptDetail>();
  const byRun = new Map<string, Awaited<ReturnType<RecordReader["runDocuments"]>>>();
  for (const run of published) {
    if (rows.some((r) => r.attempt?.originRunId === run.runId)) {
      byRun.set(run.runId, await reader.runDocuments(run));
    }
  }
  const pending = rows.filter((r) => r.attempt !== null);
  let next = 0;
  const worker = async () => {
    while (next < pending.length) {
      const row = pending[next++]!;
      const { attemptId, originRunId } = row.attempt!;
      const stored = await reader.attempt(originRunId, attemptId);
      const { assertions, events } = byRun.get(originRunId)?.get(attemptId) ??
        await reader.documents(stored);
      const experiment = experiments.get(row.experimentId);
      const error = stored.doc.error;
      details.set(attemptId, {
        agent: experiment?.agent ?? null,
        model: experiment?.model ?? null,
        startedAt: stored.doc.startedAt,
        error: error === null ? null : {
          code: error.code,
          phase: error.phase,
          message: error.message,
          location: error.location ?? null,
          stack: error.stack ?? null,
        },
        assertions: assertions.entries,
        turns: listOf(events.turns) as Record<string, unknown>[],
        phases: listOf(events.phases),
        diagnostics: listOf(events.diagnostics),
        logs: listOf(events.logs),
      });
    }
  };
  await Promise.all(Array.from({ length: READ_CONCURRENCY }, worker));
  return details;
}

function listOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
