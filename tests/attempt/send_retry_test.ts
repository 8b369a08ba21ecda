import assert from "node:assert/strict";
import { defineEval, EvalFatalError, ExperimentFatalError, type FailureInfo } from "niceeval";
import {
  type AgentContext,
  completeEvidenceCoverage,
  createSessionSlot,
  defineAgent,
  scriptedAgent,
  SendRejectedError,
} from "niceeval/adapter";
import { includes } from "niceeval/expect";
import { createFakeControl } from "../_fakes/control.ts";
import { diagnosticCodes, runEval, startEval, untraced } from "./_run.ts";

const sayHello = defineEval({
  async test(t) {
    await t.send("Say hello");
    t.check(t.reply, includes("Hello"));
  },
});

/** An agent whose every try runs `onTry`; a try that returns answers "Hello". */
function tryingAgent(onTry: (ctx: AgentContext, input: string) => void) {
  return defineAgent({
    name: "trying",
    evidenceCoverage: completeEvidenceCoverage,
    send(input, ctx) {
      onTry(ctx, input.text);
      return Promise.resolve({
        status: "completed",
        events: [{ type: "message", role: "assistant", text: "Hello" }],
      });
    },
  });
}

Deno.test("a SendRejectedError is retried through control.backoff with the same session and input", async () => {
  const marker = createSessionSlot<string>("marker");
  const tries: { sendTry: number; marker: string | undefined; input: string }[] = [];
  const agent = tryingAgent((ctx, input) => {
    tries.push({ sendTry: ctx.sendTry, marker: ctx.session.get(marker), input });
    if (ctx.sendTry < 2) {
      throw new SendRejectedError("busy", { reason: "rate_limit", retryAfterMs: 1500 });
    }
    ctx.session.set(marker, "accepted");
  });
  const control = createFakeControl();
  const result = await startEval(sayHello, { agent, control }).result;
  assert.equal(result.verdict, "passed");
  assert.deepEqual(tries, [
    { sendTry: 0, marker: undefined, input: "Say hello" },
    { sendTry: 1, marker: undefined, input: "Say hello" },
    { sendTry: 2, marker: undefined, input: "Say hello" },
  ]);
  assert.deepEqual(control.backoffs.map((b) => b.request), [
    { reason: "rate_limit", retry: 1, retryAfterMs: 1500 },
    { reason: "rate_limit", retry: 2, retryAfterMs: 1500 },
  ]);
  assert.deepEqual(result.retries, [{ phase: "agent.send", reason: "rate_limit", count: 2 }]);
  assert.equal(result.turnCount, 3);
  assert.equal(result.details.turns.length, 1);
});

Deno.test("a retried scripted send keeps only the accepted try's events and usage", async () => {
  const agent = scriptedAgent({
    script: [{
      when: "Say hello",
      reply: {
        text: "Hello",
        usage: { inputTokens: 7, outputTokens: 2 },
        reject: { reason: "network", times: 1 },
      },
    }],
  });
  const control = createFakeControl();
  const result = await startEval(sayHello, { agent, control }).result;
  assert.equal(result.verdict, "passed");
  assert.deepEqual(control.backoffs.map((b) => b.request), [
    { reason: "network", retry: 1, retryAfterMs: 0 },
  ]);
  assert.deepEqual(result.usage, { inputTokens: 7, outputTokens: 2 });
  assert.deepEqual(result.details.turns[0]?.events.map((e) => e.type), ["message", "message"]);
});

Deno.test("S115 4 rejections exhaust the send: agent-send-failed · retries exhausted (4 tries, rate_limit)", async () => {
  const agent = scriptedAgent({
    script: [{
      when: "Say hello",
      reply: { text: "Hello", reject: { reason: "rate_limit", times: 4 } },
    }],
  });
  const control = createFakeControl();
  let caught: unknown;
  const result = await startEval(
    defineEval({
      async test(t) {
        await t.send("Say hello").catch((error) => caught = error);
        t.check("x", includes("x"));
      },
    }),
    { agent, control },
  ).result;
  assert.equal((caught as Error).name, "AgentSendError");
  assert.equal(result.verdict, "errored");
  assert.equal(result.error?.code, "agent-send-failed");
  assert.equal(result.error?.phase, "agent.send");
  assert.equal(result.error?.scope, "attempt");
  assert.match(result.error?.message ?? "", / · retries exhausted \(4 tries, rate_limit\)$/);
  assert.deepEqual(control.backoffs.map((b) => b.request.retry), [1, 2, 3]);
  assert.deepEqual(result.retries, [{ phase: "agent.send", reason: "rate_limit", count: 3 }]);
});

Deno.test("S117 the 9th retryable failure is not retried: attempt retry budget exhausted (8 retries", async () => {
  const agent = scriptedAgent({
    script: [{ when: /.*/, reply: { text: "ok", reject: { reason: "network", times: 3 } } }],
  });
  const control = createFakeControl();
  const outcomes: string[] = [];
  const result = await startEval(
    defineEval({
      async test(t) {
        for (const text of ["one", "two", "three"]) {
          await t.send(text).then(
            () => outcomes.push(`${text} ok`),
            () => outcomes.push(`${text} failed`),
          );
        }
      },
    }),
    { agent, control },
  ).result;
  assert.deepEqual(outcomes, ["one ok", "two ok", "three failed"]);
  assert.equal(control.backoffs.length, 8);
  assert.deepEqual(control.backoffs.map((b) => b.request.retry), [1, 2, 3, 1, 2, 3, 1, 2]);
  assert.equal(result.error?.code, "agent-send-failed");
  assert.match(
    result.error?.message ?? "",
    / · attempt retry budget exhausted \(8 retries, network\)$/,
  );
  assert.deepEqual(result.retries, [{ phase: "agent.send", reason: "network", count: 8 }]);
});

Deno.test("S116 a failure after acceptance (plain Error) is not retried", async () => {
  const agent = tryingAgent(() => {
    throw new Error("stream dropped mid-way");
  });
  const control = createFakeControl();
  const result = await startEval(sayHello, { agent, control }).result;
  assert.equal(control.backoffs.length, 0);
  assert.equal(result.turnCount, 1);
  assert.deepEqual(untraced(result.error), {
    code: "agent-send-failed",
    phase: "agent.send",
    message: "stream dropped mid-way",
    scope: "attempt",
  });
});

Deno.test("the agent's classifySendFailure makes a failure retryable", async () => {
  let tries = 0;
  const agent = defineAgent({
    name: "classifying",
    evidenceCoverage: completeEvidenceCoverage,
    send() {
      if (tries++ === 0) return Promise.reject(new Error("ECONNREFUSED"));
      return Promise.resolve({
        status: "completed",
        events: [{ type: "message", role: "assistant", text: "Hello" }],
      });
    },
    classifySendFailure: (error) =>
      String(error).includes("ECONNREFUSED") ? { reason: "network", retryAfterMs: 250 } : undefined,
  });
  const control = createFakeControl();
  const result = await startEval(sayHello, { agent, control }).result;
  assert.equal(result.verdict, "passed");
  assert.deepEqual(control.backoffs.map((b) => b.request), [
    { reason: "network", retry: 1, retryAfterMs: 250 },
  ]);
});

Deno.test("classifyFailure with retryable: true retries an agent.send failure, consulted once per failure", async () => {
  const infos: FailureInfo[] = [];
  let tries = 0;
  const agent = tryingAgent(() => {
    if (tries++ < 2) throw new Error("HTTP 503 before any byte");
  });
  const control = createFakeControl();
  const result = await startEval(sayHello, {
    agent,
    control,
    experiment: {
      classifyFailure: (info) => {
        infos.push(info);
        return { reason: "upstream-503", retryable: true };
      },
    },
  }).result;
  assert.equal(result.verdict, "passed");
  assert.equal(infos.length, 2);
  assert.deepEqual(
    { ...infos[0], error: undefined },
    {
      phase: "agent.send",
      code: "agent-send-failed",
      message: "HTTP 503 before any byte",
      error: undefined,
      experimentId: "local",
      evalId: "greet/hello",
      ordinal: 0,
    },
  );
  assert.deepEqual(control.backoffs.map((b) => b.request), [
    { reason: "upstream-503", retry: 1, retryAfterMs: 0 },
    { reason: "upstream-503", retry: 2, retryAfterMs: 0 },
  ]);
});

Deno.test("classifyFailure with scope: eval sets the error scope of a terminal send failure", async () => {
  let calls = 0;
  const agent = tryingAgent(() => {
    throw new Error("bad input");
  });
  const result = await runEval(sayHello, {
    agent,
    experiment: {
      classifyFailure: () => {
        calls++;
        return { reason: "bad-input", scope: "eval" };
      },
    },
  });
  assert.equal(calls, 1);
  assert.equal(result.error?.code, "agent-send-failed");
  assert.equal(result.error?.scope, "eval");
});

Deno.test("classifyFailure classifies a test-threw failure; retryable is ignored outside agent.send", async () => {
  const phases: string[] = [];
  const result = await runEval(
    defineEval({
      test() {
        throw new Error("fixture missing");
      },
    }),
    {
      experiment: {
        classifyFailure: (info) => {
          phases.push(info.phase);
          return { reason: "fixture", retryable: true, scope: "experiment" };
        },
      },
    },
  );
  assert.deepEqual(phases, ["test"]);
  assert.equal(result.error?.code, "test-threw");
  assert.equal(result.error?.scope, "experiment");
});

Deno.test("a throwing classifyFailure is ignored with classify-failure-threw", async () => {
  const result = await runEval(
    defineEval({
      test() {
        throw new Error("boom");
      },
    }),
    {
      experiment: {
        classifyFailure: () => {
          throw new Error("classifier bug");
        },
      },
    },
  );
  assert.equal(result.error?.scope, "attempt");
  assert.deepEqual(diagnosticCodes(result), ["classify-failure-threw"]);
});

Deno.test("an exhausted SendRejectedError is not passed to classifyFailure", async () => {
  let calls = 0;
  const agent = scriptedAgent({
    script: [{
      when: "Say hello",
      reply: { text: "Hello", reject: { reason: "network", times: 4 } },
    }],
  });
  const result = await runEval(sayHello, {
    agent,
    experiment: {
      classifyFailure: () => {
        calls++;
        return { reason: "x", scope: "experiment" };
      },
    },
  });
  assert.equal(calls, 0);
  assert.equal(result.error?.scope, "attempt");
});

Deno.test("EvalFatalError thrown by the test errors the Attempt with eval-fatal and scope eval", async () => {
  const result = await runEval(defineEval({
    test() {
      throw new EvalFatalError("dataset broken");
    },
  }));
  assert.deepEqual(untraced(result.error), {
    code: "eval-fatal",
    phase: "test",
    message: "dataset broken",
    scope: "eval",
  });
});

Deno.test("ExperimentFatalError thrown by the agent's send is experiment-fatal and never retried", async () => {
  const control = createFakeControl();
  const agent = tryingAgent(() => {
    throw new ExperimentFatalError("credentials revoked");
  });
  const result = await startEval(sayHello, {
    agent,
    control,
    experiment: { classifyFailure: () => ({ reason: "retry-all", retryable: true }) },
  }).result;
  assert.equal(control.backoffs.length, 0);
  assert.deepEqual(untraced(result.error), {
    code: "experiment-fatal",
    phase: "agent.send",
    message: "credentials revoked",
    scope: "experiment",
  });
});

Deno.test("EvalFatalError thrown by the agent's setup is eval-fatal in phase agent.setup", async () => {
  let ran = false;
  const agent = defineAgent({
    name: "setup-fatal",
    evidenceCoverage: completeEvidenceCoverage,
    send: () => Promise.resolve({ status: "completed", events: [] }),
    setup: () => Promise.reject(new EvalFatalError("no fixture")),
  });
  const result = await runEval(
    defineEval({
      test() {
        ran = true;
      },
    }),
    { agent },
  );
  assert.equal(ran, false);
  assert.deepEqual(untraced(result.error), {
    code: "eval-fatal",
    phase: "agent.setup",
    message: "no fixture",
    scope: "eval",
  });
});

Deno.test("an invalid turn errors the Attempt with agent-invalid-turn and the path, even if caught", async () => {
  const agent = defineAgent({
    name: "invalid",
    evidenceCoverage: completeEvidenceCoverage,
    send: () =>
      Promise.resolve({
        status: "completed",
        events: [
          { type: "message", role: "assistant", text: "fine" },
          {
            type: "operation.started",
            operationId: "",
            operation: { kind: "tool", name: "x", input: {} },
          },
        ],
      }),
  });
  let caught: unknown;
  const result = await runEval(
    defineEval({
      async test(t) {
        await t.send("hi").catch((error) => caught = error);
        t.check("x", includes("x"));
      },
    }),
    { agent },
  );
  assert.equal((caught as { code?: string }).code, "agent-invalid-turn");
  assert.equal(result.verdict, "errored");
  assert.equal(result.error?.code, "agent-invalid-turn");
  assert.equal(result.error?.phase, "agent.send");
  assert.match(result.error?.message ?? "", /events\[1\]\.operationId/);
  assert.equal(result.details.turns.length, 0);
});

Deno.test("a caught terminal send failure still errors the Attempt", async () => {
  const agent = scriptedAgent({ script: [{ when: "hi", reply: { throw: "connection lost" } }] });
  const result = await runEval(
    defineEval({
      async test(t) {
        try {
          await t.send("hi");
        } catch {
          // the test carries on
        }
        t.check("x", includes("x"));
      },
    }),
    { agent },
  );
  assert.equal(result.verdict, "errored");
  assert.equal(result.error?.code, "agent-send-failed");
  assert.equal(result.error?.message, "connection lost");
});

Deno.test("S120 a backoff cut by the deadline settles timeout", async () => {
  const agent = scriptedAgent({
    script: [{
      when: "Say hello",
      reply: { text: "Hello", reject: { reason: "rate_limit", times: 1 } },
    }],
  });
  const control = createFakeControl({ backoff: "manual" });
  const started = startEval(sayHello, { agent, control, timeoutMs: 3000 });
  await control.waitForBackoffs(1);
  control.abort("timeout");
  const result = await started.result;
  assert.equal(control.backoffs[0]?.state, "rejected");
  assert.equal(result.verdict, "errored");
  assert.equal(result.error?.code, "timeout");
  assert.equal(result.turnCount, 1);
});

Deno.test("a send left in backoff when the body settles does not retry and is outwaited", async () => {
  const agent = scriptedAgent({
    script: [{ when: "late", reply: { text: "late", reject: { reason: "rate_limit", times: 1 } } }],
  });
  const control = createFakeControl({ backoff: "manual" });
  let settled = false;
  const started = startEval(
    defineEval({
      test(t) {
        void t.send("late");
        t.check("x", includes("x"));
      },
    }),
    { agent, control },
  );
  started.result.then(() => settled = true);
  await control.waitForBackoffs(1);
  for (let i = 0; i < 20; i++) await Promise.resolve();
  assert.equal(settled, false);
  control.backoffs[0]!.release();
  const result = await started.result;
  assert.equal(result.verdict, "passed");
  assert.equal(result.error, null);
  assert.equal(result.turnCount, 1);
});

Deno.test("backoffs of concurrent sessions are requested one at a time", async () => {
  const agent = scriptedAgent({
    script: [{ when: /.*/, reply: { text: "ok", reject: { reason: "rate_limit", times: 1 } } }],
  });
  const control = createFakeControl({ backoff: "manual" });
  const started = startEval(
    defineEval({
      async test(t) {
        const a = t.send("a");
        const b = t.newSession().send("b");
        await Promise.all([a, b]);
        t.check(t.reply, includes("ok"));
      },
    }),
    { agent, control },
  );
  await control.waitForBackoffs(1);
  for (let i = 0; i < 20; i++) await Promise.resolve();
  assert.equal(control.backoffs.length, 1);
  control.backoffs[0]!.release();
  await control.waitForBackoffs(2);
  control.backoffs[1]!.release();
  const result = await started.result;
  assert.equal(result.verdict, "passed");
  assert.deepEqual(control.backoffs.map((b) => [b.request.retry, b.state]), [
    [1, "resolved"],
    [1, "resolved"],
  ]);
  assert.deepEqual(result.retries, [{ phase: "agent.send", reason: "rate_limit", count: 2 }]);
});
