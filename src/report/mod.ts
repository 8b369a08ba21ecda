/**
 * @module report
 * Owns finished-run reporting: the shared result model (rows, counts, headline, exit code), plain
 * human output, the NDJSON stream and JUnit XML. It renders; it never schedules or writes the Record.
 */
export { exitCodeOf, reportedResult, summarize, withCarriedResults } from "./summary.ts";
export type { RunSummary } from "./summary.ts";
export { OutcomeTable } from "./outcome_table.ts";
export { attemptLines, endLines, planLines } from "./human.ts";
export { NdjsonReporter } from "./ndjson.ts";
export type { StartRamp } from "./ndjson.ts";
export { junitXml } from "./junit.ts";
export { PermanentLines, rampChangeLine } from "./plain_stream.ts";
export { dryDocument, dryLines } from "./dry.ts";
export { attemptViewLines, currentLines, jsonRow, runLines } from "./show.ts";
export type { AttemptView, ShowRow } from "./show.ts";
export {
  compareDocument,
  compareLines,
  compareRuns,
  type CompareSide,
  type CompareSlot,
} from "./compare.ts";
export { sourceRuns } from "./show.ts";
export type { CurrentLinesOptions } from "./show.ts";
export { runListLines, slotCounts } from "./show_runs.ts";
export type { RunListEntry, SlotCounts } from "./show_runs.ts";
export { buildViewModel } from "./view/build.ts";
export type { AttemptDetail, ExperimentInput, RunInput, ViewInput } from "./view/build.ts";
export type { ViewEval, ViewModel } from "./view/model.ts";
export { renderHtml } from "./view/html.ts";
