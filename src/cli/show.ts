/** `niceeval show` (CMD-12 … CMD-16): renders published results; never writes anything. */
import { resolve } from "node:path";
import { UsageError } from "../_shared/mod.ts";
import { select } from "../plan/mod.ts";
import type { DiscoveredEval, DiscoveredExperiment } from "../discovery/mod.ts";
import { identityOf } from "./plan_run.ts";
import {
  candidateOf,
  loadCandidates,
  locatorOf,
  parseLocator,
  type PublishedRun,
  RecordReader,
  slotIdentifier,
  slotIdOf,
} from "../record/mod.ts";
import {
  attemptViewLines,
  currentLines,
  jsonRow,
  runLines,
  type RunListEntry,
  runListLines,
  type ShowRow,
  slotCounts,
  sourceRuns,
} from "../report/mod.ts";
import { DEFAULT_RECORD_ROOT } from "./exp_defaults.ts";
import { runByIdOrPrefix } from "./_run_lookup.ts";
import { unpublishedWarning } from "./exp_warnings.ts";
import type { Io } from "./io.ts";
export { SHOW_FLAGS } from "./show_flags.ts";
import { loadProject, requireConfig } from "./project.ts";
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
  const runIds = sourceRuns(rows, startedAtMs);
  const experimentRows = chosen.map((e) => ({
    experimentId: e.id,
    runIds: runIds.get(e.id) ?? [],
    results: rows.filter((r) => r.experimentId === e.id && r.attempt !== null).length,
  }));
  return [
    { scope: "project-current", rows: rows.map(jsonRow), experiments: experimentRows },
    currentLines(rows, chosen.map((e) => e.id), { runIds }),
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

/** One row per expected slot of a published Run, as stored. */
async function rowsOfRun(reader: RecordReader, run: PublishedRun): Promise<ShowRow[]> {
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

/** `--runs`: every published Run, newest first, with its completion and slot counts. */
async function runListScope(
  reader: RecordReader,
  runs: readonly PublishedRun[],
): Promise<[Record<string, unknown>, string[]]> {
  const newest = [...runs].sort((a, b) =>
    b.startedAtMs - a.startedAtMs || (a.runId < b.runId ? 1 : a.runId > b.runId ? -1 : 0)
  );
  const entries: RunListEntry[] = [];
  for (const run of newest) {
    const { completedAt, completion } = await reader.details(run);
    const rows = await rowsOfRun(reader, run);
    entries.push({
      runId: run.runId,
      experimentId: run.doc.experimentId,
      agent: run.doc.config.agent,
      model: run.doc.config.model,
      startedAt: run.doc.startedAt,
      completedAt,
      completion,
      slots: rows.length,
      counts: slotCounts(rows),
    });
  }
  return [{ scope: "run-list", rows: entries }, runListLines(entries)];
}

function findRun(id: string, runs: readonly PublishedRun[]): PublishedRun {
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

function attemptOf(
  doc: {
    attemptId: string;
    originRunId: string;
    score: number | null;
    outcome: string;
    durationMs: number;
    estimatedCostUSD: number | null;
    usage: { inputTokens: number | null; outputTokens: number | null } | null;
  },
  verdict: string,
) {
  return {
    attemptId: doc.attemptId,
    originRunId: doc.originRunId,
    verdict,
    score: doc.score,
    outcome: doc.outcome,
    durationMs: doc.durationMs,
    estimatedCostUSD: doc.estimatedCostUSD,
    usage: doc.usage,
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
