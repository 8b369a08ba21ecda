/** Section R of scenarios.md with real processes: interrupts, teardowns and exit codes. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ndjson } from "../_helpers/cli.ts";
import { coordProject, marksOf, pollUntil, tree } from "./_coordination.ts";

const TEARDOWNS = ".niceeval/coordination/teardowns";

for (const [id, signal] of [["S124", "SIGINT"], ["S126", "SIGTERM"]] as const) {
  Deno.test(`${id} one ${signal} with 2 running and 5 queued interrupts, tears down and publishes exits 130`, async () => {
    await using p = await coordProject();
    await p.set("hold-attempt");
    await using a = p.start(["exp", "hooks", "many", "--json"], "A");
    await pollUntil(
      async () => marksOf(await p.marks(), "attempt-held").length === 2,
      "two Attempts run",
    );
    a.child.kill(signal);
    const done = await a.finished();
    assert.equal(done.code, 130, done.stderr);
    const events = ndjson(done.stdout);
    const ends = events.filter((e) => e.type === "attempt_end");
    assert.deepEqual(ends.map((e) => e.outcome), ["interrupted", "interrupted"]);
    const skipped = events.filter((e) => e.type === "not_dispatched");
    assert.deepEqual(skipped.map((e) => e.reason), Array(5).fill("interrupted"));
    assert.deepEqual(
      events.filter((e) => e.type === "experiment_teardown").map((e) => e.status),
      ["started", "done"],
    );
    assert.equal(marksOf(await p.marks(), "teardown-end").length, 1);
    const receipt = events.at(-1)!;
    assert.deepEqual([receipt.completion, receipt.exitCode], ["interrupted", 130]);
    const [runId] = receipt.runIds as string[];
    assert.ok((await tree(join(p.dir, ".niceeval/record/runs"))).includes(`${runId}/complete`));
    assert.deepEqual(await tree(join(p.dir, TEARDOWNS)), []);
  });
}

Deno.test("S125 a second SIGINT during a slow teardown exits 130 promptly, keeps the registration, and the next run recovers it", async () => {
  await using p = await coordProject();
  await p.set("hold-teardown");
  await using a = p.start(["exp", "hooks", "steps/0001", "--json"], "A");
  await p.waitForMark((m) => m.tag === "A" && m.event === "teardown-held", "A's teardown runs");
  a.child.kill("SIGINT");
  await a.waitForEvent((e) => e.type === "interrupted", "the first signal is seen");
  // The signal relay ignores a repeat of the same signal within 250 ms (toolchain.md §10.5.2).
  await new Promise((resolve) => setTimeout(resolve, 300));
  const second = Date.now();
  a.child.kill("SIGINT");
  const done = await a.finished();
  const elapsed = Date.now() - second;
  assert.equal(done.code, 130, done.stderr);
  assert.ok(elapsed < 12_000, `exited ${elapsed} ms after the second signal`);
  assert.equal(ndjson(done.stdout).at(-1)!.completion, "interrupted");
  assert.equal((await tree(join(p.dir, TEARDOWNS))).length, 1, "the registration remains");
  await p.clear("hold-teardown");
  const b = await p.exec(["exp", "hooks", "steps/0002", "--json"], "B");
  assert.equal(b.code, 0, b.stderr);
  const recovered = marksOf(await p.marks(), "teardown-start", "B")
    .filter((m) => String(m.detail?.evals) === "steps/0001");
  assert.equal(recovered.length, 1);
  assert.ok(b.stdout.includes('"orphan-teardown-ran"'));
});

Deno.test("S128 exit codes: 0 all passed, 1 one failed, 2 an invalid Experiment, 3 an internal defect after teardown", async (t) => {
  await using p = await coordProject();
  await t.step("all passed exits 0", async () => {
    assert.equal((await p.exec(["exp", "plain"], "A")).code, 0);
  });
  await t.step("one failed exits 1", async () => {
    await p.set("fail-eval");
    const r = await p.exec(["exp", "hooks", "many/0000", "many/0001"], "B");
    await p.clear("fail-eval");
    assert.equal(r.code, 1, r.stderr);
  });
  await t.step("an invalid Experiment file exits 2", async () => {
    await p.write("experiments/broken.ts", 'export default { agent: "none" };\n');
    const r = await p.exec(["exp", "plain"], "C");
    await Deno.remove(join(p.dir, "experiments/broken.ts"));
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^error: experiments\/broken\.ts/m);
  });
  await t.step("an injected internal defect exits 3 with a stack after teardown", async () => {
    await p.set("inject-defect");
    const r = await p.exec(["exp", "hooks", "steps", "--json"], "D");
    assert.equal(r.code, 3);
    assert.match(r.stderr, /^internal error: injected defect\nError: injected defect\n\s+at /m);
    assert.match(r.stderr, /^hint: this is a niceeval bug/m);
    assert.equal(ndjson(r.stdout).at(-1)!.completion, "failed");
    assert.equal(marksOf(await p.marks(), "teardown-end", "D").length, 1);
  });
});
