/**
 * The OpenCode stream mapping (docs/coding_agents.md "OpenCode") on streams the real CLI wrote
 * against the fake Chat Completions server (tests/fixtures/agent_streams/), plus edge cases.
 */
import assert from "node:assert/strict";
import { isPushback, readOpencodeStream } from "../../../src/agents/coding/_opencode_stream.ts";
import { checkEvents } from "../../../src/agents/_turn_events.ts";

const FIXTURES = new URL("../../fixtures/agent_streams/", import.meta.url);
const fixture = (name: string) => Deno.readTextFile(new URL(name, FIXTURES));

Deno.test("readOpencodeStream() maps a failed shell call, the text, the session and summed usage and cost", async () => {
  const s = readOpencodeStream(await fixture("opencode_exit3.ndjson"));
  assert.equal(s.sessionId, "ses_dc9b56729ffeXufxa7KauibLz7");
  assert.deepEqual(s.events, [
    {
      type: "operation.started",
      operationId: "prt_2364aa6c4001vNf2oksiMYDUUJ",
      operation: {
        kind: "tool",
        name: "bash",
        input: {
          command: "echo oops >&2; ls nothing-here; exit 3",
          description: "Runs the command",
        },
      },
    },
    {
      type: "operation.finished",
      operationId: "prt_2364aa6c4001vNf2oksiMYDUUJ",
      kind: "tool",
      status: "failed",
      output: {
        exitCode: 3,
        output: "oops\nls: cannot access 'nothing-here': No such file or directory\n",
      },
    },
    { type: "message", role: "assistant", text: "It failed" },
  ]);
  // Two steps; each: input 150 + cache read 50, output 30 + reasoning 10, cost 0.001065.
  assert.deepEqual(s.usage, {
    inputTokens: 400,
    outputTokens: 80,
    cacheReadTokens: 100,
    cacheCreationTokens: 0,
    reasoningTokens: 20,
    requests: 2,
    costUSD: 0.00213,
  });
  assert.equal(s.failure, undefined);
  assert.deepEqual(s.unmapped, []);
  assert.ok(!("path" in checkEvents(s.events)), "the events pass turn validation");
});

Deno.test("readOpencodeStream() maps a 429 error line to a pushback failure with its Retry-After", async () => {
  const s = readOpencodeStream(await fixture("opencode_429.ndjson"));
  assert.equal(s.worked, false);
  assert.deepEqual(s.failure, {
    message: "Rate limit reached for requests",
    statusCode: 429,
    retryAfterMs: 0,
  });
  assert.ok(s.failure && isPushback(s.failure));
  assert.equal(s.usage, undefined);
});

Deno.test("isPushback() accepts 429/503/529 and overload messages, not other failures", () => {
  assert.ok(isPushback({ message: "x", statusCode: 503 }));
  assert.ok(!isPushback({ message: "Rate limit", statusCode: 500 }), "a status wins over text");
  assert.ok(isPushback({ message: "Overloaded" }));
  assert.ok(!isPushback({ message: "ProviderAuthError" }));
});

Deno.test("readOpencodeStream() maps tool errors, plain outputs, reasoning and subagent calls", () => {
  const line = (type: string, part: unknown) =>
    JSON.stringify({ type, timestamp: 1, sessionID: "ses_1", part });
  const stdout = [
    line("reasoning", { type: "reasoning", text: "Hmm" }),
    line("tool_use", {
      id: "p1",
      callID: "c1",
      tool: "write",
      state: { status: "completed", input: { filePath: "a" }, output: "Wrote a", metadata: {} },
    }),
    line("tool_use", {
      id: "p2",
      callID: "c2",
      tool: "read",
      state: { status: "error", input: { filePath: "b" }, error: "No such file" },
    }),
    line("tool_use", {
      id: "p2",
      tool: "task",
      state: { status: "completed", input: {}, output: "done" },
    }),
    JSON.stringify({ type: "error", sessionID: "ses_1", error: { name: "UnknownError" } }),
    JSON.stringify({ type: "future", sessionID: "ses_1" }),
  ].join("\n");
  const s = readOpencodeStream(stdout);
  assert.deepEqual(s.events[0], { type: "thinking", text: "Hmm" });
  const finishes = s.events.flatMap((e) =>
    e.type === "operation.finished" ? [[e.operationId, e.status, e.output]] : []
  );
  assert.deepEqual(finishes, [
    ["p1", "completed", "Wrote a"],
    ["p2", "failed", { error: "No such file" }],
    ["p2-2", "completed", "done"],
  ]);
  assert.deepEqual(s.hiddenWork, ["task"]);
  assert.deepEqual(s.failure, { message: "UnknownError" });
  assert.deepEqual(s.unmapped, ['type "future"']);
  assert.ok(!("path" in checkEvents(s.events)));
});
