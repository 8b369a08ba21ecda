/**
 * The mapping of Claude Code's `stream-json` output (docs/coding_agents.md "Claude Code"),
 * checked on streams captured from the pinned CLI against the fake Anthropic server.
 */
import assert from "node:assert/strict";
import { parseClaudeStream } from "../../../src/agents/coding/_claude_stream.ts";

const read = (name: string) =>
  Deno.readTextFile(new URL(`../../fixtures/agent_streams/${name}`, import.meta.url));

Deno.test("claude stream: a tool call maps to message, started/finished tool and usage with cost", async () => {
  const parsed = parseClaudeStream(await read("claude_tool_call.ndjson"), 0);
  assert.equal(parsed.sessionId, "26bdd5da-3200-4deb-a691-5edfa9171ade");
  assert.equal(parsed.rejected, undefined);
  assert.equal(parsed.failed, undefined);
  assert.deepEqual(parsed.turn.events, [
    { type: "message", role: "assistant", text: "I will run a command." },
    {
      type: "operation.started",
      operationId: "toolu_fake_1",
      operation: {
        kind: "tool",
        name: "Bash",
        input: { command: "printf hi > hello.txt", description: "Run the requested command" },
      },
    },
    {
      type: "operation.finished",
      operationId: "toolu_fake_1",
      kind: "tool",
      status: "completed",
      output: "(Bash completed with no output)",
    },
    { type: "message", role: "assistant", text: "done: (Bash completed with no output)" },
  ]);
  assert.equal(parsed.turn.status, "completed");
  assert.deepEqual(parsed.turn.usage, {
    inputTokens: 200,
    outputTokens: 40,
    cacheReadTokens: 20,
    cacheCreationTokens: 10,
    reasoningTokens: 0,
    requests: 2,
    costUSD: 0.0012435,
  });
  assert.equal(parsed.totalCostUSD, 0.0012435);
});

Deno.test("claude stream: a resumed session reports this run's cost, not the session total", async () => {
  const parsed = parseClaudeStream(await read("claude_resumed.ndjson"), 0, {
    previousTotalCostUSD: 0.0012435,
  });
  assert.equal(parsed.turn.usage?.costUSD, 0.00062175);
  assert.equal(parsed.turn.usage?.inputTokens, 100);
  assert.equal(parsed.totalCostUSD, 0.0018652500000000002);
  // Without the per-run figure, the difference of the cumulative totals is used.
  const stripped = (await read("claude_resumed.ndjson")).split("\n").map((line) => {
    if (!line.includes('"type":"result"')) return line;
    const { model_usage_since_last_result: _, ...rest } = JSON.parse(line);
    return JSON.stringify(rest);
  }).join("\n");
  const fallback = parseClaudeStream(stripped, 0, { previousTotalCostUSD: 0.0012435 });
  assert.ok(Math.abs((fallback.turn.usage?.costUSD ?? 0) - 0.00062175) < 1e-12);
});

Deno.test("claude stream: a 429 before any tool ran is a proven rejection", async () => {
  const parsed = parseClaudeStream(await read("claude_rate_limited.ndjson"), 1);
  assert.equal(
    parsed.rejected?.message,
    "API Error: Request rejected (429) · Rate limited by the fake",
  );
  assert.equal(parsed.failed, undefined);
});

Deno.test("claude stream: a 429 after a tool ran fails the send instead of retrying it", async () => {
  const lines = (await read("claude_tool_call.ndjson")).split("\n").filter((l) => l !== "");
  const limited = (await read("claude_rate_limited.ndjson")).split("\n").filter((l) => l !== "");
  const mixed = [...lines.slice(0, 4), ...limited.slice(1)].join("\n");
  const parsed = parseClaudeStream(mixed, 1);
  assert.equal(parsed.rejected, undefined);
  assert.match(parsed.failed ?? "", /model API error/);
});

Deno.test("claude stream: output without a result line is a failed run without usage", () => {
  const parsed = parseClaudeStream(
    '{"type":"system","subtype":"init","session_id":"s1"}\nnoise\n',
    139,
  );
  assert.equal(parsed.sessionId, "s1");
  assert.match(parsed.failed ?? "", /exited with 139 before reporting a result/);
  assert.equal(parsed.turn.usage, undefined);
  assert.equal(parsed.turn.evidenceCoverage?.usage?.status, "unavailable");
});

Deno.test("claude stream: an error result keeps its events and fails the turn", () => {
  const stream = [
    '{"type":"assistant","message":{"id":"m1","content":[{"type":"thinking","thinking":"hmm"},{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"x"}}]},"parent_tool_use_id":null}',
    '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":[{"type":"text","text":"no such file"}]}]}}',
    '{"type":"result","subtype":"error_max_turns","is_error":true,"result":"","usage":{"input_tokens":5,"output_tokens":1}}',
  ].join("\n");
  const parsed = parseClaudeStream(stream, 1);
  assert.equal(parsed.failed, undefined);
  assert.equal(parsed.turn.status, "failed");
  assert.deepEqual(parsed.turn.events.map((e) => e.type), [
    "thinking",
    "operation.started",
    "operation.finished",
    "error",
  ]);
  assert.deepEqual(parsed.turn.events[2], {
    type: "operation.finished",
    operationId: "t1",
    kind: "tool",
    status: "failed",
    output: "no such file",
  });
});

Deno.test("claude stream: a tool call the permission check denied finishes as rejected", () => {
  const stream = [
    '{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t9","name":"Bash","input":{"command":"rm -rf /"}}]},"parent_tool_use_id":null}',
    '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t9","is_error":true,"content":"Permission denied"}]}}',
    '{"type":"result","subtype":"success","is_error":false,"result":"ok","permission_denials":[{"tool_name":"Bash","tool_use_id":"t9","tool_input":{}}],"usage":{}}',
  ].join("\n");
  const finished = parseClaudeStream(stream, 0).turn.events[1];
  assert.equal(finished?.type === "operation.finished" && finished.status, "rejected");
});

Deno.test("claude stream: a content block it does not map lowers the turn's events and actions to partial", async () => {
  const lines = (await read("claude_tool_call.ndjson")).split("\n").map((line) => {
    if (!line.includes('"type":"assistant"') || !line.includes('"type":"text"')) return line;
    const value = JSON.parse(line);
    value.message.content = [
      ...value.message.content,
      { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} },
    ];
    return JSON.stringify(value);
  });
  const parsed = parseClaudeStream(lines.join("\n"), 0);
  assert.equal(parsed.turn.evidenceCoverage?.events?.status, "partial");
  assert.match(JSON.stringify(parsed.turn.evidenceCoverage?.actions), /server_tool_use/);
  const plain = parseClaudeStream(await read("claude_tool_call.ndjson"), 0);
  assert.equal(plain.turn.evidenceCoverage, undefined);
});
