/** `niceeval show` (CMD-12 … CMD-16): renders published results; never writes anything. */
import { resolve } from "node:path";
import { UsageError } from "../_shared/mod.ts";
import { locatorOf, parseLocator, type PublishedRun, RecordReader } from "../record/mod.ts";
import {
  attemptViewLines,
  currentLines,
  jsonRow,
  runLines,
  type RunListEntry,
  runListLines,
  type ShowRow,
  slotCounts,
} from "../report/mod.ts";
import { DEFAULT_RECORD_ROOT } from "./exp_defaults.ts";
import { attemptOf, currentRows, findRun, rowsOfRun, runsNewestFirst } from "./_show_rows.ts";
import { unpublishedWarning } from "./exp_warnings.ts";
import type { Io } from "./io.ts";
export { SHOW_FLAGS } from "./show_flags.ts";
import { requireConfig } from "./project.ts";
import { checkRecordRoot } from "./path_flags.ts";

/** Options of `show`. */
export interface ShowOptions {
  readonly locator?: string;
  readonly runs: readonly string[];
  readonly experiments: readonly string[];
  readonly json: boolean;
  readonly record?: string;
  /** `--runs`: list the published Runs instead of results. */
  readonly listRuns?: boolean;
}

/** Runs `show`; exit 0 whenever it could render. */
export async function runShow(io: Io, options: ShowOptions): Promise<number> {
  if (
    options.listRuns &&
    (options.locator !== undefined || options.runs.length > 0 || options.experiments.length > 0)
  ) {
    throw new UsageError(
      "usage",
      "--runs lists every published Run: it takes no locator, --run or --experiment",
      "drop the locator and the --run/--experiment flags, or drop --runs",
    );
  }
  if (
    options.locator !== undefined && (options.runs.length > 0 || options.experiments.length > 0)
  ) {
    throw new UsageError(
      "usage",
      "show takes one scope: a locator, --run, or the project",
      "drop either the locator or the --run/--experiment flags",
    );
  }
  if (options.runs.length > 0 && options.experiments.length > 0) {
    throw new UsageError(
      "usage",
      "--experiment applies to the project scope only, not with --run",
      "drop --experiment",
    );
  }
  const locator = options.locator === undefined ? undefined : parseLocator(options.locator);
  const recordRoot = resolve(io.cwd, options.record ?? DEFAULT_RECORD_ROOT);
  await checkRecordRoot(recordRoot, options.record);
  const projectScope = locator === undefined && options.runs.length === 0 && !options.listRuns;
  if (projectScope) await requireConfig(io.cwd);
  const reader = new RecordReader(recordRoot);
  const scan = await reader.scan();
  const problems = scan.unpublished.length > 0
    ? [{
      code: "record-unpublished-runs",
      message: unpublishedWarning(scan.unpublished, recordRoot)!,
    }]
    : [];
  if (!options.json) { for (const p of problems) io.stderr.write(`! ${p.message}\n`); }
  const out = (doc: Record<string, unknown>, lines: readonly string[]) => {
    if (options.json) {
      io.stdout.write(
        JSON.stringify({
          format: "niceeval.show",
          schemaVersion: 1,
          ...doc,
          recordRoot,
          problems,
        }) + "\n",
      );
    } else if (lines.length > 0) io.stdout.write(lines.join("\n") + "\n");
    return 0;
  };
  if (options.listRuns) return out(...await runListScope(reader, scan.runs));
  if (locator !== undefined) return out(...await attemptScope(reader, locator, scan.runs));
  if (options.runs.length > 0) return out(...await runsScope(reader, options.runs, scan.runs));
  return out(...await currentScope(io, reader, options.experiments));
}

async function currentScope(
  io: Io,
  reader: RecordReader,
  only: readonly string[],
): Promise<[Record<string, unknown>, string[]]> {
  const { experiments, rows, runIds } = await currentRows(io, reader, only);
  const experimentRows = experiments.map((e) => ({
    experimentId: e.id,
    runIds: runIds.get(e.id) ?? [],
    results: rows.filter((r) => r.experimentId === e.id && r.attempt !== null).length,
  }));
  return [
    { scope: "project-current", rows: rows.map(jsonRow), experiments: experimentRows },
    currentLines(rows, experiments.map((e) => e.id), { runIds }),
  ];
}

async function runsScope(
  reader: RecordReader,
  ids: readonly string[],
  runs: readonly PublishedRun[],
): Promise<[Record<string, unknown>, string[]]> {
  const lines: string[] = [];
  const rows: ShowRow[] = [];
  for (const id of ids) {
    const run = findRun(id, runs);
    const runRows = await rowsOfRun(reader, run);
    const { diagnostics } = await reader.details(run);
    lines.push(
      ...runLines({
        runId: run.runId,
        experimentId: run.doc.experimentId,
        startedAt: run.doc.startedAt,
        diagnostics,
      }, runRows),
    );
    rows.push(...runRows);
  }
  return [{ scope: "runs", rows: rows.map(jsonRow) }, lines];
}

/** `--runs`: every published Run, newest first, with its completion and slot counts. */
async function runListScope(
  reader: RecordReader,
  runs: readonly PublishedRun[],
): Promise<[Record<string, unknown>, string[]]> {
  const entries: RunListEntry[] = (await runsNewestFirst(reader, runs)).map((run) => ({
    runId: run.runId,
    experimentId: run.experimentId,
    agent: run.agent,
    model: run.model,
    startedAt: run.startedAt,
    completedAt: run.completedAt,
    completion: run.completion,
    slots: run.rows.length,
    counts: slotCounts(run.rows),
  }));
  return [{ scope: "run-list", rows: entries }, runListLines(entries)];
}

async function attemptScope(
  reader: RecordReader,
  locator: string,
  runs: readonly PublishedRun[],
): Promise<[Record<string, unknown>, string[]]> {
  const found: { run: PublishedRun; attemptId: string }[] = [];
  for (const run of runs) {
    for (const attemptId of await reader.attemptIds(run)) {
      if (locatorOf(attemptId) === locator) found.push({ run, attemptId });
    }
  }
  if (found.length === 0) {
    throw new UsageError(
      "locator-not-found",
      `no published Attempt ${locator}`,
      "copy the locator from niceeval output or niceeval show",
    );
  }
  if (found.length > 1) {
    throw new UsageError(
      "locator-ambiguous",
      `${locator} matches ${found.length} Attempts`,
      `candidates: ${found.map((f) => `${f.run.runId}/${f.attemptId}`).join(", ")}`,
    );
  }
  const { run, attemptId } = found[0]!;
  const stored = await reader.attempt(run.runId, attemptId);
  const assertions = await reader.assertions(stored);
  const events = await reader.events(stored);
  const doc = stored.doc;
  const view = {
    locator,
    verdict: stored.verdict,
    experimentId: doc.experimentId,
    agent: run.doc.config.agent,
    model: run.doc.config.model,
    evalId: doc.evalId,
    ordinal: doc.ordinal,
    runId: run.runId,
    startedAt: doc.startedAt,
    durationMs: doc.durationMs,
    usage: doc.usage,
    estimatedCostUSD: doc.estimatedCostUSD,
    error: doc.error,
    assertions: assertions.entries as Record<string, unknown>[],
    turns: (events.turns ?? []) as Record<string, unknown>[],
    logs: (events.logs ?? []) as unknown[],
    ...(doc.kind === "score"
      ? { score: { earned: doc.score, possible: doc.possible ?? null, passAt: doc.passAt ?? null } }
      : {}),
  };
  const row: ShowRow = {
    experimentId: doc.experimentId,
    evalId: doc.evalId,
    ordinal: doc.ordinal,
    kind: doc.kind,
    runId: run.runId,
    slotId: doc.slotId,
    state: "executed",
    reason: null,
    attempt: attemptOf(doc, stored.verdict),
  };
  const attemptJson = await reader.attemptJson(stored);
  return [
    {
      scope: "attempt",
      rows: [jsonRow(row)],
      attempt: {
        "attempt.json": attemptJson,
        "assertions.json": assertions,
        "events.json": events,
      },
    },
    attemptViewLines(view),
  ];
}
