/**
 * Issue 18.1: the circuit breaker and agent preconditions in the scheduler (docs/bail.md). The
 * scheduler runs alone on fake time with fake Attempts.
 */
import assert from "node:assert/strict";
import type { AttemptError, AttemptResult } from "../../src/_shared/mod.ts";
import { CircuitBreaker, errorShape } from "../../src/scheduler/_bail.ts";
import { BAIL_AFTER } from "../../src/scheduler/constants.ts";
import { evalIds, fakePlan } from "../_fakes/plan.ts";
import type { AutoScript } from "../_fakes/attempt.ts";
import { outcomeSummary, startRun } from "./_harness.ts";

const errored = (code: string): AutoScript => ({ durationMs: 1, verdict: "errored", code });

Deno.test("issue 18.1: the first 5 settled Attempts erroring the same way halt the experiment with experiment-halted; another experiment runs on", async () => {
  const plan = fakePlan({
    evals: evalIds(8),
    experiments: [{ id: "x", maxConcurrency: 1 }, { id: "y", maxConcurrency: 1 }],
  });
  const run = startRun(plan, {
    cap: 2,
    script: (slot) => slot.experimentId === "x" ? errored("agent-send-failed") : { durationMs: 1 },
  });
  const outcomes = await run.finish();
  const x = outcomeSummary(plan, outcomes).filter((s) => s.startsWith("x:"));
  assert.equal(BAIL_AFTER, 5);
  assert.deepEqual(x, [
    "x:e0#0 errored",
    "x:e1#0 errored",
    "x:e2#0 errored",
    "x:e3#0 errored",
    "x:e4#0 errored",
    "x:e5#0 not-dispatched:halted",
    "x:e6#0 not-dispatched:halted",
    "x:e7#0 not-dispatched:halted",
  ]);
  assert.ok(
    outcomeSummary(plan, outcomes).filter((s) => s.startsWith("y:")).every((s) =>
      s.endsWith(" passed")
    ),
  );
  const halted = run.log.diagnostics("experiment-halted");
  assert.equal(halted.length, 1);
  assert.equal(halted[0]!.level, "error");
  assert.equal(halted[0]!.experimentId, "x");
  assert.equal(
    halted[0]!.message,
    "systematic error: the first 5 attempts all errored with agent-send-failed: fake error",
  );
  assert.deepEqual(halted[0]!.data, {
    errorCode: "agent-send-failed",
    errorScope: "attempt",
    errorMessage: "fake error",
    settled: 5,
    hint: "fix the cause and run again; --no-bail runs every attempt anyway",
    unstarted: 3,
  });
});

Deno.test("issue 18.1: bailAfter 0 (--no-bail) runs every Attempt of an experiment that errors systematically", async () => {
  const plan = fakePlan({ evals: evalIds(8), experiments: [{ id: "x", maxConcurrency: 1 }] });
  const run = startRun(plan, { cap: 1, bailAfter: 0, script: () => errored("agent-send-failed") });
  const outcomes = await run.finish();
  assert.ok(outcomes.every((o) => o.kind === "executed"), outcomeSummary(plan, outcomes).join());
  assert.equal(run.log.diagnostics("experiment-halted").length, 0);
});

Deno.test("issue 18.1: a settlement that is not the same error among the first 5 disarms the breaker for the run", async (t) => {
  const cases: [string, (index: number) => AutoScript][] = [
    ["a pass first", (i) => i === 0 ? { durationMs: 1 } : errored("agent-send-failed")],
    ["a failure fourth", (i) => i === 3 ? { durationMs: 1, verdict: "failed" } : errored("x")],
    ["another code fifth", (i) => errored(i === 4 ? "sandbox-create-failed" : "x")],
    ["timeouts", () => errored("timeout")],
  ];
  for (const [name, script] of cases) {
    await t.step(name, async () => {
      const plan = fakePlan({ evals: evalIds(9), experiments: [{ id: "x", maxConcurrency: 1 }] });
      const run = startRun(plan, { cap: 1, script: (slot) => script(slot.evalIndex) });
      const outcomes = await run.finish();
      assert.ok(
        outcomes.every((o) => o.kind === "executed"),
        outcomeSummary(plan, outcomes).join(),
      );
      assert.equal(run.log.diagnostics("experiment-halted").length, 0);
    });
  }
});

Deno.test("issue 18.1: an experiment of only 5 Attempts that all error reports no halt: nothing is left to stop", async () => {
  const plan = fakePlan({ evals: evalIds(5), experiments: [{ id: "x", maxConcurrency: 1 }] });
  const run = startRun(plan, { cap: 1, script: () => errored("agent-send-failed") });
  const outcomes = await run.finish();
  assert.ok(outcomes.every((o) => o.kind === "executed"));
  assert.equal(run.log.diagnostics("experiment-halted").length, 0);
});

Deno.test("issue 18.1: Attempts running when the breaker trips finish normally (STOP-3)", async () => {
  const plan = fakePlan({ evals: evalIds(9), experiments: [{ id: "x" }] });
  const run = startRun(plan, { cap: 6 });
  await run.flush();
  assert.equal(run.fake.live().length, 6);
  for (let i = 0; i < 5; i++) run.fake.get(`x:e${i}#0`).error("agent-send-failed");
  await run.flush();
  assert.equal(run.fake.get("x:e5#0").aborted, undefined);
  run.fake.get("x:e5#0").pass();
  const outcomes = await run.finish();
  assert.deepEqual(outcomeSummary(plan, outcomes).slice(5), [
    "x:e5#0 passed",
    "x:e6#0 not-dispatched:halted",
    "x:e7#0 not-dispatched:halted",
    "x:e8#0 not-dispatched:halted",
  ]);
  assert.equal(run.log.diagnostics("experiment-halted")[0]!.data?.unstarted, 3);
});

Deno.test("issue 18.1: an experiment blocked by a failed agent precondition starts no Attempt; one dispatch-halted with its hint; the others run", async () => {
  const plan = fakePlan({
    evals: evalIds(3),
    experiments: [{ id: "x", attempts: 2 }, { id: "y" }],
  });
  const blocked = new Map([["x", {
    message: 'agent "gw" cannot run: its key variable OPENAI_API_KEY (apiKeyEnv) is not set',
    hint: "set OPENAI_API_KEY",
  }]]);
  const run = startRun(plan, { cap: 2, blocked, script: () => ({ durationMs: 1 }) });
  const outcomes = await run.finish();
  assert.deepEqual(run.fake.names().filter((n) => n.startsWith("x:")), []);
  assert.deepEqual(outcomeSummary(plan, outcomes), [
    "x:e0#0 not-dispatched:halted",
    "x:e0#1 not-dispatched:halted",
    "y:e0#0 passed",
    "x:e1#0 not-dispatched:halted",
    "x:e1#1 not-dispatched:halted",
    "y:e1#0 passed",
    "x:e2#0 not-dispatched:halted",
    "x:e2#1 not-dispatched:halted",
    "y:e2#0 passed",
  ]);
  const halted = run.log.diagnostics("dispatch-halted");
  assert.equal(halted.length, 1);
  assert.equal(
    halted[0]!.message,
    'experiment halted · x: agent "gw" cannot run: its key variable OPENAI_API_KEY (apiKeyEnv) is not set',
  );
  assert.deepEqual(halted[0]!.data, {
    scope: "experiment",
    reason: "precondition",
    hint: "set OPENAI_API_KEY",
    unstarted: 6,
  });
});

function error(code: string, message: string, scope: AttemptError["scope"] = "attempt") {
  return { code, phase: "agent.send", message, scope, location: null, stack: null } as const;
}

function resultOf(e: AttemptError | null): AttemptResult {
  return { verdict: e ? "errored" : "passed", error: e } as unknown as AttemptResult;
}

Deno.test("issue 18.1: the same error means the same code, scope, phase and sub-reason (HTTP status, retry reason)", () => {
  const http = (status: number, body: string) =>
    error("agent-send-failed", `Cannot send: HTTP ${status} from http://h/v1: ${body}`);
  assert.equal(errorShape(http(401, "request a1")), errorShape(http(401, "request b2")));
  assert.notEqual(errorShape(http(401, "x")), errorShape(http(403, "x")));
  const refused = (n: number) =>
    error(
      "agent-send-failed",
      `Cannot send: connect ${n} refused retries exhausted (4 tries, network)`,
    );
  assert.equal(errorShape(refused(1)), errorShape(refused(2)));
  assert.notEqual(
    errorShape(refused(1)),
    errorShape(error("agent-send-failed", "x retries exhausted (4 tries, rate_limit)")),
  );
  assert.notEqual(errorShape(error("a", "m")), errorShape(error("a", "m", "eval")));
  assert.notEqual(errorShape(error("a", "one")), errorShape(error("a", "two")));
  const breaker = new CircuitBreaker(2);
  assert.equal(breaker.settled("x", resultOf(http(401, "a"))), null);
  assert.deepEqual(breaker.settled("x", resultOf(http(401, "b"))), http(401, "a"));
  assert.equal(breaker.settled("x", resultOf(http(401, "c"))), null, "trips once");
  assert.equal(breaker.settled("y", resultOf(http(401, "a"))), null);
  assert.equal(breaker.settled("y", resultOf(http(500, "a"))), null);
  assert.equal(breaker.settled("y", resultOf(http(500, "a"))), null, "disarmed after a mismatch");
});
