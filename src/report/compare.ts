/**
 * `niceeval show --compare` (issue 17, item 2): pure functions from the slots of two published Runs
 * to per-eval states, counts, text lines and the `niceeval.compare` JSON document.
 */
import { formatScore } from "../_shared/mod.ts";

/** One expected slot of a compared Run; `verdict` is null when the slot has no Attempt. */
export interface CompareSlot {
  readonly evalId: string;
  readonly ordinal: number;
  readonly kind: "pass" | "score";
  readonly verdict: string | null;
  readonly score: number | null;
}

/** One side of a comparison: a published Run and every expected slot of it. */
export interface CompareSide {
  readonly runId: string;
  readonly experimentId: string;
  readonly startedAt: string;
  readonly slots: readonly CompareSlot[];
}

/** What became of one eval from side A ("before") to side B ("after"). */
export type CompareState =
  | "regressed"
  | "fixed"
  | "still-failing"
  | "still-passing"
  | "new"
  | "gone";

/** The states in the order the text lists them; `still-passing` is only counted. */
const STATE_ORDER: readonly CompareState[] = [
  "regressed",
  "fixed",
  "still-failing",
  "still-passing",
  "new",
  "gone",
];

/** The order of the counts line. */
const COUNT_ORDER: readonly CompareState[] = [
  "fixed",
  "regressed",
  "still-failing",
  "still-passing",
  "new",
  "gone",
];

/** Verdicts that make an ordinal count as passing. */
const PASSING_VERDICTS: ReadonlySet<string> = new Set(["passed", "scored"]);

/** One eval on one side: ordinals passing, ordinals in all, and the mean score of a score eval. */
export interface EvalTally {
  readonly passed: number;
  readonly total: number;
  /** Mean over the scored ordinals of a score eval; null for a pass eval or with none scored. */
  readonly meanScore: number | null;
}

/** One eval of a comparison; a side is null when the eval has no slot there. */
export interface EvalComparison {
  readonly evalId: string;
  readonly state: CompareState;
  readonly a: EvalTally | null;
  readonly b: EvalTally | null;
}

/** The whole comparison, evals in first-seen order (A's, then those only in B). */
export interface Comparison {
  readonly a: Omit<CompareSide, "slots">;
  readonly b: Omit<CompareSide, "slots">;
  readonly counts: Readonly<Record<CompareState, number>>;
  readonly evals: readonly EvalComparison[];
}

/** Compares two Runs eval by eval; A is "before", B is "after". */
export function compareRuns(a: CompareSide, b: CompareSide): Comparison {
  const before = tallies(a.slots);
  const after = tallies(b.slots);
  const ids = [...new Set([...before.keys(), ...after.keys()])];
  const evals = ids.map((evalId): EvalComparison => {
    const x = before.get(evalId) ?? null;
    const y = after.get(evalId) ?? null;
    return { evalId, state: stateOf(x, y), a: x, b: y };
  });
  const counts = Object.fromEntries(COUNT_ORDER.map((s) => [s, 0])) as Record<CompareState, number>;
  for (const e of evals) counts[e.state]++;
  return { a: header(a), b: header(b), counts, evals };
}

function header(side: CompareSide): Omit<CompareSide, "slots"> {
  return { runId: side.runId, experimentId: side.experimentId, startedAt: side.startedAt };
}

function tallies(slots: readonly CompareSlot[]): Map<string, EvalTally> {
  const byEval = new Map<string, CompareSlot[]>();
  for (const slot of slots) {
    let list = byEval.get(slot.evalId);
    if (!list) byEval.set(slot.evalId, list = []);
    list.push(slot);
  }
  const out = new Map<string, EvalTally>();
  for (const [evalId, list] of byEval) {
    const passed = list.filter((s) => s.verdict !== null && PASSING_VERDICTS.has(s.verdict));
    // A score below its passAt is failed and still scored (docs/scores.md).
    const scored = list.filter((s) =>
      s.kind === "score" && (s.verdict === "scored" || s.verdict === "failed") && s.score !== null
    );
    const meanScore = scored.length > 0
      ? scored.reduce((sum, s) => sum + (s.score ?? 0), 0) / scored.length
      : null;
    out.set(evalId, { passed: passed.length, total: list.length, meanScore });
  }
  return out;
}

/** An eval passes on a side when every ordinal there passed or scored. */
function passing(t: EvalTally): boolean {
  return t.passed === t.total;
}

function stateOf(a: EvalTally | null, b: EvalTally | null): CompareState {
  if (a === null) return "new";
  if (b === null) return "gone";
  if (passing(a)) return passing(b) ? "still-passing" : "regressed";
  return passing(b) ? "fixed" : "still-failing";
}

/** The `show --compare --json` document (without the fields `show` adds to every document). */
export function compareDocument(c: Comparison): Record<string, unknown> {
  return {
    format: "niceeval.compare",
    schemaVersion: 1,
    a: c.a,
    b: c.b,
    counts: c.counts,
    evals: c.evals.map((e) => ({ evalId: e.evalId, state: e.state, a: e.a, b: e.b })),
  };
}

/** The counts line: `fixed 1 · regressed 2 · still failing 0 · still passing 5 · new 1 · gone 0`. */
export function countsLine(counts: Readonly<Record<CompareState, number>>): string {
  return COUNT_ORDER.map((s) => `${stateText(s)} ${counts[s]}`).join(" · ");
}

/**
 * The text of a comparison: both sides, the counts, then one aligned line per eval that is not
 * still passing, grouped by state (regressed, fixed, still failing, new, gone). A still-passing
 * score eval whose mean score changed is listed last, so that a score drop is visible too.
 */
export function compareLines(c: Comparison): string[] {
  const listed = STATE_ORDER.flatMap((state) =>
    c.evals.filter((e) => e.state === state && (state !== "still-passing" || scoreChanged(e)))
  );
  const rows = listed.map((e) => [stateText(e.state), e.evalId, tallyText(e.a), tallyText(e.b)]);
  const widths = [0, 1, 2].map((col) => Math.max(0, ...rows.map((r) => r[col]!.length)));
  return [
    `before  ${sideText(c.a)}`,
    `after   ${sideText(c.b)}`,
    countsLine(c.counts),
    ...rows.map(([state, evalId, a, b]) =>
      `  ${state!.padEnd(widths[0]!)}  ${evalId!.padEnd(widths[1]!)}  ${
        a!.padEnd(widths[2]!)
      }  →  ${b}`
    ),
  ];
}

/** Compared as printed, so that float noise never lists an unchanged score. */
function scoreChanged(e: EvalComparison): boolean {
  const score = (t: EvalTally | null) =>
    t?.meanScore === null || t === null ? null : formatScore(t.meanScore);
  return score(e.a) !== score(e.b);
}

function sideText(side: Omit<CompareSide, "slots">): string {
  return `run ${side.runId} · ${side.experimentId} · ${side.startedAt}`;
}

function stateText(state: CompareState): string {
  return state.replace("-", " ");
}

/** `2/3 passed`, `1/1 passed · score 0.75`, or `—` for an eval absent on that side. */
function tallyText(t: EvalTally | null): string {
  if (t === null) return "—";
  const head = `${t.passed}/${t.total} passed`;
  return t.meanScore === null ? head : `${head} · score ${formatScore(t.meanScore)}`;
}
