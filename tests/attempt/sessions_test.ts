import assert from "node:assert/strict";
import { defineEval } from "niceeval";
import {
  type AgentContext,
  completeEvidenceCoverage,
  createSessionSlot,
  defineAgent,
  scriptedAgent,
  type Turn,
  type TurnInput,
} from "niceeval/adapter";
import { eventMatch, includes, toolMatch } from "niceeval/expect";
import { runEval } from "./_run.ts";

/** An agent that answers `reply <input>`; inputs starting with "slow" wait for `release()`. */
function gatedAgent() {
  const seen: { input: string; count: number | undefined; sendTry: number }[] = [];
  const releases: (() => void)[] = [];
  const counter = createSessionSlot<number>("count");
  let lines = 0;
  const agent = defineAgent({
    name: "gated",
    evidenceCoverage: completeEvidenceCoverage,
    async send(input: TurnInput, ctx: AgentContext): Promise<Turn> {
      const count = ctx.session.get(counter);
      seen.push({ input: input.text, count, sendTry: ctx.sendTry });
      ctx.session.set(counter, (count ?? 0) + 1);
      if (ctx.session.id === undefined) ctx.session.capture(`line-${++lines}`);
      if (input.text.startsWith("slow")) await new Promise<void>((r) => releases.push(r));
      return {
        status: "completed",
        events: [{ type: "message", role: "assistant", text: `reply ${input.text}` }],
      };
    },
  });
  return { agent, seen, release: () => releases.shift()?.() };
}

Deno.test("t.newSession() lines have their own ctx.session, sessionId, reply and events", async () => {
  const { agent, seen } = gatedAgent();
  const observed: Record<string, unknown> = {};
  const result = await runEval(
    defineEval({
      async test(t) {
        observed.before = { id: t.sessionId, reply: t.reply, events: t.events.length };
        await t.send("one");
        await t.send("two");
        const other = t.newSession();
        observed.otherBefore = { id: other.sessionId, reply: other.reply };
        await other.send("three");
        observed.main = { id: t.sessionId, reply: t.reply, events: t.events.length };
        observed.other = { id: other.sessionId, reply: other.reply, events: other.events };
        t.check(t.reply, includes("two"));
      },
    }),
    { agent },
  );
  assert.equal(result.verdict, "passed");
  assert.deepEqual(seen.map((s) => [s.input, s.count]), [
    ["one", undefined],
    ["two", 1],
    ["three", undefined],
  ]);
  assert.deepEqual(observed.before, { id: undefined, reply: "", events: 0 });
  assert.deepEqual(observed.otherBefore, { id: undefined, reply: "" });
  assert.deepEqual(observed.main, { id: "line-1", reply: "reply two", events: 4 });
  assert.deepEqual(observed.other, {
    id: "line-2",
    reply: "reply three",
    events: [
      { type: "message", role: "user", text: "three" },
      { type: "message", role: "assistant", text: "reply three" },
    ],
  });
  assert.deepEqual(
    result.details.turns.map((turn) => [turn.session, turn.index, turn.sessionId, turn.input]),
    [[0, 1, "line-1", "one"], [0, 2, "line-1", "two"], [1, 1, "line-2", "three"]],
  );
});

Deno.test("t.* scoped assertions see every completed turn of every session but not a send in flight", async () => {
  const { agent, release } = gatedAgent();
  const said = (text: string) => eventMatch("message", { role: "assistant", text });
  const result = await runEval(
    defineEval({
      async test(t) {
        const side = t.newSession();
        const slow = side.send("slow side");
        await t.send("fast main");
        t.event(said("reply fast main")).label("main seen");
        t.event(said("reply slow side")).label("in flight unseen");
        side.succeeded().label("side has no turn yet");
        release();
        await slow;
        t.event(said("reply slow side")).label("side seen later");
        side.event(said("reply fast main")).label("side excludes main");
        t.succeeded().label("all completed");
      },
    }),
    { agent },
  );
  const results = Object.fromEntries(result.details.assertions.map((a) => [a.label, a.result]));
  assert.deepEqual(results, {
    "main seen": "matched",
    "in flight unseen": "mismatched",
    "side has no turn yet": "mismatched",
    "side seen later": "matched",
    "side excludes main": "mismatched",
    "all completed": "matched",
  });
});

Deno.test("a turn handle's assertions see that turn only", async () => {
  const result = await runEval(defineEval({
    async test(t) {
      const first = await t.send("Say hello");
      await t.send("Something else");
      first.event(eventMatch("message", { text: "I do not know" })).label("other turn");
      t.event(eventMatch("message", { text: "I do not know" })).label("attempt");
    },
  }));
  assert.deepEqual(result.details.assertions.map((a) => a.result), ["mismatched", "matched"]);
});

Deno.test("a second concurrent send on one session throws session-busy; other sessions may send", async () => {
  const { agent, release } = gatedAgent();
  let busy: unknown;
  const result = await runEval(
    defineEval({
      async test(t) {
        const first = t.send("slow one");
        const parallel = t.newSession().send("other line");
        await t.send("again").catch((error) => busy = error);
        await parallel;
        release();
        await first;
        t.check(t.reply, includes("slow one"));
      },
    }),
    { agent },
  );
  assert.equal((busy as { code?: string }).code, "session-busy");
  assert.equal((busy as Error).name, "AssertionAuthoringError");
  assert.equal(result.verdict, "errored");
  assert.equal(result.error?.code, "assertion-authoring-error");
  assert.equal(result.details.turns.length, 2);
});

Deno.test("t.usage and session.usage keep a field only if every turn in scope reported it", async () => {
  const agent = scriptedAgent({
    script: [
      { when: "a", reply: { text: "A", usage: { inputTokens: 10, outputTokens: 4, costUSD: 1 } } },
      { when: "b", reply: { text: "B", usage: { inputTokens: 3, requests: 1 } } },
      { when: "c", reply: { text: "C" } },
    ],
  });
  const seen: Record<string, unknown> = {};
  const result = await runEval(
    defineEval({
      async test(t) {
        seen.empty = t.usage;
        const turn = await t.send("a");
        seen.afterA = t.usage;
        seen.turnA = turn.usage;
        await t.send("b");
        seen.afterB = t.usage;
        const side = t.newSession();
        const c = await side.send("c");
        seen.turnC = "usage" in c;
        seen.side = side.usage;
        seen.all = t.usage;
        t.check(1, includes("1"));
      },
    }),
    { agent },
  );
  assert.deepEqual(seen, {
    empty: {},
    afterA: { inputTokens: 10, outputTokens: 4, costUSD: 1 },
    turnA: { inputTokens: 10, outputTokens: 4, costUSD: 1 },
    afterB: { inputTokens: 13 },
    turnC: false,
    side: {},
    all: {},
  });
  assert.equal(result.usage, null);
});

Deno.test("the cost estimate uses the price table and ignores usage.costUSD", async () => {
  const agent = scriptedAgent({
    script: [{
      when: "go",
      reply: {
        text: "ok",
        usage: {
          inputTokens: 1_000_000,
          outputTokens: 500_000,
          cacheReadTokens: 200_000,
          costUSD: 99,
        },
      },
    }],
  });
  const result = await runEval(
    defineEval({
      async test(t) {
        await t.send("go");
        t.maxCost(3.5).label("under 3.5");
        t.maxCost(3).label("under 3");
      },
    }),
    {
      agent,
      experiment: { model: "acme/large" },
      pricing: {
        "acme/*": { inputPerMTok: 2, outputPerMTok: 4, cacheReadPerMTok: 0.5 },
        "acme/small": { inputPerMTok: 100, outputPerMTok: 100 },
      },
    },
  );
  // (800k × 2 + 200k × 0.5 + 500k × 4) / 1e6 = 3.7
  assert.ok(Math.abs((result.estimatedCostUSD ?? 0) - 3.7) < 1e-9);
  assert.deepEqual(result.details.assertions.map((a) => a.result), ["mismatched", "mismatched"]);
  assert.equal(result.usage?.costUSD, 99);
});

Deno.test("the cost estimate is null without a price for the model", async () => {
  const result = await runEval(
    defineEval({
      async test(t) {
        await t.send("Say hello");
        t.check(1, includes("1"));
      },
    }),
    {
      experiment: { model: "unpriced" },
      pricing: { other: { inputPerMTok: 1, outputPerMTok: 1 } },
    },
  );
  assert.equal(result.estimatedCostUSD, null);
  assert.deepEqual(result.usage, { inputTokens: 10, outputTokens: 5 });
});

Deno.test("sessions and turns have toolOrder and eventOrder; t has neither", async () => {
  const agent = scriptedAgent({
    script: [{
      when: "go",
      reply: { tools: [{ name: "search" }, { name: "open" }], text: "done" },
    }],
  });
  const has: Record<string, boolean> = {};
  const result = await runEval(
    defineEval({
      async test(t) {
        const side = t.newSession();
        const turn = await side.send("go");
        has.t = "toolOrder" in t || "eventOrder" in t;
        has.session = typeof side.toolOrder === "function" && typeof side.eventOrder === "function";
        turn.toolOrder([toolMatch("search"), toolMatch("open")]);
        side.toolOrder([toolMatch("open"), toolMatch("search")]);
      },
    }),
    { agent },
  );
  assert.deepEqual(has, { t: false, session: true });
  assert.deepEqual(result.details.assertions.map((a) => a.result), ["matched", "mismatched"]);
});
