/**
 * @module report
 * Owns finished-run reporting: the shared result model (rows, counts, headline, exit code), plain
 * human output, the NDJSON stream and JUnit XML. It renders; it never schedules or writes the Record.
 */
export { exitCodeOf, isGap, reportedResult, summarize } from "./summary.ts";
export type { Counts, Headline, RunSummary, SlotReport, SlotState } from "./summary.ts";
export {
  assertionShape,
  attemptLines,
  endLines,
  evalResultText,
  firstFailure,
  planLines,
  showValue,
} from "./human.ts";
export type { PlanInfo } from "./human.ts";
export { NdjsonReporter } from "./ndjson.ts";
export type { ReceiptInfo, StartInfo } from "./ndjson.ts";
export { junitXml } from "./junit.ts";
export type { JunitRun } from "./junit.ts";
export { PermanentLines } from "./plain_stream.ts";
export { dryDocument, dryLines } from "./dry.ts";
export { attemptViewLines, currentLines, jsonRow, runLines } from "./show.ts";
export type { AttemptView, ShowAttempt, ShowRow } from "./show.ts";
