import assert from "node:assert/strict";
import { DefinitionError, hasErrorName } from "../../src/_shared/errors.ts";
import {
  type AgentSession,
  completeEvidenceCoverage,
  createAgentSession,
  resolveAgent,
  type ResolvedAgent,
  scriptedAgent,
  type ScriptedAgentOptions,
  SendRejectedError,
  type Turn,
  validateTurn,
} from "../../src/agents/mod.ts";
import { createTestContext, type TestContextOptions } from "./_context.ts";

function agentOf(opts: ScriptedAgentOptions): ResolvedAgent {
  return resolveAgent(scriptedAgent(opts))!;
}

function send(
  agent: ResolvedAgent,
  text: string,
  options: TestContextOptions = {},
): Promise<Turn> {
  return agent.send({ text }, createTestContext(options));
}

async function texts(agent: ResolvedAgent, session: AgentSession, inputs: string[]) {
  const out: string[] = [];
  for (const text of inputs) {
    const turn = await send(agent, text, { session });
    const message = turn.events.find((e) => e.type === "message");
    out.push(message?.type === "message" ? message.text : "");
  }
  return out;
}

function definitionError(fn: () => unknown): DefinitionError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof DefinitionError, `expected DefinitionError, got ${error}`);
    return error;
  }
  assert.fail("expected a DefinitionError");
}

const WEATHER: ScriptedAgentOptions = {
  script: [
    {
      when: /weather/i,
      reply: {
        tools: [{ name: "get_weather", input: { city: "Brooklyn" }, output: { sky: "sunny" } }],
        text: "It is sunny in Brooklyn.",
        usage: { inputTokens: 12, outputTokens: 9 },
      },
    },
    { when: "Say hello", reply: { text: "Hello, niceeval!" } },
  ],
};

Deno.test("scriptedAgent() defines a direct agent named scripted with complete coverage", () => {
  const agent = agentOf(WEATHER);
  assert.equal(agent.name, "scripted");
  assert.equal(agent.kind, "direct");
  assert.deepEqual(agent.evidenceCoverage, completeEvidenceCoverage);
  assert.ok(Object.isFrozen(agent));
});

Deno.test("scriptedAgent() answers the quickstart weather prompt", async () => {
  const turn = await send(agentOf(WEATHER), "What is the weather in Brooklyn?");
  assert.deepEqual(turn, {
    status: "completed",
    events: [
      {
        type: "operation.started",
        operationId: "call-1-1",
        operation: { kind: "tool", name: "get_weather", input: { city: "Brooklyn" } },
      },
      {
        type: "operation.finished",
        operationId: "call-1-1",
        kind: "tool",
        status: "completed",
        output: { sky: "sunny" },
      },
      { type: "message", role: "assistant", text: "It is sunny in Brooklyn." },
    ],
    usage: { inputTokens: 12, outputTokens: 9 },
  });
});

Deno.test("scriptedAgent() produces the same turns for the same script and inputs", async () => {
  const inputs = ["Say hello", "weather?", "WEATHER"];
  const run = async () => {
    const agent = agentOf(WEATHER);
    const session = createAgentSession();
    const turns = [];
    for (const text of inputs) turns.push(await send(agent, text, { session }));
    return turns;
  };
  assert.deepEqual(await run(), await run());
});

Deno.test("scriptedAgent() matches a string when exactly", async () => {
  const agent = agentOf({
    script: [{ when: "hi", reply: { text: "exact" } }],
    fallback: { text: "no" },
  });
  const session = createAgentSession();
  assert.deepEqual(await texts(agent, session, ["hi", "hi ", "Hi", "oh hi"]), [
    "exact",
    "no",
    "no",
    "no",
  ]);
});

Deno.test("scriptedAgent() tests a global RegExp from the start every time", async () => {
  const agent = agentOf({
    script: [{ when: /a/g, reply: { text: "yes" } }],
    fallback: { text: "no" },
  });
  const session = createAgentSession();
  assert.deepEqual(await texts(agent, session, ["a", "a", "a", "b"]), ["yes", "yes", "yes", "no"]);
});

Deno.test("scriptedAgent() passes the input and context to a when function", async () => {
  const seen: unknown[] = [];
  const agent = agentOf({
    script: [{
      when: (input, ctx) => {
        seen.push([input.text, ctx.model]);
        return ctx.model === "m2";
      },
      reply: { text: "model two" },
    }],
    fallback: { text: "other" },
  });
  assert.equal((await send(agent, "x", { model: "m1" })).events.length, 1);
  const turn = await send(agent, "y", { model: "m2" });
  assert.deepEqual(turn.events, [{ type: "message", role: "assistant", text: "model two" }]);
  assert.deepEqual(seen, [["x", "m1"], ["y", "m2"]]);
});

Deno.test("scriptedAgent() rejects a when function that returns a non-boolean", async () => {
  const agent = agentOf({ script: [{ when: (() => "yes") as never, reply: { text: "x" } }] });
  await assert.rejects(send(agent, "x"), TypeError);
});

Deno.test("scriptedAgent() tries rules in order and the first match answers", async () => {
  const agent = agentOf({
    script: [{ when: /a/, reply: { text: "first" } }, { when: "abc", reply: { text: "second" } }],
  });
  assert.deepEqual(await texts(agent, createAgentSession(), ["abc"]), ["first"]);
});

Deno.test("scriptedAgent() answers the n-th match with element n and repeats the last", async () => {
  const agent = agentOf({
    script: [
      { when: /count/, reply: [{ text: "one" }, { text: "two" }, { text: "three" }] },
      { when: "other", reply: { text: "other" } },
    ],
  });
  const session = createAgentSession();
  assert.deepEqual(
    await texts(agent, session, ["count", "other", "count", "count", "count", "count"]),
    ["one", "other", "two", "three", "three", "three"],
  );
});

Deno.test("scriptedAgent() counts array matches per session line", async () => {
  const agent = agentOf({ script: [{ when: "go", reply: [{ text: "1" }, { text: "2" }] }] });
  const main = createAgentSession();
  const side = createAgentSession();
  assert.deepEqual(await texts(agent, main, ["go"]), ["1"]);
  assert.deepEqual(await texts(agent, side, ["go", "go"]), ["1", "2"]);
  assert.deepEqual(await texts(agent, main, ["go"]), ["2"]);
});

Deno.test("scriptedAgent() numbers operation ids by turn on the session line and tool", async () => {
  const agent = agentOf({
    script: [{ when: /.*/, reply: { tools: [{ name: "a" }, { name: "b" }] } }],
  });
  const main = createAgentSession();
  const ids = async (session: AgentSession) =>
    (await send(agent, "x", { session })).events.map((e) =>
      "operationId" in e ? e.operationId : ""
    );
  assert.deepEqual(await ids(main), ["call-1-1", "call-1-1", "call-1-2", "call-1-2"]);
  assert.deepEqual(await ids(main), ["call-2-1", "call-2-1", "call-2-2", "call-2-2"]);
  assert.deepEqual(await ids(createAgentSession()), [
    "call-1-1",
    "call-1-1",
    "call-1-2",
    "call-1-2",
  ]);
});

Deno.test("scriptedAgent() orders thinking, tools, message, then the error event", async () => {
  const agent = agentOf({
    script: [],
    fallback: {
      error: "boom",
      text: "answer",
      tools: [{ name: "t1", status: "failed", output: { e: 1 } }, {
        name: "t2",
        status: "rejected",
      }],
      thinking: "plan",
      status: "failed",
    },
  });
  const turn = await send(agent, "x");
  assert.equal(turn.status, "failed");
  assert.deepEqual(turn.events, [
    { type: "thinking", text: "plan" },
    {
      type: "operation.started",
      operationId: "call-1-1",
      operation: { kind: "tool", name: "t1", input: {} },
    },
    {
      type: "operation.finished",
      operationId: "call-1-1",
      kind: "tool",
      status: "failed",
      output: { e: 1 },
    },
    {
      type: "operation.started",
      operationId: "call-1-2",
      operation: { kind: "tool", name: "t2", input: {} },
    },
    { type: "operation.finished", operationId: "call-1-2", kind: "tool", status: "rejected" },
    { type: "message", role: "assistant", text: "answer" },
    { type: "error", message: "boom" },
  ]);
});

Deno.test("scriptedAgent() emits no finish for a pending tool", async () => {
  const agent = agentOf({ script: [], fallback: { tools: [{ name: "ask", status: "pending" }] } });
  const turn = await send(agent, "x");
  assert.deepEqual(turn.events, [
    {
      type: "operation.started",
      operationId: "call-1-1",
      operation: { kind: "tool", name: "ask", input: {} },
    },
  ]);
});

Deno.test("scriptedAgent() returns a failed turn with an error event (day-one example)", async () => {
  const agent = agentOf({
    script: [{
      when: "return a failed turn",
      reply: { status: "failed", error: "deterministic failure" },
    }],
  });
  assert.deepEqual(await send(agent, "return a failed turn"), {
    status: "failed",
    events: [{ type: "error", message: "deterministic failure" }],
  });
});

Deno.test("scriptedAgent() returns data and captures the session id", async () => {
  const agent = agentOf({
    script: [{ when: /.*/, reply: [{ sessionId: "s-1", data: { n: 1 } }, { sessionId: "s-2" }] }],
  });
  const session = createAgentSession();
  const first = await send(agent, "x", { session });
  assert.deepEqual(first.data, { n: 1 });
  assert.equal(session.id, "s-1");
  await send(agent, "x", { session });
  assert.equal(session.id, "s-1");
});

Deno.test("scriptedAgent() returns copies the caller may mutate", async () => {
  const agent = agentOf({ script: [], fallback: { data: { n: 1 }, usage: { requests: 1 } } });
  const turn = await send(agent, "x");
  (turn.data as { n: number }).n = 2;
  turn.usage!.requests = 5;
  assert.deepEqual((await send(agent, "x")).data, { n: 1 });
});

Deno.test("scriptedAgent() uses a reply function with the input and context", async () => {
  const agent = agentOf({
    script: [{
      when: /.*/,
      reply: (input, ctx) => Promise.resolve({ text: `${input.text} on ${ctx.evalId}` }),
    }],
  });
  assert.deepEqual((await send(agent, "ping")).events, [
    { type: "message", role: "assistant", text: "ping on greet/hello" },
  ]);
});

Deno.test("scriptedAgent() rejects an invalid reply from a reply function", async () => {
  const agent = agentOf({
    script: [{ when: /.*/, reply: () => ({ status: "waiting" }) as never }],
  });
  await assert.rejects(send(agent, "x"), (e: unknown) => {
    assert.ok(e instanceof TypeError);
    assert.match(e.message, /script\[0\]\.reply\.status/);
    return true;
  });
});

Deno.test("scriptedAgent() waits delayMs before answering", async () => {
  const agent = agentOf({ script: [], fallback: { delayMs: 5, text: "late" } });
  assert.equal((await send(agent, "x")).events.length, 1);
});

Deno.test("scriptedAgent() rejects with the signal's reason when aborted during delayMs", async () => {
  const agent = agentOf({ script: [], fallback: { delayMs: 5, text: "late", sessionId: "s" } });
  const controller = new AbortController();
  const session = createAgentSession();
  const reason = new Error("test-settled");
  const pending = send(agent, "x", { signal: controller.signal, session });
  controller.abort(reason);
  await assert.rejects(pending, (error) => error === reason);
  assert.equal(session.id, undefined);
});

Deno.test("scriptedAgent() rejects while sendTry is below times", async () => {
  const agent = agentOf({
    script: [],
    fallback: { reject: { reason: "rate_limit", times: 2, retryAfterMs: 300 }, text: "ok" },
  });
  for (const sendTry of [0, 1]) {
    await assert.rejects(send(agent, "x", { sendTry }), (error: unknown) => {
      assert.ok(error instanceof SendRejectedError);
      assert.equal(error.reason, "rate_limit");
      assert.equal(error.retryAfterMs, 300);
      return true;
    });
  }
  assert.equal((await send(agent, "x", { sendTry: 2 })).events.length, 1);
});

Deno.test("scriptedAgent() rejects once by default and leaves the session unchanged", async () => {
  const agent = agentOf({
    script: [{ when: "go", reply: [{ reject: { reason: "network" }, text: "a" }, { text: "b" }] }],
  });
  const session = createAgentSession();
  await assert.rejects(send(agent, "go", { session }), (error: unknown) => {
    assert.ok(hasErrorName(error, "SendRejectedError"));
    assert.equal("retryAfterMs" in (error as object), false);
    return true;
  });
  const retried = await send(agent, "go", { session, sendTry: 1 });
  assert.deepEqual(retried.events, [{ type: "message", role: "assistant", text: "a" }]);
  assert.deepEqual(await texts(agent, session, ["go"]), ["b"]);
});

Deno.test("scriptedAgent() does not count a rejected try as a turn", async () => {
  const agent = agentOf({
    script: [],
    fallback: { reject: { reason: "network" }, tools: [{ name: "t" }] },
  });
  const session = createAgentSession();
  await assert.rejects(send(agent, "x", { session }), SendRejectedError);
  const turn = await send(agent, "x", { session, sendTry: 1 });
  assert.equal(
    turn.events[0]?.type === "operation.started" && turn.events[0].operationId,
    "call-1-1",
  );
});

Deno.test("scriptedAgent() throws the scripted error message", async () => {
  const agent = agentOf({ script: [{ when: "crash", reply: { throw: "connection lost" } }] });
  await assert.rejects(send(agent, "crash"), (error: unknown) => {
    assert.ok(error instanceof Error);
    assert.equal(error.name, "Error");
    assert.equal(error.message, "connection lost");
    return true;
  });
});

Deno.test("scriptedAgent() answers unmatched inputs with the fallback", async () => {
  const agent = agentOf({ ...WEATHER, fallback: { text: "Hello, niceeval!" } });
  assert.deepEqual(await texts(agent, createAgentSession(), ["anything"]), ["Hello, niceeval!"]);
});

Deno.test("scriptedAgent() throws scripted-no-match without a fallback", async () => {
  await assert.rejects(send(agentOf(WEATHER), "unknown input"), (error: Error) => {
    assert.match(error.message, /no rule matches input "unknown input".*\[scripted-no-match\]$/);
    assert.equal((error as Error & { code?: unknown }).code, "scripted-no-match");
    return true;
  });
});

Deno.test("scriptedAgent() sets the declared coverage from a partial", () => {
  const agent = agentOf({
    script: [],
    evidenceCoverage: { usage: { status: "unavailable", reason: "scripted" } },
  });
  assert.deepEqual(agent.evidenceCoverage, {
    ...completeEvidenceCoverage,
    usage: { status: "unavailable", reason: "scripted" },
  });
});

Deno.test("scriptedAgent() writes the script into its identity", () => {
  const fn = (input: { text: string }) => input.text.length > 3;
  const reply = () => ({ text: "x" });
  const agent = agentOf({
    script: [
      { when: /weather/gi, reply: { text: "sunny" } },
      { when: fn, reply: [{ text: "a" }, { text: "b" }] },
      { when: "hi", reply },
    ],
    fallback: { text: "fallback" },
  });
  assert.deepEqual(agent.identity, {
    script: [
      { when: "/weather/gi", reply: { text: "sunny" } },
      { when: String(fn), reply: [{ text: "a" }, { text: "b" }] },
      { when: "hi", reply: String(reply) },
    ],
    fallback: { text: "fallback" },
  });
  assert.ok(Object.isFrozen(agent.identity));
});

Deno.test("scriptedAgent() changes identity when a reply text changes", () => {
  const a = agentOf({ script: [{ when: "x", reply: { text: "one" } }] });
  const b = agentOf({ script: [{ when: "x", reply: { text: "two" } }] });
  assert.notDeepEqual(a.identity, b.identity);
});

Deno.test("scriptedAgent() changes identity when a RegExp flag changes", () => {
  const a = agentOf({ script: [{ when: /x/, reply: { text: "one" } }] });
  const b = agentOf({ script: [{ when: /x/i, reply: { text: "one" } }] });
  assert.notDeepEqual(a.identity, b.identity);
});

Deno.test("scriptedAgent() validates its options", async (t) => {
  const cases: [string, unknown, string, string?][] = [
    ["missing script", {}, "script", "definition.missing-option"],
    ["unknown option", { script: [], fallbak: {} }, "fallbak", "definition.unknown-option"],
    ["bad name", { name: "-x", script: [] }, "name"],
    ["script not an array", { script: {} }, "script"],
    [
      "rule without reply",
      { script: [{ when: "x" }] },
      "script[0].reply",
      "definition.missing-option",
    ],
    ["bad when", { script: [{ when: 3, reply: {} }] }, "script[0].when"],
    ["empty reply array", { script: [{ when: "x", reply: [] }] }, "script[0].reply"],
    [
      "unknown reply key",
      { script: [{ when: "x", reply: { txt: "a" } }] },
      "script[0].reply.txt",
      "definition.unknown-option",
    ],
    ["bad reply status", { script: [], fallback: { status: "waiting" } }, "fallback.status"],
    [
      "tool without name",
      { script: [], fallback: { tools: [{}] } },
      "fallback.tools[0].name",
      "definition.missing-option",
    ],
    [
      "bad tool status",
      { script: [], fallback: { tools: [{ name: "t", status: "ok" }] } },
      "fallback.tools[0].status",
    ],
    ["non-JSON tool input", {
      script: [],
      fallback: { tools: [{ name: "t", input: { d: new Date(0) } }] },
    }, "fallback.tools[0].input.d"],
    ["non-JSON data", { script: [], fallback: { data: [undefined] } }, "fallback.data[0]"],
    [
      "bad usage",
      { script: [], fallback: { usage: { inputTokens: 1.5 } } },
      "fallback.usage.inputTokens",
    ],
    [
      "unknown usage key",
      { script: [], fallback: { usage: { tokens: 1 } } },
      "fallback.usage.tokens",
      "definition.unknown-option",
    ],
    ["negative delay", { script: [], fallback: { delayMs: -1 } }, "fallback.delayMs"],
    [
      "bad reject reason",
      { script: [], fallback: { reject: { reason: "timeout" } } },
      "fallback.reject.reason",
    ],
    [
      "bad reject times",
      { script: [], fallback: { reject: { reason: "network", times: 0 } } },
      "fallback.reject.times",
    ],
    [
      "bad coverage",
      { script: [], evidenceCoverage: { data: { status: "partial" } } },
      "evidenceCoverage.data.reason",
    ],
    ["non-string throw", { script: [], fallback: { throw: 1 } }, "fallback.throw"],
  ];
  for (const [label, opts, path, code = "definition.invalid-value"] of cases) {
    await t.step(label, () => {
      const error = definitionError(() => scriptedAgent(opts as ScriptedAgentOptions));
      assert.equal(error.path, path, error.message);
      assert.equal(error.code, code, error.message);
    });
  }
});

Deno.test("scriptedAgent() keeps its RegExp private from later edits", async () => {
  const when = /x/;
  const agent = agentOf({ script: [{ when, reply: { text: "x" } }], fallback: { text: "no" } });
  when.compile("y");
  assert.deepEqual(await texts(agent, createAgentSession(), ["x"]), ["x"]);
});

Deno.test("scriptedAgent() uses the given name", () => {
  assert.equal(agentOf({ name: "det-a", script: [] }).name, "det-a");
});

Deno.test("scriptedAgent() moves an array reply on after a thrown reply", async () => {
  const agent = agentOf({
    script: [{ when: "go", reply: [{ throw: "first fails" }, { text: "ok" }] }],
  });
  const session = createAgentSession();
  await assert.rejects(send(agent, "go", { session }), /first fails/);
  assert.deepEqual(await texts(agent, session, ["go"]), ["ok"]);
});

Deno.test("scriptedAgent() turns pass validateTurn", async () => {
  const agent = agentOf({
    script: [],
    fallback: {
      thinking: "t",
      tools: [{ name: "a", output: 1 }, { name: "b", status: "pending" }],
      text: "done",
      error: "e",
      data: { x: [1] },
      usage: { inputTokens: 1, costUSD: 0.5 },
    },
  });
  const info = {
    declared: agent.evidenceCoverage,
    index: 1,
    session: 0,
    input: "x",
    startedAt: 0,
    endedAt: 1,
  };
  const result = validateTurn(await send(agent, "x"), info);
  assert.ok(result.ok);
  assert.deepEqual(result.record.toolCalls.map((c) => c.status), ["completed", "pending"]);
  assert.equal(result.record.message, "done");
});
