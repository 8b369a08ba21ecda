/** The NDJSON `eval` lines (OUT-J2, OUT-J4): rows grouped per (experiment, eval), one pass each. */
import type { Counts, SlotReport } from "./summary.ts";
import { isGap, zeroCounts } from "./summary.ts";

/** One NDJSON object: `type` and `at` first, then the fields of its type (OUT-J1, OUT-J2). */
export interface NdjsonLine {
  readonly type: string;
  readonly at: string;
  readonly [field: string]: unknown;
}

/**
 * The rows of each (experiment, eval), in the order of each group's first row. Each group's array
 * is made as it is read: 100,000 groups never exist at once (issue 20), only four integer arrays.
 */
export function* evalGroups(rows: readonly SlotReport[]): Generator<SlotReport[]> {
  let experiments = 0;
  let evals = 0;
  for (const { slot } of rows) {
    experiments = Math.max(experiments, slot.experimentIndex + 1);
    evals = Math.max(evals, slot.evalIndex + 1);
  }
  const keys = experiments * evals;
  const dense = rows.every(({ slot }) =>
    Number.isInteger(slot.evalIndex) && slot.evalIndex >= 0 &&
    Number.isInteger(slot.experimentIndex) && slot.experimentIndex >= 0
  );
  if (!dense || keys > 4 * rows.length + 1_024) {
    yield* mapGroups(rows);
    return;
  }
  const keyOf = (row: SlotReport) => row.slot.evalIndex * experiments + row.slot.experimentIndex;
  // Rows per key, and the keys in the order of their first row.
  const counts = new Int32Array(keys);
  const firstKeys = new Int32Array(rows.length);
  let groups = 0;
  for (const row of rows) {
    const key = keyOf(row);
    if (counts[key] === 0) firstKeys[groups++] = key;
    counts[key]!++;
  }
  // Where each key's rows start in `members`, in group order; then the rows, in row order.
  const starts = new Int32Array(keys);
  let next = 0;
  for (let g = 0; g < groups; g++) {
    starts[firstKeys[g]!] = next;
    next += counts[firstKeys[g]!]!;
  }
  const members = new Int32Array(rows.length);
  const filled = new Int32Array(keys);
  rows.forEach((row, i) => {
    const key = keyOf(row);
    members[starts[key]! + filled[key]!] = i;
    filled[key]!++;
  });
  for (let g = 0; g < groups; g++) {
    const key = firstKeys[g]!;
    const group: SlotReport[] = new Array(counts[key]!);
    for (let j = 0; j < group.length; j++) group[j] = rows[members[starts[key]! + j]!]!;
    yield group;
  }
}

/** {@link evalGroups} through a map, for indexes too sparse for arrays. */
function mapGroups(rows: readonly SlotReport[]): Iterable<SlotReport[]> {
  const groups = new Map<string, SlotReport[]>();
  for (const row of rows) {
    const key = `${row.slot.evalIndex}/${row.slot.experimentIndex}`;
    const group = groups.get(key);
    if (group) group.push(row);
    else groups.set(key, [row]);
  }
  return groups.values();
}

/** What an `eval` line counts; the verdict and the mean score come from these. */
interface EvalCounts extends Counts {
  /** Score rows with a score: scored ones and those below their passAt. */
  scores: number;
  scoreSum: number;
  /** Sum of the possible scores of those rows; null once one is unknown. */
  possibleSum: number | null;
}

/** The `eval` line of one (experiment, eval); one pass over its rows. */
export function evalLine(rows: readonly SlotReport[], at: string): NdjsonLine {
  const first = rows[0]!.slot;
  const c: EvalCounts = { ...zeroCounts(), scores: 0, scoreSum: 0, possibleSum: 0 };
  for (const r of rows) countRow(c, r);
  return {
    type: "eval",
    at,
    experimentId: first.experimentId,
    evalId: first.evalId,
    kind: first.kind,
    verdict: evalVerdict(c),
    planned: rows.length,
    passed: c.passed,
    failed: c.failed,
    errored: c.errored,
    skipped: c.skipped,
    scored: c.scored,
    reused: c.reused,
    unstarted: c.unstarted,
    notNeeded: c.notNeeded,
    score: c.scores > 0 ? c.scoreSum / c.scores : null,
    // Mean possible score (docs/scores.md): null when nothing was scored or one is unknown.
    possible: c.scores > 0 && c.possibleSum !== null ? c.possibleSum / c.scores : null,
    passAt: first.kind === "score" ? rows.find((r) => r.passAt !== null)?.passAt ?? null : null,
    attempts: rows.map((r) => ({
      ordinal: r.slot.ordinal,
      locator: r.locator,
      verdict: r.verdict ?? (r.reason === "interrupted" ? "interrupted" : "skipped"),
      carried: r.state === "carried",
      reason: r.state === "executed" ? r.result?.skipReason ?? null : r.reason,
    })),
  };
}

function countRow(c: EvalCounts, r: SlotReport): void {
  if (r.verdict === "passed") c.passed++;
  else if (r.verdict === "failed") c.failed++;
  else if (r.verdict === "errored") c.errored++;
  else if (r.verdict === "skipped") c.skipped++;
  else if (r.verdict === "scored") c.scored++;
  // A score below its passAt is failed and still scored (docs/scores.md).
  if (r.slot.kind === "score" && (r.verdict === "scored" || r.verdict === "failed")) {
    c.scores++;
    c.scoreSum += r.score ?? 0;
    c.possibleSum = c.possibleSum === null || r.possible === null
      ? null
      : c.possibleSum + r.possible;
  }
  if (r.state === "carried") c.reused++;
  if (isGap(r)) c.unstarted++;
  // Early-exit skips (OUT-J4): slots never dispatched, and in-flight siblings it cancelled.
  if (r.reason === "early-exit" && (r.verdict === null || r.verdict === "skipped")) c.notNeeded++;
  if (r.verdict === "interrupted" || r.reason === "interrupted") c.interrupted++;
}

/** OUT-J4: the first match of errored, failed, interrupted, incomplete, passed, scored, skipped. */
function evalVerdict(c: EvalCounts): string {
  if (c.errored > 0) return "errored";
  if (c.failed > 0) return "failed";
  if (c.interrupted > 0) return "interrupted";
  if (c.unstarted > 0) return "incomplete";
  if (c.passed > 0) return "passed";
  return c.scored > 0 ? "scored" : "skipped";
}
