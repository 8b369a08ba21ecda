/** The rows of each (experiment, eval) for the NDJSON `eval` lines (issue 20). */
import assert from "node:assert/strict";
import { evalGroups } from "../../src/report/_eval_line.ts";
import type { SlotReport } from "../../src/report/summary.ts";

/** Rows that carry only the indexes grouping reads, tagged by their position. */
function rowsOf(indexes: readonly (readonly [number, number])[]): SlotReport[] {
  return indexes.map(([evalIndex, experimentIndex], i) =>
    ({ i, slot: { evalIndex, experimentIndex } }) as unknown as SlotReport
  );
}

/** The plain grouping: a map in the order of each group's first row. */
function reference(rows: readonly SlotReport[]): SlotReport[][] {
  const groups = new Map<string, SlotReport[]>();
  for (const row of rows) {
    const key = `${row.slot.evalIndex}/${row.slot.experimentIndex}`;
    groups.set(key, [...(groups.get(key) ?? []), row]);
  }
  return [...groups.values()];
}

/** A small deterministic generator (a linear congruential one). */
function lcg(seed: number): () => number {
  let state = seed;
  return () => (state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
}

Deno.test("issue 20: evalGroups() groups like a map in first-row order, dense and sparse indexes alike", () => {
  const random = lcg(7);
  for (let round = 0; round < 200; round++) {
    const evals = 1 + Math.floor(random() * (round % 3 === 0 ? 5_000 : 20));
    const experiments = 1 + Math.floor(random() * 4);
    const n = Math.floor(random() * 60);
    const rows = rowsOf(Array.from({ length: n }, () =>
      [
        Math.floor(random() * evals),
        Math.floor(random() * experiments),
      ] as const));
    assert.deepEqual([...evalGroups(rows)], reference(rows), `round ${round}`);
  }
  const odd = rowsOf([[2, 0], [-1, 0], [2, 0], [-1, 0], [0.5, 1]]);
  assert.deepEqual([...evalGroups(odd)], reference(odd));
  assert.deepEqual([...evalGroups([])], []);
});
