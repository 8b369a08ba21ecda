import assert from "node:assert/strict";
import {
  completeEvidenceCoverage,
  evidenceCoverage,
  type TurnRecord,
  type TurnValidationInfo,
  validateTurn,
} from "../../src/agents/mod.ts";

const INFO: TurnValidationInfo = {
  declared: completeEvidenceCoverage,
  index: 2,
  session: 1,
  input: "What is the weather?",
  startedAt: 1000,
  endedAt: 1250,
};

const start = (operationId: string, name = "get_weather", input: unknown = {}) => ({
  type: "operation.started",
  operationId,
  operation: { kind: "tool", name, input },
});
const finish = (operationId: string, status = "completed", output?: unknown) => ({
  type: "operation.finished",
  operationId,
  kind: "tool",
  status,
  ...(output === undefined ? {} : { output }),
});
const say = (text: string) => ({ type: "message", role: "assistant", text });

function valid(turn: unknown, info: TurnValidationInfo = INFO): TurnRecord {
  const result = validateTurn(turn, info);
  if (!result.ok) assert.fail(`expected a valid turn, got ${result.message}`);
  return result.record;
}

/** Asserts the turn is invalid at `path`; returns the message. */
function invalidAt(turn: unknown, path: string): string {
  const result = validateTurn(turn, INFO);
  assert.equal(result.ok, false, "expected an invalid turn");
  if (result.ok) throw new Error("unreachable");
  assert.equal(result.path, path, result.message);
  assert.ok(result.message.startsWith(path), result.message);
  return result.message;
}

const turnWith = (events: unknown[], extra: Record<string, unknown> = {}) => ({
  status: "completed",
  events,
  ...extra,
});

Deno.test("validateTurn() builds a record with the user message first", () => {
  const record = valid(turnWith([{ type: "thinking", text: "hmm" }, say("Sunny.")]));
  assert.deepEqual(record.events, [
    { type: "message", role: "user", text: "What is the weather?" },
    { type: "thinking", text: "hmm" },
    { type: "message", role: "assistant", text: "Sunny." },
  ]);
  assert.equal(record.index, 2);
  assert.equal(record.session, 1);
  assert.equal(record.input, "What is the weather?");
  assert.equal(record.status, "completed");
  assert.equal(record.startedAt, 1000);
  assert.equal(record.endedAt, 1250);
  assert.equal("data" in record, false);
  assert.equal("usage" in record, false);
});

Deno.test("validateTurn() deep-freezes the record and copies the adapter's objects", () => {
  const input = { city: "Brooklyn" };
  const turn = turnWith([start("c1", "get_weather", input)], { data: { a: [1] } });
  const record = valid(turn);
  assert.ok(Object.isFrozen(record));
  assert.ok(Object.isFrozen(record.events));
  assert.ok(Object.isFrozen(record.events[1]));
  assert.ok(Object.isFrozen(record.toolCalls[0]!.input));
  assert.ok(Object.isFrozen(record.coverage));
  input.city = "Queens";
  assert.deepEqual(record.toolCalls[0]!.input, { city: "Brooklyn" });
  assert.equal(Object.isFrozen(input), false);
  assert.equal(Object.isFrozen(turn.events), false);
});

Deno.test("validateTurn() lists tool calls in start order with their outcome", () => {
  const record = valid(turnWith([
    start("a", "read", { path: "x" }),
    start("b", "write"),
    finish("b", "rejected"),
    start("c", "search"),
    finish("a", "completed", { text: "hi" }),
    start("d", "fail"),
    finish("d", "failed", { error: "boom" }),
  ]));
  assert.deepEqual(record.toolCalls, [
    {
      operationId: "a",
      name: "read",
      input: { path: "x" },
      status: "completed",
      output: { text: "hi" },
    },
    { operationId: "b", name: "write", input: {}, status: "rejected" },
    { operationId: "c", name: "search", input: {}, status: "pending" },
    { operationId: "d", name: "fail", input: {}, status: "failed", output: { error: "boom" } },
  ]);
});

Deno.test("validateTurn() takes the last non-blank assistant message", () => {
  assert.equal(valid(turnWith([say("first"), say("second"), say("  \n")])).message, "second");
  assert.equal(valid(turnWith([{ type: "thinking", text: "x" }])).message, "");
});

Deno.test("validateTurn() copies data and usage", () => {
  const record = valid(
    turnWith([], { data: { answer: 42 }, usage: { inputTokens: 3, requests: 1 } }),
  );
  assert.deepEqual(record.data, { answer: 42 });
  assert.deepEqual(record.usage, { inputTokens: 3, requests: 1 });
});

Deno.test("validateTurn() keeps a data value of null", () => {
  assert.equal(valid(turnWith([], { data: null })).data, null);
});

Deno.test("validateTurn() accepts a failed turn with an error event", () => {
  const record = valid({ status: "failed", events: [{ type: "error", message: "quota" }] });
  assert.equal(record.status, "failed");
});

Deno.test("validateTurn() lowers the declared coverage by the turn's coverage", () => {
  const declared = evidenceCoverage({ events: { status: "partial", reason: "stdout" } });
  const record = valid(
    turnWith([], {
      evidenceCoverage: {
        usage: { status: "unavailable", reason: "no usage line" },
        events: { status: "complete" },
      },
    }),
    { ...INFO, declared },
  );
  assert.deepEqual(record.coverage, {
    ...declared,
    usage: { status: "unavailable", reason: "no usage line" },
  });
});

Deno.test("validateTurn() treats undefined optional fields as absent", () => {
  const record = valid({
    status: "completed",
    events: [start("a"), { ...finish("a"), output: undefined }],
    data: undefined,
    usage: undefined,
    evidenceCoverage: undefined,
  });
  assert.equal("output" in record.toolCalls[0]!, false);
  assert.equal("data" in record, false);
});

Deno.test("validateTurn() rejects a value that is not a turn object", () => {
  invalidAt(null, "(turn)");
  invalidAt([], "(turn)");
});

Deno.test("validateTurn() rejects an unknown turn field", () => {
  invalidAt(turnWith([], { raw: {} }), "raw");
});

Deno.test("validateTurn() rejects the LATER status waiting", () => {
  invalidAt({ status: "waiting", events: [] }, "status");
  invalidAt({ events: [] }, "status");
});

Deno.test("validateTurn() rejects events that are not an array", () => {
  invalidAt({ status: "completed" }, "events");
  invalidAt({ status: "completed", events: {} }, "events");
});

Deno.test("validateTurn() rejects an event that is not an object", () => {
  invalidAt(turnWith([say("x"), "hello"]), "events[1]");
});

Deno.test("validateTurn() rejects LATER and unknown event types", () => {
  invalidAt(turnWith([{ type: "skill.loaded", name: "x" }]), "events[0].type");
  invalidAt(turnWith([say("ok"), { type: "compaction" }]), "events[1].type");
  invalidAt(turnWith([{ type: "input.requested" }]), "events[0].type");
});

Deno.test("validateTurn() rejects a user message from the adapter", () => {
  const message = invalidAt(
    turnWith([{ type: "message", role: "user", text: "hi" }]),
    "events[0].role",
  );
  assert.match(message, /niceeval writes the user messages/);
});

Deno.test("validateTurn() rejects a message with an unknown role or a non-string text", () => {
  invalidAt(turnWith([{ type: "message", role: "system", text: "x" }]), "events[0].role");
  invalidAt(turnWith([{ type: "message", role: "assistant", text: 3 }]), "events[0].text");
});

Deno.test("validateTurn() rejects thinking and error events without text", () => {
  invalidAt(turnWith([{ type: "thinking" }]), "events[0].text");
  invalidAt(turnWith([{ type: "error", text: "x" }]), "events[0].text");
  invalidAt(turnWith([{ type: "error" }]), "events[0].message");
});

Deno.test("validateTurn() rejects an unknown event field", () => {
  invalidAt(turnWith([{ ...say("x"), id: "m1" }]), "events[0].id");
});

Deno.test("validateTurn() rejects an empty or missing operationId", () => {
  invalidAt(turnWith([start("")]), "events[0].operationId");
  invalidAt(turnWith([start("a"), { ...finish("a"), operationId: 7 }]), "events[1].operationId");
});

Deno.test("validateTurn() rejects a second start with the same id", () => {
  const message = invalidAt(turnWith([start("a"), say("x"), start("a")]), "events[2].operationId");
  assert.match(message, /events\[0\]/);
});

Deno.test("validateTurn() rejects a finish without an earlier start", () => {
  invalidAt(turnWith([finish("a"), start("a")]), "events[0].operationId");
});

Deno.test("validateTurn() rejects a second finish of the same operation", () => {
  invalidAt(turnWith([start("a"), finish("a"), finish("a", "failed")]), "events[2].operationId");
});

Deno.test("validateTurn() rejects LATER operation kinds", () => {
  const command = { ...start("a"), operation: { kind: "command", name: "ls", input: {} } };
  invalidAt(turnWith([command]), "events[0].operation.kind");
  invalidAt(turnWith([start("a"), { ...finish("a"), kind: "subagent" }]), "events[1].kind");
});

Deno.test("validateTurn() rejects a tool start without a name or input", () => {
  invalidAt(turnWith([start("a", "")]), "events[0].operation.name");
  const noInput = { ...start("a"), operation: { kind: "tool", name: "x" } };
  invalidAt(turnWith([noInput]), "events[0].operation.input");
  invalidAt(turnWith([{ ...start("a"), operation: null }]), "events[0].operation");
});

Deno.test("validateTurn() rejects an unknown finish status", () => {
  invalidAt(turnWith([start("a"), finish("a", "denied")]), "events[1].status");
});

Deno.test("validateTurn() rejects non-JSON input, output and data with the inner path", () => {
  invalidAt(turnWith([start("a", "x", { when: new Date(0) })]), "events[0].operation.input.when");
  invalidAt(turnWith([start("a"), finish("a", "completed", [1, NaN])]), "events[1].output[1]");
  invalidAt(turnWith([], { data: { f: () => 1 } }), "data.f");
  invalidAt(turnWith([], { data: 10n }), "data");
});

Deno.test("validateTurn() rejects invalid usage with its field path", () => {
  invalidAt(turnWith([], { usage: { inputTokens: -1 } }), "usage.inputTokens");
  invalidAt(turnWith([], { usage: { costUSD: NaN } }), "usage.costUSD");
  invalidAt(turnWith([], { usage: { tokens: 3 } }), "usage.tokens");
  invalidAt(turnWith([], { usage: 5 }), "usage");
});

Deno.test("validateTurn() rejects malformed coverage entries", () => {
  invalidAt(
    turnWith([], { evidenceCoverage: { usage: { status: "unavailable" } } }),
    "evidenceCoverage.usage.reason",
  );
  invalidAt(
    turnWith([], { evidenceCoverage: { tools: { status: "complete" } } }),
    "evidenceCoverage.tools",
  );
  invalidAt(
    turnWith([], { evidenceCoverage: { usage: { status: "none" } } }),
    "evidenceCoverage.usage.status",
  );
});

Deno.test("validateTurn() reports the first violation in event order", () => {
  invalidAt(turnWith([say("ok"), start(""), { type: "bogus" }]), "events[1].operationId");
});
