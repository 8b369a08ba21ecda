import assert from "node:assert/strict";
import { defineEval, defineScoreEval } from "niceeval";
import {
  type AgentDefinition,
  completeEvidenceCoverage,
  createSessionSlot,
  defineAgent,
} from "niceeval/adapter";
import { defineValueMatch, includes } from "niceeval/expect";
import { abandonedResult } from "../../src/attempt/mod.ts";
import { createFakeControl } from "../_fakes/control.ts";
import { createFakeClock } from "../_fakes/clock.ts";
import { planFor } from "../_fakes/control.ts";
import { defineExperiment } from "../../src/discovery/mod.ts";
import { diagnosticCodes, runEval, startEval, untraced } from "./_run.ts";

/** An agent answering "Hello" plus the given hooks. */
function agentWith(hooks: Partial<AgentDefinition>) {
  return defineAgent({
    name: "hooked",
    evidenceCoverage: completeEvidenceCoverage,
    send: () =>
      Promise.resolve({
        status: "completed",
        events: [{ type: "message", role: "assistant", text: "Hello" }],
      }),
    ...hooks,
  });
}

/** Lets pending promise callbacks run until `done()` or a bound of turns. */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !done(); i++) await new Promise<void>((r) => queueMicrotask(r));
  assert.ok(done(), "condition not reached");
}

const passing = defineEval({
  async test(t) {
    await t.send("hi");
    t.check(t.reply, includes("Hello"));
  },
});

Deno.test("agent setup and teardown get the main session's context around the body", async () => {
  const slot = createSessionSlot<string>("from-setup");
  const order: string[] = [];
  const agent = agentWith({
    setup: (ctx) => {
      order.push(`setup try=${ctx.sendTry}`);
      ctx.session.set(slot, "prepared");
      return Promise.resolve();
    },
    send: (_input, ctx) => {
      order.push(`send sees ${ctx.session.get(slot)}`);
      return Promise.resolve({
        status: "completed",
        events: [{ type: "message", role: "assistant", text: "Hello" }],
      });
    },
    teardown: (ctx) => {
      order.push(`teardown sees ${ctx.session.get(slot)} aborted=${ctx.signal.aborted}`);
      return Promise.resolve();
    },
  });
  const control = createFakeControl();
  const result = await startEval(passing, { agent, control }).result;
  assert.equal(result.verdict, "passed");
  assert.deepEqual(order, [
    "setup try=0",
    "send sees prepared",
    "teardown sees prepared aborted=false",
  ]);
  assert.deepEqual(result.details.phases.map((p) => p.phase), [
    "agent.setup",
    "test",
    "assertions",
    "agent.teardown",
  ]);
  assert.deepEqual(control.activities, [
    "agent setup",
    "running eval",
    "evaluating assertions",
    "cleaning up",
  ]);
});

Deno.test("an agent setup failure is agent-setup-failed, the body never runs, teardown still runs", async () => {
  let bodyRan = false;
  let tornDown = false;
  const agent = agentWith({
    setup: () => Promise.reject(new Error("cannot log in")),
    teardown: () => {
      tornDown = true;
      return Promise.resolve();
    },
  });
  const result = await runEval(
    defineEval({
      test() {
        bodyRan = true;
      },
    }),
    { agent },
  );
  assert.equal(bodyRan, false);
  assert.equal(tornDown, true);
  assert.deepEqual(untraced(result.error), {
    code: "agent-setup-failed",
    phase: "agent.setup",
    message: "cannot log in",
    scope: "attempt",
  });
  assert.deepEqual(diagnosticCodes(result), []);
});

Deno.test("an agent without setup still gets its teardown", async () => {
  let tornDown = false;
  const agent = agentWith({
    teardown: () => {
      tornDown = true;
      return Promise.resolve();
    },
  });
  await runEval(passing, { agent });
  assert.equal(tornDown, true);
});

Deno.test("an agent teardown failure is the diagnostic agent-teardown-failed; the verdict stays", async () => {
  const agent = agentWith({ teardown: () => Promise.reject(new Error("socket busy")) });
  const result = await runEval(passing, { agent });
  assert.equal(result.verdict, "passed");
  assert.equal(result.error, null);
  assert.deepEqual(diagnosticCodes(result), ["agent-teardown-failed"]);
  assert.match(result.details.diagnostics[0]?.message ?? "", /socket busy/);
  // The data every cleanup failure carries (sandboxes.md rule 39); a direct agent has no sandbox.
  assert.deepEqual(result.details.diagnostics[0]?.data, {
    phase: "agent.teardown",
    timedOut: false,
    message: "socket busy",
    sandboxId: null,
  });
});

Deno.test("agent teardown is bounded by 30 s and its signal aborts at the bound", async () => {
  const clock = createFakeClock();
  let teardownSignal: AbortSignal | undefined;
  const agent = agentWith({
    teardown: (ctx) => {
      teardownSignal = ctx.signal;
      return new Promise<void>(() => {});
    },
  });
  const started = startEval(passing, { agent, clock });
  let done = false;
  started.result.then(() => done = true);
  await until(() => teardownSignal !== undefined);
  await clock.tickAsync(29_999);
  assert.equal(done, false);
  assert.equal(teardownSignal?.aborted, false);
  await clock.tickAsync(1);
  const result = await started.result;
  assert.equal(teardownSignal?.aborted, true);
  assert.equal(result.verdict, "passed");
  assert.deepEqual(diagnosticCodes(result), ["agent-teardown-failed"]);
  assert.match(result.details.diagnostics[0]?.message ?? "", /30s/);
  assert.equal((result.details.diagnostics[0]?.data as { timedOut?: boolean }).timedOut, true);
  assert.equal(clock.countTimers(), 0);
});

Deno.test("a timeout errors the Attempt with timeout even if the body returns normally afterwards", async () => {
  const control = createFakeControl();
  let reached = false;
  const started = startEval(
    defineEval({
      async test(t) {
        await t.send("hi");
        reached = true;
        await new Promise((resolve) => t.signal.addEventListener("abort", resolve, { once: true }));
        t.check(t.reply, includes("Hello"));
      },
    }),
    { agent: agentWith({}), control, timeoutMs: 5000 },
  );
  await until(() => reached);
  control.abort("timeout");
  const result = await started.result;
  assert.equal(result.verdict, "errored");
  assert.equal(result.outcome, "errored");
  assert.deepEqual(result.error, {
    code: "timeout",
    phase: "test",
    message: "The Attempt exceeded its 5000 ms deadline",
    scope: "attempt",
    location: null,
    stack: null,
  });
  assert.equal(result.details.assertions.length, 1);
});

Deno.test("a deadline replaces a failure recorded before it with timeout (TIME-3)", async () => {
  const control = createFakeControl();
  let reached = false;
  const agent = agentWith({ send: () => Promise.reject(new Error("connection lost")) });
  const started = startEval(
    defineEval({
      async test(t) {
        await t.send("hi").catch(() => undefined);
        reached = true;
        await new Promise((resolve) => t.signal.addEventListener("abort", resolve, { once: true }));
      },
    }),
    { agent, control, timeoutMs: 5000 },
  );
  await until(() => reached);
  control.abort("timeout");
  const result = await started.result;
  assert.equal(result.error?.code, "timeout");
});

Deno.test("a timeout during agent setup skips the body and settles timeout", async () => {
  const control = createFakeControl();
  let bodyRan = false;
  let inSetup = false;
  const agent = agentWith({
    setup: (ctx) =>
      new Promise((_resolve, reject) => {
        inSetup = true;
        ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason), { once: true });
      }),
  });
  const started = startEval(
    defineEval({
      test() {
        bodyRan = true;
      },
    }),
    { agent, control, timeoutMs: 100 },
  );
  await until(() => inSetup);
  control.abort("timeout");
  const result = await started.result;
  assert.equal(bodyRan, false);
  assert.equal(result.error?.code, "timeout");
});

Deno.test("pending asynchronous assertions are awaited only until the deadline", async () => {
  const control = createFakeControl();
  let evaluating = false;
  const never = defineValueMatch<string>({
    name: "never-settles",
    evaluate: () => {
      evaluating = true;
      return new Promise<boolean>(() => {});
    },
  });
  const started = startEval(
    defineEval({
      test(t) {
        t.check("x", never);
      },
    }),
    { control, timeoutMs: 1000 },
  );
  await until(() => evaluating);
  for (let i = 0; i < 20; i++) await Promise.resolve();
  control.abort("timeout");
  const result = await started.result;
  assert.equal(result.error?.code, "timeout");
  assert.equal(result.details.assertions[0]?.status, "errored");
});

Deno.test("an interrupt settles the Attempt interrupted", async () => {
  const control = createFakeControl();
  let reached = false;
  const started = startEval(
    defineEval({
      async test(t) {
        reached = true;
        await new Promise((resolve) => t.signal.addEventListener("abort", resolve, { once: true }));
        throw new Error("cut");
      },
    }),
    { control },
  );
  await until(() => reached);
  control.abort("interrupt");
  const result = await started.result;
  assert.equal(result.verdict, "interrupted");
  assert.equal(result.outcome, "interrupted");
  assert.equal(result.error, null);
});

Deno.test("EARLY-4 an early-exit sibling that does not pass is skipped (early-exit, cancelled)", async () => {
  const control = createFakeControl();
  let reached = false;
  const started = startEval(
    defineEval({
      async test(t) {
        t.check("rain", includes("sun"));
        reached = true;
        await new Promise((resolve) => t.signal.addEventListener("abort", resolve, { once: true }));
      },
    }),
    { control },
  );
  await until(() => reached);
  control.abort("early-exit");
  const result = await started.result;
  assert.equal(result.verdict, "skipped");
  assert.equal(result.outcome, "cancelled");
  assert.equal(result.skipReason, "early-exit");
  assert.equal(result.error, null);
});

Deno.test("EARLY-4 an early-exit sibling cut short by the abort is skipped, not passed", async () => {
  const control = createFakeControl();
  let sending = false;
  const agent = agentWith({
    send: (_input, ctx) =>
      new Promise((_resolve, reject) => {
        sending = true;
        ctx.signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
      }),
  });
  const started = startEval(passing, { agent, control });
  await until(() => sending);
  control.abort("early-exit");
  const result = await started.result;
  assert.equal(result.verdict, "skipped");
  assert.equal(result.skipReason, "early-exit");
  assert.deepEqual(diagnosticCodes(result), []);
});

Deno.test("EARLY-4 an early-exit sibling that settles passed is kept", async () => {
  const control = createFakeControl();
  let reached = false;
  const started = startEval(
    defineEval({
      async test(t) {
        t.check("sun", includes("sun"));
        reached = true;
        await new Promise((resolve) => t.signal.addEventListener("abort", resolve, { once: true }));
      },
    }),
    { control },
  );
  await until(() => reached);
  control.abort("early-exit");
  const result = await started.result;
  assert.equal(result.verdict, "passed");
  assert.equal(result.outcome, "completed");
  assert.equal(result.skipReason, null);
});

Deno.test("a sealed result is frozen and does not change when a late turn arrives", async () => {
  let answer!: () => void;
  const agent = agentWith({
    send: () =>
      new Promise((resolve) => {
        answer = () => resolve({ status: "completed", events: [] });
      }),
  });
  const result = await runEval(
    defineEval({
      test(t) {
        void t.send("ignored signal");
        t.check("x", includes("x"));
      },
    }),
    { agent },
  );
  answer();
  for (let i = 0; i < 10; i++) await Promise.resolve();
  assert.equal(result.details.turns.length, 0);
  assert.ok(Object.isFrozen(result));
  assert.ok(Object.isFrozen(result.details.turns));
  assert.ok(Object.isFrozen(result.details.diagnostics));
});

Deno.test("abandonedResult() settles a timeout errored, an interrupt interrupted, an early exit skipped", () => {
  const experiment = defineExperiment({ agent: agentWith({}) });
  const { slot } = planFor(experiment, passing, { timeoutMs: 1000 });
  const info = { attemptId: "a", startedAt: 0, endedAt: 11_000 };
  const timeout = abandonedResult(slot, { ...info, kind: "timeout" });
  assert.equal(timeout.verdict, "errored");
  assert.equal(timeout.error?.code, "timeout");
  assert.equal(timeout.timedMs, 11_000);
  const interrupt = abandonedResult(slot, { ...info, kind: "interrupt" });
  assert.equal(interrupt.verdict, "interrupted");
  assert.equal(interrupt.error, null);
  const early = abandonedResult(slot, { ...info, kind: "early-exit" });
  assert.deepEqual([early.verdict, early.outcome, early.skipReason], [
    "skipped",
    "cancelled",
    "early-exit",
  ]);
  const score = planFor(experiment, defineScoreEval({ test() {} }), { timeoutMs: 1 }).slot;
  assert.deepEqual(abandonedResult(score, { ...info, kind: "timeout" }).scoreResult, {
    state: "unavailable",
    reasons: ["execution-errored"],
  });
});

Deno.test("an Attempt interrupted before it starts runs no body and settles interrupted", async () => {
  const control = createFakeControl();
  control.abort("interrupt");
  let bodyRan = false;
  const result = await startEval(
    defineEval({
      test() {
        bodyRan = true;
      },
    }),
    { control },
  ).result;
  assert.equal(bodyRan, false);
  assert.equal(result.verdict, "interrupted");
});

Deno.test("code still running after the body settled registers no assertion and no skip", async () => {
  let release!: () => void;
  const gate = new Promise<boolean>((resolve) => release = () => resolve(true));
  const slow = defineValueMatch<string>({ name: "gated", evaluate: () => gate });
  const result = await runEval(defineEval({
    test(t) {
      t.check("x", slow);
      void (async () => {
        for (let i = 0; i < 10; i++) await Promise.resolve();
        t.check("late", includes("late"));
        try {
          t.skip("too late");
        } catch { /* caught */ }
        release();
      })();
    },
  }));
  assert.equal(result.verdict, "passed");
  assert.equal(result.skipReason, null);
  assert.equal(result.details.assertions.length, 1);
  assert.deepEqual(diagnosticCodes(result), ["assertion-after-settle"]);
});
