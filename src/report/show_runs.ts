/** `niceeval show --runs` rendering: pure functions from the published Runs to lines. */
import { alignCells, columnWidths, type ShowRow } from "./show.ts";

/** How the slots of one Run ended: verdicts of their Attempts, or why they have none. */
export interface SlotCounts {
  readonly passed: number;
  readonly failed: number;
  readonly errored: number;
  readonly skipped: number;
  readonly scored: number;
  readonly interrupted: number;
  /** Slots that never got an Attempt: not dispatched, or missing. */
  readonly notRun: number;
}

/** The order and wording of {@link SlotCounts} in text. */
const COUNT_WORDS: readonly [keyof SlotCounts, string][] = [
  ["passed", "passed"],
  ["failed", "failed"],
  ["errored", "errored"],
  ["skipped", "skipped"],
  ["scored", "scored"],
  ["interrupted", "interrupted"],
  ["notRun", "not run"],
];

/** Counts a Run's rows by their Attempt's verdict; a row without one is interrupted or not run. */
export function slotCounts(rows: readonly ShowRow[]): SlotCounts {
  const counts: Record<keyof SlotCounts, number> = {
    passed: 0,
    failed: 0,
    errored: 0,
    skipped: 0,
    scored: 0,
    interrupted: 0,
    notRun: 0,
  };
  for (const row of rows) {
    const verdict = row.attempt?.verdict;
    const key: keyof SlotCounts = verdict !== undefined && Object.hasOwn(counts, verdict)
      ? verdict as keyof SlotCounts
      : row.state === "interrupted"
      ? "interrupted"
      : "notRun";
    counts[key]++;
  }
  return counts;
}

/** One published Run as `show --runs` lists it; also its `--json` row. */
export interface RunListEntry {
  readonly runId: string;
  readonly experimentId: string;
  readonly agent: string;
  readonly model: string | null;
  readonly startedAt: string;
  readonly completedAt: string | null;
  /** Null when the Record does not say (a Run published before completion was recorded). */
  readonly completion: "completed" | "interrupted" | "crashed" | null;
  readonly slots: number;
  readonly counts: SlotCounts;
}

/**
 * `show --runs`: one line per published Run in the given order (newest first), with its start
 * (UTC, to the minute), experiment, completion and slot counts.
 */
export function runListLines(entries: readonly RunListEntry[]): string[] {
  if (entries.length === 0) return ["no published runs yet — run niceeval exp"];
  const table = [
    ["Run", "Started (UTC)", "Experiment", "Completion", "Slots"],
    ...entries.map((e) => [
      e.runId,
      e.startedAt.slice(0, 16).replace("T", " "),
      e.experimentId,
      e.completion ?? "unknown",
      countsText(e.counts, e.slots),
    ]),
  ];
  const widths = columnWidths(table);
  return table.map((row) => alignCells(row, widths, NO_MEASURES));
}

const NO_MEASURES: ReadonlySet<number> = new Set();

/** `4 passed · 1 failed · 1 not run`: the non-zero counts; `no slots` for an empty Run. */
function countsText(counts: SlotCounts, slots: number): string {
  if (slots === 0) return "no slots";
  return COUNT_WORDS.filter(([key]) => counts[key] > 0)
    .map(([key, word]) => `${counts[key]} ${word}`).join(" · ");
}
