/**
 * `niceeval show --compare <A> <B>` (issue 17, item 2): resolves each side to a published Run and
 * reports per eval what became of it from A to B; never writes anything.
 */
import { resolve } from "node:path";
import { UsageError } from "../_shared/mod.ts";
import { type PublishedRun, RecordReader } from "../record/mod.ts";
import {
  compareDocument,
  compareLines,
  compareRuns,
  type CompareSide,
  type CompareSlot,
} from "../report/mod.ts";
import { DEFAULT_RECORD_ROOT } from "./exp_defaults.ts";
import { runByIdOrPrefix } from "./_run_lookup.ts";
import { unpublishedWarning } from "./exp_warnings.ts";
import type { Io } from "./io.ts";
import { checkRecordRoot } from "./path_flags.ts";

/** Options of `show --compare`. */
export interface CompareOptions {
  /** The positionals: exactly two, each a RunId, a unique RunId prefix or an experiment ID. */
  readonly sides: readonly string[];
  readonly json: boolean;
  /** Exit 1 when at least one eval regressed. */
  readonly failOnRegression: boolean;
  readonly record?: string;
}

/** Runs `show --compare`; exit 0, or 1 with `failOnRegression` when an eval regressed. */
export async function runCompare(io: Io, options: CompareOptions): Promise<number> {
  checkCompareSides(options.sides, "show");
  const recordRoot = resolve(io.cwd, options.record ?? DEFAULT_RECORD_ROOT);
  await checkRecordRoot(recordRoot, options.record);
  const reader = new RecordReader(recordRoot);
  const scan = await reader.scan();
  const [runA, runB] = options.sides.map((side) => findSide(side, scan.runs));
  const comparison = compareRuns(
    await sideOf(reader, runA!),
    await sideOf(reader, runB!),
  );
  const warning = unpublishedWarning(scan.unpublished, recordRoot);
  const problems = warning === undefined
    ? []
    : [{ code: "record-unpublished-runs", message: warning }];
  if (options.json) {
    io.stdout.write(
      JSON.stringify({ ...compareDocument(comparison), recordRoot, problems }) + "\n",
    );
  } else {
    for (const p of problems) io.stderr.write(`! ${p.message}\n`);
    io.stdout.write(compareLines(comparison).join("\n") + "\n");
  }
  return options.failOnRegression && comparison.counts.regressed > 0 ? 1 : 0;
}

/**
 * The sides of `<command> --compare` must be two Runs or experiments, not an Attempt locator;
 * `main` rejects `--run` and `--experiment` with `show --compare`.
 */
export function checkCompareSides(sides: readonly string[], command: "show" | "view"): void {
  const hint = `niceeval ${command} --compare <runA|experiment> <runB|experiment>`;
  const locator = sides.find((s) => s.startsWith("@"));
  if (locator !== undefined) {
    throw new UsageError(
      "usage",
      `--compare compares Runs or experiments, not the Attempt ${locator}`,
      hint,
    );
  }
  if (sides.length !== 2) {
    throw new UsageError(
      "usage",
      `--compare takes exactly two Runs or experiments, got ${sides.length}`,
      hint,
    );
  }
}

/**
 * The published Run a side names: a full RunId, else the latest Run (by start, then RunId) of an
 * experiment with that ID, else the only Run whose RunId starts with a prefix of ≥ 8 characters.
 */
export function findSide(side: string, runs: readonly PublishedRun[]): PublishedRun {
  const exact = runs.find((r) => r.runId === side);
  if (exact) return exact;
  const ofExperiment = runs.filter((r) => r.doc.experimentId === side);
  if (ofExperiment.length > 0) return ofExperiment.reduce((x, y) => later(x, y) ? x : y);
  const found = runByIdOrPrefix(side, runs);
  if (found) return found;
  throw new UsageError(
    "run-not-found",
    `no published run or experiment "${side}"`,
    "give a full RunId, a unique RunId prefix of at least 8 characters, or an experiment ID with a published Run",
  );
}

function later(x: PublishedRun, y: PublishedRun): boolean {
  return x.startedAtMs !== y.startedAtMs ? x.startedAtMs > y.startedAtMs : x.runId > y.runId;
}

/** One side of a comparison: every expected slot of `run` with its Attempt's verdict. */
export async function sideOf(reader: RecordReader, run: PublishedRun): Promise<CompareSide> {
  const slots: CompareSlot[] = [];
  for (const slot of run.doc.expectedSlots) {
    const { stored } = await reader.slot(run, slot);
    slots.push({
      evalId: slot.evalId,
      ordinal: slot.ordinal,
      kind: slot.kind,
      verdict: stored?.verdict ?? null,
      score: stored?.doc.score ?? null,
    });
  }
  return {
    runId: run.runId,
    experimentId: run.doc.experimentId,
    startedAt: run.doc.startedAt,
    slots,
  };
}
