/** Section R of scenarios.md with real processes: interrupts, teardowns and exit codes. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { leaseDirOf } from "../../src/coordination/mod.ts";
import { ndjson } from "../_helpers/cli.ts";
import { readRunFiles } from "../_helpers/record_files.ts";
import {
  type CoordProject,
  coordProject,
  marksOf,
  pollUntil,
  type Running,
  tree,
} from "./_coordination.ts";

const TEARDOWNS = ".niceeval/coordination/teardowns";
const SIGNAL_DEDUPE_MS = 250;

async function leaseNames(p: CoordProject): Promise<string[]> {
  return await tree(leaseDirOf(p.dir, "db/main"));
}

/**
 * Sends SIGINT and waits until the process reported it (and, with `mark`, until the fixture
 * logged that mark), then sends the second SIGINT once the relay's de-duplication window
 * (toolchain.md §10.5.2: a repeat within 250 ms is the same signal) has passed since that
 * report. The wait only makes the signals distinct; it bounds nothing.
 */
async function interruptTwiceAfter(a: Running, p: CoordProject, mark?: string): Promise<void> {
  a.child.kill("SIGINT");
  const seen = await a.waitForEvent((e) => e.type === "interrupted", "the first signal is seen");
  if (mark) await p.waitForMark((m) => m.event === mark, `the fixture marks ${mark}`);
  const windowEnd = Date.parse(String(seen.at)) + SIGNAL_DEDUPE_MS;
  await pollUntil(() => Date.now() > windowEnd, "the de-duplication window passed");
  a.child.kill("SIGINT");
}

async function attemptOutcomes(p: CoordProject, runId: string): Promise<string[]> {
  const run = await readRunFiles(join(p.dir, ".niceeval/record"), runId);
  return [...run.attempts.values()].map(({ attempt }) => `${attempt.evalId} ${attempt.outcome}`)
    .sort();
}

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

for (const [id, signal] of [["S124", "SIGINT"], ["S126", "SIGTERM"]] as const) {
  Deno.test(`${id} one ${signal} runs every finalizer: sandbox stop, teardown, registration, lease release; seals the finished Attempt exits 130`, async () => {
    await using p = await coordProject();
    await p.set("hold-attempt-two");
    await using a = p.start(["exp", "boxed", "--json"], "A");
    await p.waitForMark((m) => m.event === "attempt-two-held", "steps/0001 runs, steps/0000 ended");
    const sandboxRoots = async () => (await tree(p.sandboxDir)).filter((x) => /^[^/]+\/$/.test(x));
    assert.equal((await sandboxRoots()).length, 1, "one pooled sandbox exists");
    a.child.kill(signal);
    const done = await a.finished();
    assert.equal(done.code, 130, done.stderr);
    const events = ndjson(done.stdout);
    assert.deepEqual(
      events.filter((e) => e.type === "attempt_end").map((e) => [e.evalId, e.outcome]),
      [["steps/0000", "completed"], ["steps/0001", "interrupted"]],
    );
    assert.deepEqual(
      events.filter((e) => e.type === "not_dispatched").map((e) => [e.evalId, e.reason]),
      [["steps/0002", "interrupted"]],
    );
    const marks = marksOf(await p.marks(), "sandbox-stopped", "A");
    assert.equal(marks.length, 1, "the pooled sandbox was stopped");
    assert.deepEqual(await sandboxRoots(), [], "no sandbox remains");
    assert.equal(marksOf(await p.marks(), "teardown-end", "A").length, 1);
    assert.deepEqual(await tree(join(p.dir, TEARDOWNS)), [], "the registration is removed");
    assert.ok((await leaseNames(p)).includes("released-0000000001.json"), "the lease is released");
    const receipt = events.at(-1)!;
    assert.deepEqual([receipt.completion, receipt.exitCode], ["interrupted", 130]);
    const [runId] = receipt.runIds as string[];
    assert.ok((await tree(join(p.dir, ".niceeval/record/runs"))).includes(`${runId}/complete`));
    assert.deepEqual(await attemptOutcomes(p, runId!), [
      "steps/0000 completed",
      "steps/0001 interrupted",
    ]);
    await p.clear("hold-attempt-two");
    const next = await p.exec(["exp", "boxed", "--json"], "B");
    assert.equal(next.code, 0, next.stderr);
    const start = ndjson(next.stdout)[0]!;
    assert.deepEqual([start.reused, start.toRun], [1, 2], "the sealed Attempt is carried");
  });
}

// S125's "within FORCE_CLEANUP_MS + 2 s" is checked as causality, not speed: the teardown (or the
// sandbox stop) stays blocked on its barrier until the process has exited, so a process that
// waited for it would never exit, and one that exits has not waited for it.
Deno.test("S125 a second SIGINT during a blocked teardown exits 130 without waiting for it, keeps the registration, and the next run recovers it", async () => {
  await using p = await coordProject();
  await p.set("hold-teardown");
  await using a = p.start(["exp", "hooks", "steps/0001", "--json"], "A");
  await p.waitForMark((m) => m.tag === "A" && m.event === "teardown-held", "A's teardown runs");
  await interruptTwiceAfter(a, p);
  const done = await a.finished();
  assert.equal(done.code, 130, done.stderr);
  assert.deepEqual(marksOf(await p.marks(), "teardown-end", "A"), [], "the teardown never ended");
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

Deno.test("S125 a second SIGINT while a sandbox stop is blocked force-removes it, skips the teardown, keeps the registration and retains the lease exits 130", async () => {
  await using p = await coordProject();
  await p.set("hold-attempt");
  await p.set("hold-sandbox-stop");
  await using a = p.start(["exp", "boxed", "--json"], "A");
  await p.waitForMark((m) => m.tag === "A" && m.event === "attempt-held", "A runs an Attempt");
  await interruptTwiceAfter(a, p, "sandbox-stop-held");
  // hold-sandbox-stop is still set: the exit did not wait for the blocked stop.
  const done = await a.finished();
  assert.equal(done.code, 130, done.stderr);
  assert.equal(ndjson(done.stdout).at(-1)!.completion, "interrupted");
  assert.deepEqual((await tree(p.sandboxDir)).filter((x) => /^[^/]+\/$/.test(x)), [], "removed");
  assert.deepEqual(marksOf(await p.marks(), "teardown-start"), [], "the teardown never started");
  assert.equal((await tree(join(p.dir, TEARDOWNS))).length, 1, "the registration remains");
  const lease = await leaseNames(p);
  assert.ok(lease.includes("owner-0000000001.json"));
  assert.ok(!lease.includes("released-0000000001.json"), "the lease is not released");
  await p.clear("hold-sandbox-stop");
  await p.clear("hold-attempt");
  const inspect = await p.exec(
    ["exp", "boxed", "--teardown", "--recover-shared-state", "db/main"],
    "T",
  );
  assert.equal(inspect.code, 1);
  assert.match(inspect.stdout, /^state {2,}retained$/m);
  assert.match(inspect.stdout, /^lock {2,}free$/m);
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
    // issue 18.8: the internal error is an `error` line right before the receipt, only once.
    const errors = ndjson(r.stdout).filter((e) => e.code === "internal-error");
    assert.deepEqual(errors.map((e) => [e.type, e.message]), [["error", "injected defect"]]);
    assert.equal(ndjson(r.stdout).at(-2)!.code, "internal-error");
    assert.equal(marksOf(await p.marks(), "teardown-end", "D").length, 1);
  });
});
