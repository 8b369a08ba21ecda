/**
 * The stream side of send backoff and early exit: a `sleeping` event the deadline or an interrupt
 * cuts short is closed (OUT-J6), `maxRetries` counts retries rather than tries (RETRY-2), and the
 * `eval` line counts an in-flight sibling cancelled by early exit as not needed (OUT-J4).
 */
import assert from "node:assert/strict";
import type { RunEvent } from "../../src/_shared/mod.ts";
import { NdjsonReporter, summarize } from "../../src/report/mod.ts";
import { fakePlan } from "../_fakes/plan.ts";
import { createScriptedRandom } from "../_fakes/random.ts";
import { startRun } from "./_harness.ts";

/**
 * OUT-J6 as written: `starts − ends − (sleeping − resumed)` after each event, checked against the
 * cap at every `attempt_start` and `resumed`.
 */
function outJ6(events: readonly RunEvent[], cap: number) {
  let executing = 0;
  const over: string[] = [];
  for (const e of events) {
    if (e.type === "attempt_start") executing++;
    else if (e.type === "attempt_end") executing--;
    else if (e.type === "backoff") executing += e.state === "sleeping" ? -1 : 1;
    else continue;
    const checked = e.type === "attempt_start" || (e.type === "backoff" && e.state === "resumed");
    if (checked && executing > cap) over.push(`${e.type} ${e.slot.evalId}: ${executing} > ${cap}`);
  }
  return { executing, over };
}

Deno.test("S120 OUT-J6 a backoff cut short by the deadline is closed right after its attempt_end", async () => {
  const plan = fakePlan({
    evals: [{ id: "slow", timeoutMs: 3000 }, "other"],
    experiments: [{ id: "x" }],
  });
  const run = startRun(plan, { cap: 1 });
  await run.flush();
  const sleep = run.fake.get("x:slow#0").backoff("rate_limit", 10_000);
  const rejected = assert.rejects(sleep);
  await run.flush();
  // The freed slot runs `other` while `slow` sleeps past its deadline.
  assert.deepEqual(run.log.starts(), ["x:slow#0", "x:other#0"]);
  await run.clock.tickAsync(3000);
  await rejected;
  run.fake.get("x:other#0").pass();
  await run.finish();
  const slow = run.log.events.filter((e) =>
    (e.type === "attempt_end" || e.type === "backoff") && e.slot.evalId === "slow"
  ).map((e) => e.type === "backoff" ? `backoff ${e.state}` : e.type);
  assert.deepEqual(slow, ["backoff sleeping", "attempt_end", "backoff resumed"]);
  assert.deepEqual(outJ6(run.log.events, 1), { executing: 0, over: [] });
  assert.deepEqual(run.log.allViolations(), []);
});

Deno.test("OUT-J6 INT-1 a backoff cut short by an interrupt is closed right after its attempt_end", async () => {
  const plan = fakePlan({ evals: ["a", "b"], experiments: [{ id: "x" }] });
  const run = startRun(plan, { cap: 2, random: createScriptedRandom([0.5]) });
  await run.flush();
  const sleep = run.fake.get("x:a#0").backoff();
  const rejected = assert.rejects(sleep);
  await run.clock.tickAsync(100);
  run.interrupt.abort(new Error("SIGINT"));
  await rejected;
  await run.finish();
  const backoffs = run.log.ofType("backoff").map((e) => `${e.slot.evalId} ${e.state}`);
  assert.deepEqual(backoffs, ["a sleeping", "a resumed"]);
  assert.deepEqual(outJ6(run.log.events, 2), { executing: 0, over: [] });
  assert.equal(run.log.counters.backoff, 0);
});

Deno.test("RETRY-2 backoff events report the 3 retries a send can have, not its 4 tries", async () => {
  const plan = fakePlan({ evals: ["e"], experiments: [{ id: "x" }] });
  const run = startRun(plan, { cap: 1, random: createScriptedRandom([0.1]) });
  await run.flush();
  const attempt = run.fake.get("x:e#0");
  const first = attempt.backoff();
  await run.clock.tickAsync(500);
  await first;
  await run.passAll();
  assert.deepEqual(run.log.ofType("backoff").map((e) => [e.state, e.retry, e.maxRetries]), [
    ["sleeping", 1, 3],
    ["resumed", 1, 3],
  ]);
});

Deno.test("OUT-J4 EARLY-4 the eval line counts an in-flight sibling cancelled by early exit as not needed", async () => {
  const plan = fakePlan({ evals: ["e"], experiments: [{ id: "x", attempts: 3, earlyExit: true }] });
  const run = startRun(plan, { cap: 2 });
  await run.flush();
  assert.deepEqual(run.log.starts(), ["x:e#0", "x:e#1"]);
  run.fake.get("x:e#0").pass();
  const outcomes = await run.finish();
  // e#1 was running when e#0 passed: cancelled and skipped; e#2 never started.
  const e1 = outcomes[1]!;
  assert.ok(e1.kind === "executed");
  assert.deepEqual([e1.result.verdict, e1.result.skipReason], ["skipped", "early-exit"]);
  assert.deepEqual(outcomes[2], { kind: "not-dispatched", reason: "early-exit" });
  const lines: Record<string, unknown>[] = [];
  const reporter = new NdjsonReporter((text) => {
    for (const line of text.trimEnd().split("\n")) lines.push(JSON.parse(line));
  }, { now: () => run.clock.now(), runIdOf: () => "run-1" });
  reporter.evals(summarize(plan, outcomes, { runIdOf: () => "run-1", interrupted: false }));
  const line = lines.find((l) => l.type === "eval")!;
  assert.deepEqual([line.verdict, line.passed, line.notNeeded], ["passed", 1, 2]);
});
