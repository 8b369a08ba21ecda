/**
 * The progress line of plain output on the real CLI (issue 18 item 4, docs/progress.md): 30
 * Attempts of 600 ms, 3 at a time. When each line comes is pinned on a fake clock in
 * tests/panel/progress_test.ts; here only what holds whatever the machine's speed.
 */
import assert from "node:assert/strict";
import { tempProject } from "../_helpers/cli.ts";

const PROGRESS_REGEXP = /^(\d+)\/30 · (\d+) passed · (\d+) failed · (\d+) errored · ETA (—|\d+s)$/;

Deno.test("issue 18.4: niceeval exp in plain mode (CI) prints progress lines between PLAN and the end panels, never 30/30", async () => {
  await using p = await tempProject("progress_project");
  const r = await p.run(["exp"], { env: { CI: "1" } });
  assert.equal(r.code, 1, r.stderr);
  const lines = r.stdout.split("\n");
  const progress = lines.flatMap((line, index) => {
    const m = PROGRESS_REGEXP.exec(line);
    return m ? [{ index, done: Number(m[1]), counts: m.slice(2, 5).map(Number), eta: m[5]! }] : [];
  });
  // The 27 Attempts after the first three take at least 5.4 s, so a line is due before the end.
  assert.ok(progress.length >= 1, r.stdout);
  const headline = lines.indexOf(lines.find((line) => line.startsWith("ERRORED"))!);
  for (const [i, line] of progress.entries()) {
    assert.ok(line.index > 1 && line.index < headline, "between PLAN and the end panels");
    assert.ok(line.done < 30, "no line once every Attempt settled");
    assert.equal(line.counts.reduce((a, b) => a + b, 0), line.done, "passed + failed + errored");
    if (line.done > 0) assert.notEqual(line.eta, "—", "an ETA once an Attempt settled");
    if (i > 0) assert.ok(line.done >= progress[i - 1]!.done, "counts never go back");
  }
  assert.ok(!lines.some((line) => line.startsWith("… ")), "no heartbeat");
});
