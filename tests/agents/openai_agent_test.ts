/** `openAICompatibleAgent` (authoring.md §8.2) against a real local HTTP server. */
import assert from "node:assert/strict";
import { DefinitionError, hasErrorName } from "../../src/_shared/errors.ts";
import type { JsonValue } from "../../src/_shared/json.ts";
import {
  type AgentContext,
  createAgentSession,
  type HostEnvReader,
  openAICompatibleAgent,
  type OpenAICompatibleAgentOptions,
  resolveAgent,
  type ResolvedAgent,
  SendRejectedError,
  type Turn,
  validateTurn,
} from "../../src/agents/mod.ts";
import { createTestContext, type TestContextOptions } from "./_context.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

/** One request the server received. */
interface Seen {
  readonly method: string;
  readonly path: string;
  readonly headers: Headers;
  readonly body: Json;
}

/** Answers the n-th request (0-based). */
type Responder = (body: Json, n: number) => Response | Promise<Response>;

interface ScriptedServer extends AsyncDisposable {
  readonly baseUrl: string;
  readonly seen: Seen[];
}

/** A chat-completions server on 127.0.0.1, port 0, answering with `script[n]` (last repeats). */
function serve(script: Responder | readonly Responder[]): ScriptedServer {
  const seen: Seen[] = [];
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    const body = await req.json().catch(() => undefined);
    const n = seen.length;
    seen.push({ method: req.method, path: new URL(req.url).pathname, headers: req.headers, body });
    const responder = typeof script === "function"
      ? script
      : script[Math.min(n, script.length - 1)]!;
    return await responder(body, n);
  });
  return {
    baseUrl: `http://127.0.0.1:${server.addr.port}/v1`,
    seen,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

interface ReplyOptions {
  content?: string | null;
  reasoning_content?: string;
  reasoning?: string;
  tool_calls?: Json[];
  finish_reason?: string;
  usage?: Json | null;
}

/** A chat-completions response; `usage: null` leaves usage out. */
function reply(options: ReplyOptions = {}): Responder {
  return () => {
    const message: Json = { role: "assistant", content: options.content ?? null };
    if (options.reasoning_content) message.reasoning_content = options.reasoning_content;
    if (options.reasoning) message.reasoning = options.reasoning;
    if (options.tool_calls) message.tool_calls = options.tool_calls;
    const finish = options.finish_reason ?? (options.tool_calls ? "tool_calls" : "stop");
    const body: Json = { id: "r", choices: [{ index: 0, message, finish_reason: finish }] };
    if (options.usage !== null) {
      body.usage = options.usage ?? { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
    }
    return Response.json(body);
  };
}

function call(id: string, name: string, args: Json): Json {
  return {
    id,
    type: "function",
    function: { name, arguments: typeof args === "string" ? args : JSON.stringify(args) },
  };
}

function status(code: number, text: string, headers: Record<string, string> = {}): Responder {
  return () => new Response(text, { status: code, headers });
}

interface SendOptions extends TestContextOptions {
  env?: Record<string, string>;
}

function contextOf(options: SendOptions = {}): AgentContext {
  const env: HostEnvReader = (name) => options.env?.[name];
  return { ...createTestContext({ model: "m-1", ...options }), env } as AgentContext;
}

function agentOf(opts: OpenAICompatibleAgentOptions): ResolvedAgent {
  return resolveAgent(openAICompatibleAgent(opts))!;
}

async function send(agent: ResolvedAgent, text: string, options: SendOptions = {}): Promise<Turn> {
  const turn = await agent.send({ text }, contextOf(options));
  const checked = validateTurn(turn, {
    declared: agent.evidenceCoverage,
    index: 1,
    session: 0,
    input: text,
    startedAt: 0,
    endedAt: 0,
  });
  assert.ok(checked.ok, checked.ok ? "" : checked.message);
  return turn;
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof Error, `expected an Error, got ${error}`);
    return error;
  }
  assert.fail("expected the send to reject");
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

const WEATHER_PARAMS = { type: "object", properties: { city: { type: "string" } } };

Deno.test("openAICompatibleAgent() validates its options with DefinitionError", () => {
  const base = { baseUrl: "http://127.0.0.1:1/v1" };
  const cases: [unknown, string][] = [
    [{}, "baseUrl"],
    [{ baseUrl: "not a url" }, "baseUrl"],
    [{ baseUrl: "ftp://host/v1" }, "baseUrl"],
    [{ ...base, baseURL: "x" }, "baseURL"],
    [{ ...base, name: "bad name" }, "name"],
    [{ ...base, apiKeyEnv: "" }, "apiKeyEnv"],
    [{ ...base, defaultModel: "" }, "defaultModel"],
    [{ ...base, system: 1 }, "system"],
    [{ ...base, maxToolRounds: -1 }, "maxToolRounds"],
    [{ ...base, maxToolRounds: 1.5 }, "maxToolRounds"],
    [{ ...base, tools: [{ name: "t" }] }, "tools[0].parameters"],
    [{ ...base, tools: [{ name: "", parameters: {} }] }, "tools[0].name"],
    [{ ...base, tools: [{ name: "t", parameters: {}, execute: 1 }] }, "tools[0].execute"],
    [
      { ...base, tools: [{ name: "t", parameters: {} }, { name: "t", parameters: {} }] },
      "tools[1].name",
    ],
    [{ ...base, tools: [{ name: "t", parameters: { n: NaN } }] }, "tools[0].parameters.n"],
    [{ ...base, headers: { "bad header": "x" } }, "headers.bad header"],
    [{ ...base, headers: { "x-a": 1 } }, "headers.x-a"],
    [{ ...base, body: { model: "x" } }, "body.model"],
    [{ ...base, body: { messages: [] } }, "body.messages"],
    [{ ...base, body: { tools: [] } }, "body.tools"],
    [{ ...base, body: { stream: true } }, "body.stream"],
    [{ ...base, body: { temperature: Infinity } }, "body.temperature"],
  ];
  for (const [opts, path] of cases) {
    const error = definitionError(() =>
      openAICompatibleAgent(opts as OpenAICompatibleAgentOptions)
    );
    assert.equal(error.path, path, JSON.stringify(opts));
  }
});

Deno.test("openAICompatibleAgent() is a direct agent named openai-compatible with data unavailable", () => {
  const agent = agentOf({ baseUrl: "http://127.0.0.1:1/v1/" });
  assert.equal(agent.name, "openai-compatible");
  assert.equal(agent.kind, "direct");
  assert.deepEqual(agent.evidenceCoverage.events, { status: "complete" });
  assert.deepEqual(agent.evidenceCoverage.usage, { status: "complete" });
  assert.equal(agent.evidenceCoverage.data.status, "unavailable");
  assert.equal((agent.identity as Json).baseUrl, "http://127.0.0.1:1/v1");
  assert.equal(agentOf({ baseUrl: "http://h/v1", name: "gateway" }).name, "gateway");
});

Deno.test("openAICompatibleAgent() posts a non-streaming request and maps a plain reply", async () => {
  await using server = serve(reply({
    content: "Hello, niceeval!",
    usage: {
      prompt_tokens: 20,
      completion_tokens: 7,
      prompt_tokens_details: { cached_tokens: 4 },
      completion_tokens_details: { reasoning_tokens: 2 },
    },
  }));
  const agent = agentOf({
    baseUrl: `${server.baseUrl}/`,
    system: "Be brief.",
    body: { temperature: 0 },
    tools: [{ name: "get_weather", description: "Weather", parameters: WEATHER_PARAMS }],
  });
  const turn = await send(agent, "Say hello", { model: "m-1" });
  assert.deepEqual(turn, {
    status: "completed",
    events: [{ type: "message", role: "assistant", text: "Hello, niceeval!" }],
    usage: {
      inputTokens: 20,
      outputTokens: 7,
      cacheReadTokens: 4,
      reasoningTokens: 2,
      requests: 1,
    },
  });
  const [seen] = server.seen;
  assert.equal(seen?.method, "POST");
  assert.equal(seen?.path, "/v1/chat/completions");
  assert.equal(seen?.headers.get("content-type"), "application/json");
  assert.deepEqual(seen?.body, {
    temperature: 0,
    model: "m-1",
    messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Say hello" }],
    stream: false,
    tools: [{
      type: "function",
      function: { name: "get_weather", description: "Weather", parameters: WEATHER_PARAMS },
    }],
  });
});

Deno.test("openAICompatibleAgent() uses defaultModel when ctx.model is undefined", async () => {
  await using server = serve(reply({ content: "ok" }));
  const agent = agentOf({ baseUrl: server.baseUrl, defaultModel: "fallback-model" });
  await agent.send({ text: "hi" }, { ...contextOf(), model: undefined });
  await send(agent, "hi", { model: "experiment-model" });
  assert.deepEqual(server.seen.map((s) => s.body.model), ["fallback-model", "experiment-model"]);
});

Deno.test("openAICompatibleAgent() throws agent-config-invalid before any request without a model", async () => {
  await using server = serve(reply({ content: "ok" }));
  const agent = agentOf({ baseUrl: server.baseUrl });
  const error = await rejection(agent.send({ text: "hi" }, { ...contextOf(), model: undefined }));
  assert.equal((error as Error & { code?: string }).code, "agent-config-invalid");
  assert.equal(hasErrorName(error, "SendRejectedError"), false);
  assert.match(error.message, /no model/);
  assert.equal(server.seen.length, 0);
});

Deno.test("openAICompatibleAgent() maps reasoning_content and reasoning to thinking before the message", async () => {
  await using server = serve([
    reply({ content: "42", reasoning_content: "Let me think." }),
    reply({ content: "43", reasoning: "Think again." }),
    reply({ content: "", reasoning: "" }),
  ]);
  const agent = agentOf({ baseUrl: server.baseUrl });
  const session = createAgentSession();
  assert.deepEqual((await send(agent, "q1", { session })).events, [
    { type: "thinking", text: "Let me think." },
    { type: "message", role: "assistant", text: "42" },
  ]);
  assert.deepEqual((await send(agent, "q2", { session })).events, [
    { type: "thinking", text: "Think again." },
    { type: "message", role: "assistant", text: "43" },
  ]);
  assert.deepEqual((await send(agent, "q3", { session })).events, []);
});

Deno.test("openAICompatibleAgent() runs tools with execute over several rounds, completed and failed", async () => {
  await using server = serve([
    reply({ tool_calls: [call("c1", "get_weather", { city: "Brooklyn" })] }),
    reply({
      content: "Checking the forecast.",
      tool_calls: [call("c2", "get_forecast", "{not json")],
    }),
    reply({
      content: "It is sunny in Brooklyn.",
      usage: { prompt_tokens: 30, completion_tokens: 9 },
    }),
  ]);
  const inputs: JsonValue[] = [];
  const agent = agentOf({
    baseUrl: server.baseUrl,
    tools: [
      {
        name: "get_weather",
        parameters: WEATHER_PARAMS,
        execute: (input) => {
          inputs.push(input);
          return { sky: "sunny" };
        },
      },
      {
        name: "get_forecast",
        parameters: {},
        execute: () => Promise.reject(new Error("forecast service down")),
      },
    ],
  });
  const turn = await send(agent, "What is the weather in Brooklyn?");
  assert.deepEqual(turn.events, [
    {
      type: "operation.started",
      operationId: "c1",
      operation: { kind: "tool", name: "get_weather", input: { city: "Brooklyn" } },
    },
    {
      type: "operation.finished",
      operationId: "c1",
      kind: "tool",
      status: "completed",
      output: { sky: "sunny" },
    },
    { type: "message", role: "assistant", text: "Checking the forecast." },
    {
      type: "operation.started",
      operationId: "c2",
      operation: { kind: "tool", name: "get_forecast", input: "{not json" },
    },
    {
      type: "operation.finished",
      operationId: "c2",
      kind: "tool",
      status: "failed",
      output: { error: "forecast service down" },
    },
    { type: "message", role: "assistant", text: "It is sunny in Brooklyn." },
  ]);
  assert.equal(turn.status, "completed");
  assert.deepEqual(inputs, [{ city: "Brooklyn" }]);
  assert.deepEqual(turn.usage, { inputTokens: 50, outputTokens: 19, requests: 3 });
  assert.equal(server.seen.length, 3);
  assert.deepEqual(server.seen[2]?.body.messages.slice(1), [
    {
      role: "assistant",
      content: null,
      tool_calls: [call("c1", "get_weather", { city: "Brooklyn" })],
    },
    { role: "tool", tool_call_id: "c1", content: '{"sky":"sunny"}' },
    {
      role: "assistant",
      content: "Checking the forecast.",
      tool_calls: [call("c2", "get_forecast", "{not json")],
    },
    { role: "tool", tool_call_id: "c2", content: '{"error":"forecast service down"}' },
  ]);
});

Deno.test("openAICompatibleAgent() keeps operation ids unique when a server reuses call ids", async () => {
  await using server = serve([
    reply({ tool_calls: [call("call_0", "t", {})] }),
    reply({ tool_calls: [call("call_0", "t", {})] }),
    reply({ content: "done" }),
  ]);
  const agent = agentOf({
    baseUrl: server.baseUrl,
    tools: [{ name: "t", parameters: {}, execute: () => "ok" }],
  });
  const turn = await send(agent, "go");
  const ids = turn.events.flatMap((e) => e.type === "operation.started" ? [e.operationId] : []);
  assert.deepEqual(ids, ["call_0", "call_0-2"]);
  assert.deepEqual(server.seen[1]?.body.messages.at(-1), {
    role: "tool",
    tool_call_id: "call_0",
    content: "ok",
  });
});

Deno.test("openAICompatibleAgent() leaves a call without execute pending and ends the turn", async () => {
  await using server = serve([
    reply({
      content: "Let me look.",
      tool_calls: [call("c1", "search", { q: "x" }), call("c2", "lookup", { id: 1 })],
    }),
    reply({ content: "second send" }),
  ]);
  let executed = 0;
  const agent = agentOf({
    baseUrl: server.baseUrl,
    tools: [
      { name: "search", parameters: {} },
      { name: "lookup", parameters: {}, execute: () => ++executed },
    ],
  });
  const session = createAgentSession();
  const turn = await send(agent, "find x", { session });
  assert.equal(turn.status, "completed");
  assert.deepEqual(turn.events, [
    { type: "message", role: "assistant", text: "Let me look." },
    {
      type: "operation.started",
      operationId: "c1",
      operation: { kind: "tool", name: "search", input: { q: "x" } },
    },
    {
      type: "operation.started",
      operationId: "c2",
      operation: { kind: "tool", name: "lookup", input: { id: 1 } },
    },
    { type: "operation.finished", operationId: "c2", kind: "tool", status: "completed", output: 1 },
  ]);
  assert.equal(server.seen.length, 1);
  // The next send continues without the unanswered call, which an endpoint would refuse.
  await send(agent, "next", { session });
  assert.deepEqual(server.seen[1]?.body.messages, [
    { role: "user", content: "find x" },
    { role: "assistant", content: "Let me look.", tool_calls: [call("c2", "lookup", { id: 1 })] },
    { role: "tool", tool_call_id: "c2", content: "1" },
    { role: "user", content: "next" },
  ]);
});

Deno.test("openAICompatibleAgent() errors when execute returns a non-JSON value", async () => {
  await using server = serve(reply({ tool_calls: [call("c1", "t", {})] }));
  const agent = agentOf({
    baseUrl: server.baseUrl,
    tools: [{ name: "t", parameters: {}, execute: () => undefined as unknown as JsonValue }],
  });
  const error = await rejection(agent.send({ text: "go" }, contextOf()));
  assert.ok(error instanceof TypeError);
  assert.match(error.message, /tool "t": execute must return JSON/);
});

Deno.test("openAICompatibleAgent() continues the history on one session and keeps sessions apart", async () => {
  await using server = serve((body) =>
    reply({ content: `reply to ${body.messages.at(-1).content}` })(body, 0)
  );
  const agent = agentOf({ baseUrl: server.baseUrl, system: "sys" });
  const first = createAgentSession();
  const second = createAgentSession();
  await send(agent, "a1", { session: first });
  await send(agent, "b1", { session: second });
  await send(agent, "a2", { session: first });
  const conversation = (n: number) =>
    server.seen[n]?.body.messages.map((m: Json) => `${m.role}:${m.content}`);
  assert.deepEqual(conversation(1), ["system:sys", "user:b1"]);
  assert.deepEqual(conversation(2), [
    "system:sys",
    "user:a1",
    "assistant:reply to a1",
    "user:a2",
  ]);
});

Deno.test("openAICompatibleAgent() reports no usage and lowers usage coverage when a response lacks usage", async () => {
  await using server = serve([
    reply({ tool_calls: [call("c1", "t", {})] }),
    reply({ content: "done", usage: null }),
  ]);
  const agent = agentOf({
    baseUrl: server.baseUrl,
    tools: [{ name: "t", parameters: {}, execute: () => null }],
  });
  const turn = await send(agent, "go");
  assert.equal(turn.usage, undefined);
  assert.equal(turn.evidenceCoverage?.usage?.status, "unavailable");
});

Deno.test("openAICompatibleAgent() sums only the usage fields every response reported", async () => {
  await using server = serve([
    reply({
      tool_calls: [call("c1", "t", {})],
      usage: {
        prompt_tokens: 3,
        completion_tokens: 1,
        prompt_tokens_details: { cached_tokens: 2 },
      },
    }),
    reply({ content: "done", usage: { prompt_tokens: 4, completion_tokens: 2 } }),
  ]);
  const agent = agentOf({
    baseUrl: server.baseUrl,
    tools: [{ name: "t", parameters: {}, execute: () => null }],
  });
  const turn = await send(agent, "go");
  assert.deepEqual(turn.usage, { inputTokens: 7, outputTokens: 3, requests: 2 });
  assert.equal(turn.evidenceCoverage, undefined);
});

Deno.test("openAICompatibleAgent() rejects a first-request 429 as rate_limit with Retry-After seconds", async () => {
  await using server = serve([
    status(429, "slow down", { "retry-after": "2" }),
    reply({ content: "ok" }),
  ]);
  const agent = agentOf({ baseUrl: server.baseUrl });
  const session = createAgentSession();
  const error = await rejection(agent.send({ text: "hi" }, contextOf({ session })));
  assert.ok(error instanceof SendRejectedError);
  assert.equal(error.reason, "rate_limit");
  assert.equal(error.retryAfterMs, 2000);
  assert.match(error.message, /HTTP 429/);
  // The rejected try left the session untouched (rule 7.7.3): the retry sends the same history.
  await send(agent, "hi", { session, sendTry: 1 });
  assert.deepEqual(server.seen[1]?.body.messages, [{ role: "user", content: "hi" }]);
});

Deno.test("openAICompatibleAgent() reads a Retry-After HTTP date relative to the Date header", async () => {
  const date = "Wed, 21 Oct 2015 07:28:00 GMT";
  await using server = serve([
    status(429, "", { "retry-after": "Wed, 21 Oct 2015 07:28:07 GMT", date }),
    status(429, "", { "retry-after": "Wed, 21 Oct 2015 07:27:00 GMT", date }),
    status(429, "", {}),
  ]);
  const agent = agentOf({ baseUrl: server.baseUrl });
  const delays: (number | undefined)[] = [];
  for (let i = 0; i < 3; i++) {
    const error = await rejection(agent.send({ text: "hi" }, contextOf()));
    assert.ok(error instanceof SendRejectedError);
    delays.push(error.retryAfterMs);
  }
  assert.deepEqual(delays, [7000, 0, undefined]);
});

Deno.test("openAICompatibleAgent() rejects a refused connection as network", async () => {
  const listener = Deno.listen({ port: 0, hostname: "127.0.0.1" });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const agent = agentOf({ baseUrl: `http://127.0.0.1:${port}/v1` });
  const error = await rejection(agent.send({ text: "hi" }, contextOf()));
  assert.ok(error instanceof SendRejectedError, error.message);
  assert.equal(error.reason, "network");
  assert.equal(error.retryAfterMs, undefined);
});

Deno.test("openAICompatibleAgent() fails terminally on HTTP 500 with status and 500 body characters, never the key", async () => {
  const key = "sk-secret-123";
  await using server = serve(status(500, `error for ${key}: ${"x".repeat(900)}`));
  const agent = agentOf({ baseUrl: server.baseUrl, apiKeyEnv: "TEST_KEY" });
  const error = await rejection(agent.send({ text: "hi" }, contextOf({ env: { TEST_KEY: key } })));
  assert.equal(hasErrorName(error, "SendRejectedError"), false);
  assert.match(error.message, /HTTP 500/);
  assert.equal(error.message.includes(key), false);
  const body = error.message.slice(error.message.indexOf("error for"));
  assert.equal(body, `error for [redacted]: ${"x".repeat(500 - 22)}…`);
});

Deno.test("openAICompatibleAgent() fails terminally on a 429 after a tool round of the same send", async () => {
  await using server = serve([
    reply({ tool_calls: [call("c1", "t", {})] }),
    status(429, "busy", { "retry-after": "1" }),
  ]);
  const agent = agentOf({
    baseUrl: server.baseUrl,
    tools: [{ name: "t", parameters: {}, execute: () => "done" }],
  });
  const error = await rejection(agent.send({ text: "go" }, contextOf()));
  assert.equal(hasErrorName(error, "SendRejectedError"), false);
  assert.match(error.message, /HTTP 429.*busy/);
});

Deno.test("openAICompatibleAgent() fails terminally on an unparsable response", async () => {
  await using server = serve([status(200, "<html>"), () => Response.json({ choices: [] })]);
  const agent = agentOf({ baseUrl: server.baseUrl });
  const first = await rejection(agent.send({ text: "go" }, contextOf()));
  assert.match(first.message, /unparsable response \(HTTP 200\): <html>/);
  const second = await rejection(agent.send({ text: "go" }, contextOf()));
  assert.match(second.message, /no choices\[0\]\.message/);
});

Deno.test("openAICompatibleAgent() passes ctx.signal to fetch and rejects with its reason", async () => {
  const { promise: release, resolve } = Promise.withResolvers<void>();
  const { promise: arrived, resolve: arrive } = Promise.withResolvers<void>();
  await using server = serve(async () => {
    arrive();
    await release;
    return new Response("late");
  });
  try {
    const agent = agentOf({ baseUrl: server.baseUrl });
    const controller = new AbortController();
    const sent = agent.send({ text: "hi" }, contextOf({ signal: controller.signal }));
    await arrived;
    const reason = new Error("deadline");
    controller.abort(reason);
    await assert.rejects(sent, (error) => error === reason);
  } finally {
    resolve();
  }
});

Deno.test("openAICompatibleAgent() fails the turn with an error event on finish_reason length or content_filter", async () => {
  await using server = serve([
    reply({ content: "The answer is", finish_reason: "length" }),
    reply({ content: "", finish_reason: "content_filter" }),
  ]);
  const agent = agentOf({ baseUrl: server.baseUrl });
  const length = await send(agent, "long");
  assert.equal(length.status, "failed");
  assert.deepEqual(length.events, [
    { type: "message", role: "assistant", text: "The answer is" },
    { type: "error", message: 'the model stopped early (finish_reason "length")' },
  ]);
  const filtered = await send(agent, "bad");
  assert.equal(filtered.status, "failed");
  assert.deepEqual(filtered.events, [
    { type: "error", message: 'the model stopped early (finish_reason "content_filter")' },
  ]);
  assert.deepEqual(length.usage, { inputTokens: 10, outputTokens: 5, requests: 1 });
});

Deno.test("openAICompatibleAgent() fails the turn when the model exceeds maxToolRounds", async () => {
  await using server = serve(
    (_body, n) => reply({ tool_calls: [call(`c${n}`, "t", { n })] })(_body, n),
  );
  let executed = 0;
  const agent = agentOf({
    baseUrl: server.baseUrl,
    maxToolRounds: 2,
    tools: [{ name: "t", parameters: {}, execute: () => ++executed }],
  });
  const turn = await send(agent, "loop");
  assert.equal(server.seen.length, 3);
  assert.equal(executed, 2);
  assert.equal(turn.status, "failed");
  const kinds = turn.events.map((e) =>
    e.type === "operation.started" ? `start ${e.operationId}` : e.type
  );
  assert.deepEqual(kinds, [
    "start c0",
    "operation.finished",
    "start c1",
    "operation.finished",
    "start c2",
    "error",
  ]);
  assert.match((turn.events.at(-1) as { message: string }).message, /after 2 tool round/);
});

Deno.test("openAICompatibleAgent() sends Authorization only when the key variable is set", async () => {
  await using server = serve(reply({ content: "ok" }));
  const agent = agentOf({ baseUrl: server.baseUrl, headers: { "x-team": "evals" } });
  const custom = agentOf({ baseUrl: server.baseUrl, apiKeyEnv: "GATEWAY_KEY" });
  await send(agent, "a", { env: { OPENAI_API_KEY: "sk-1" } });
  await send(agent, "b", { env: {} });
  await send(agent, "c", { env: { OPENAI_API_KEY: "" } });
  await send(custom, "d", { env: { OPENAI_API_KEY: "sk-1", GATEWAY_KEY: "gw-2" } });
  await agent.send({ text: "e" }, createTestContext({ model: "m" }));
  assert.deepEqual(server.seen.map((s) => s.headers.get("authorization")), [
    "Bearer sk-1",
    null,
    null,
    "Bearer gw-2",
    null,
  ]);
  assert.equal(server.seen[0]?.headers.get("x-team"), "evals");
});

Deno.test("openAICompatibleAgent() identity follows system, tools, body and header names only", () => {
  const base: OpenAICompatibleAgentOptions = {
    baseUrl: "http://h/v1",
    system: "s",
    tools: [{ name: "t", description: "d", parameters: { type: "object" } }],
    body: { temperature: 0 },
    headers: { "x-a": "1" },
  };
  const identity = (opts: Partial<OpenAICompatibleAgentOptions>) =>
    JSON.stringify(agentOf({ ...base, ...opts }).identity);
  const same = identity({});
  assert.equal(identity({ headers: { "x-a": "2" } }), same);
  assert.equal(identity({ apiKeyEnv: "OTHER_KEY" }), same);
  assert.equal(
    identity({ tools: [{ ...base.tools![0]!, execute: () => null }] }),
    same,
  );
  for (
    const changed of [
      { baseUrl: "http://other/v1" },
      { system: "s2" },
      { tools: [{ name: "t2", description: "d", parameters: { type: "object" } }] },
      { tools: [{ name: "t", description: "d2", parameters: { type: "object" } }] },
      { tools: [{ name: "t", description: "d", parameters: { type: "array" } }] },
      { body: { temperature: 1 } },
      { headers: { "x-b": "1" } },
    ]
  ) {
    assert.notEqual(identity(changed), same, JSON.stringify(changed));
  }
  assert.deepEqual(JSON.parse(same), {
    baseUrl: "http://h/v1",
    system: "s",
    tools: [{ name: "t", description: "d", parameters: { type: "object" } }],
    body: { temperature: 0 },
    headers: ["x-a"],
  });
});
