/**
 * The Codex stream mapping (docs/coding_agents.md "Codex") on streams the real CLI wrote against
 * the fake Responses server (tests/fixtures/agent_streams/), plus hand-written edge cases.
 */
import assert from "node:assert/strict";
import {
  CODEX_PUSHBACK_REGEXP,
  readCodexStream,
  turnUsage,
} from "../../../src/agents/coding/_codex_stream.ts";
import { checkEvents } from "../../../src/agents/_turn_events.ts";

const FIXTURES = new URL("../../fixtures/agent_streams/", import.meta.url);
const fixture = (name: string) => Deno.readTextFile(new URL(name, FIXTURES));

Deno.test("readCodexStream() maps a failed command, the message, the thread id and the usage", async () => {
  const s = readCodexStream(await fixture("codex_exit3.ndjson"));
  assert.equal(s.threadId, "01a23649-539a-7310-9c47-b01d62ea17d5");
  assert.deepEqual(s.events, [
    {
      type: "operation.started",
      operationId: "item_0",
      operation: {
        kind: "tool",
        name: "command_execution",
        input: { command: "/bin/bash -lc 'echo oops >&2; ls nothing-here; exit 3'" },
      },
    },
    {
      type: "operation.finished",
      operationId: "item_0",
      kind: "tool",
      status: "failed",
      output: {
        exitCode: 3,
        output: "oops\nls: cannot access 'nothing-here': No such file or directory\n",
      },
    },
    { type: "message", role: "assistant", text: "It failed" },
  ]);
  assert.deepEqual(s.totalUsage, {
    inputTokens: 240,
    outputTokens: 60,
    cacheReadTokens: 40,
    cacheCreationTokens: 0,
    reasoningTokens: 16,
  });
  assert.equal(s.failure, undefined);
  assert.equal(s.worked, true);
  assert.deepEqual(s.unmapped, []);
  assert.ok(!("path" in checkEvents(s.events)), "the events pass turn validation");
});

Deno.test("turnUsage() subtracts the thread total of the previous turn of a resumed thread", async () => {
  const first = readCodexStream(await fixture("codex_exit3.ndjson")).totalUsage;
  const second = readCodexStream(await fixture("codex_resumed.ndjson")).totalUsage;
  assert.ok(first && second);
  assert.deepEqual(turnUsage(second, first), first, "both turns made the same two requests");
  assert.deepEqual(turnUsage(first, undefined), first);
});

Deno.test("readCodexStream() reports a 429 failure before any item as pushback", async () => {
  const s = readCodexStream(await fixture("codex_429.ndjson"));
  assert.equal(s.worked, false);
  assert.equal(s.failure, "exceeded retry limit, last status: 429 Too Many Requests");
  assert.match(s.failure, CODEX_PUSHBACK_REGEXP);
  assert.deepEqual(s.events, [{ type: "error", message: s.failure }]);
});

Deno.test("readCodexStream() does not call a server error pushback", async () => {
  const s = readCodexStream(await fixture("codex_500.ndjson"));
  assert.equal(s.totalUsage, undefined);
  assert.ok(s.failure !== undefined);
  assert.doesNotMatch(s.failure, CODEX_PUSHBACK_REGEXP);
});

Deno.test("readCodexStream() maps file changes, MCP calls, web searches, reasoning and declined commands", () => {
  const lines = [
    { type: "item.completed", item: { id: "r", type: "reasoning", text: "Thinking" } },
    {
      type: "item.completed",
      item: {
        id: "f",
        type: "file_change",
        changes: [{ path: "a.ts", kind: "add" }],
        status: "completed",
      },
    },
    {
      type: "item.started",
      item: { id: "m", type: "mcp_tool_call", server: "s", tool: "t", arguments: { x: 1 } },
    },
    {
      type: "item.completed",
      item: {
        id: "m",
        type: "mcp_tool_call",
        server: "s",
        tool: "t",
        arguments: { x: 1 },
        error: { message: "boom" },
        status: "failed",
      },
    },
    { type: "item.completed", item: { id: "w", type: "web_search", query: "deno" } },
    {
      type: "item.completed",
      item: { id: "c", type: "command_execution", command: "rm -rf /", status: "declined" },
    },
    { type: "item.completed", item: { id: "x", type: "future_item" } },
    { type: "item.updated", item: { id: "t", type: "todo_list", items: [] } },
  ];
  const s = readCodexStream(lines.map((l) => JSON.stringify(l)).join("\n") + "\nnot json\n");
  const tools = s.events.filter((e) => e.type === "operation.finished").map((e) =>
    e.type === "operation.finished" ? [e.operationId, e.status, e.output ?? null] : []
  );
  assert.deepEqual(tools, [
    ["f", "completed", null],
    ["m", "failed", { error: "boom" }],
    ["w", "completed", null],
    ["c", "rejected", { exitCode: null, output: "" }],
  ]);
  const names = s.events.flatMap((e) => e.type === "operation.started" ? [e.operation.name] : []);
  assert.deepEqual(names, ["file_change", "mcp__s__t", "web_search", "command_execution"]);
  assert.deepEqual(s.events[0], { type: "thinking", text: "Thinking" });
  assert.deepEqual(s.unmapped, ['item "future_item"', 'line "not json"']);
  assert.equal(s.failure, undefined, "no error line");
  assert.ok(!("path" in checkEvents(s.events)));
});

Deno.test("readCodexStream() keeps a turn without turn.completed usage-less and names the last error", () => {
  const s = readCodexStream(
    [
      { type: "thread.started", thread_id: "t1" },
      { type: "item.started", item: { id: "c", type: "command_execution", command: "sleep 9" } },
      { type: "error", message: "stream disconnected" },
    ].map((l) => JSON.stringify(l)).join("\n"),
  );
  assert.equal(s.totalUsage, undefined);
  assert.equal(s.failure, "stream disconnected");
  assert.equal(s.worked, true);
  assert.equal(s.events.length, 2, "a start without finish stays pending");
});

Deno.test("readCodexStream() maps a warning item to an error event that is not work", () => {
  const s = readCodexStream(
    [
      { type: "thread.started", thread_id: "t1" },
      { type: "item.completed", item: { id: "item_0", type: "error", message: "Model metadata" } },
      { type: "turn.started" },
      { type: "error", message: "exceeded retry limit, last status: 429 Too Many Requests" },
      { type: "turn.failed", error: { message: "exceeded retry limit" } },
    ].map((l) => JSON.stringify(l)).join("\n"),
  );
  assert.equal(s.worked, false, "a 429 after a warning is still pushback before any work");
  assert.deepEqual(s.events[0], { type: "error", message: "Model metadata" });
  assert.equal(s.failure, "exceeded retry limit");
});
