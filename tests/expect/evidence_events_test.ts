import assert from "node:assert/strict";
import { AssertionAuthoringError } from "../../src/_shared/errors.ts";
import { eventMatch, toolMatch } from "../../src/expect/mod.ts";
import { coverage, recorder, scopedOne, snapshot, turn } from "./_turns.ts";

const assistant = (text: string) => eventMatch("message", { role: "assistant", text });

function isCode(code: string) {
  return (e: unknown) => e instanceof AssertionAuthoringError && e.code === code;
}

Deno.test("event() counts matching events with an exact count", async () => {
  const snap = snapshot(
    [turn({ text: "sunny" }), turn({ index: 2, text: "sunny again" })],
    "session",
  );
  const entry = await scopedOne(snap, (s) => s.event(assistant("sunny"), { count: 2 }));
  assert.equal(entry.result, "matched");
  assert.equal(
    entry.criterion,
    'session event message { role: "assistant", text: includes("sunny") } (exactly 2)',
  );
  assert.equal(
    (await scopedOne(snap, (s) => s.event(assistant("sunny"), { count: 1 }))).result,
    "mismatched",
  );
});

Deno.test("event() on messages is undecided when messages coverage is partial", async () => {
  const snap = snapshot([turn({ text: "rain", coverage: coverage({ messages: "partial" }) })]);
  const entry = await scopedOne(snap, (s) => s.event(assistant("sunny")));
  assert.equal(entry.result, "unavailable");
  assert.equal(entry.reason, "source-unavailable");
  const found = snapshot([turn({ text: "sunny", coverage: coverage({ messages: "partial" }) })]);
  assert.equal((await scopedOne(found, (s) => s.event(assistant("sunny")))).result, "matched");
});

Deno.test("notEvent() on messages ignores actions coverage", async () => {
  const snap = snapshot([turn({ text: "fine", coverage: coverage({ actions: "unavailable" }) })]);
  assert.equal((await scopedOne(snap, (s) => s.notEvent(assistant("error")))).result, "matched");
  const events = snapshot([turn({ text: "fine", coverage: coverage({ events: "partial" }) })]);
  assert.equal(
    (await scopedOne(events, (s) => s.notEvent(assistant("error")))).result,
    "unavailable",
  );
});

Deno.test("notEvent() on operations depends on events and actions coverage", async () => {
  const started = eventMatch("operation.started", { tool: toolMatch("rm") });
  const snap = snapshot([turn({ coverage: coverage({ actions: "partial" }) })]);
  assert.equal((await scopedOne(snap, (s) => s.notEvent(started))).result, "unavailable");
  const messages = snapshot([turn({ coverage: coverage({ messages: "unavailable" }) })]);
  assert.equal((await scopedOne(messages, (s) => s.notEvent(started))).result, "matched");
  const used = snapshot([turn({ tools: [{ name: "rm" }] })]);
  assert.equal((await scopedOne(used, (s) => s.notEvent(started))).result, "mismatched");
});

Deno.test("event() throws an authoring error for count 0 and a tool match", () => {
  const scoped = recorder().scoped(() => snapshot([turn()]));
  assert.throws(() => scoped.event(assistant("x"), { count: 0 }), isCode("invalid-value"));
  assert.throws(() => scoped.event(toolMatch("x") as never), isCode("match-domain-mismatch"));
});

Deno.test("toolOrder() is matched when the matches occur as an ordered subsequence", async () => {
  const tools = [{ name: "search" }, { name: "other" }, { name: "fetch" }, { name: "search" }];
  const snap = snapshot([turn({ tools, coverage: coverage({ actions: "partial" }) })]);
  const entry = await scopedOne(
    snap,
    (s) => s.toolOrder([toolMatch("search"), toolMatch("fetch")]),
  );
  assert.equal(entry.result, "matched");
  assert.equal(entry.criterion, "turn toolOrder search → fetch");
});

Deno.test("toolOrder() is mismatched only when not found with complete actions", async () => {
  const tools = [{ name: "fetch" }, { name: "search" }];
  const order = [toolMatch("search"), toolMatch("fetch")] as const;
  const complete = snapshot([turn({ tools })]);
  const entry = await scopedOne(complete, (s) => s.toolOrder(order));
  assert.equal(entry.result, "mismatched");
  assert.equal(entry.expected, "search → fetch");
  assert.equal(entry.received, "fetch → search");
  const partial = snapshot([turn({ tools, coverage: coverage({ actions: "partial" }) })]);
  assert.equal((await scopedOne(partial, (s) => s.toolOrder(order))).result, "unavailable");
});

Deno.test("toolOrder() does not use one occurrence for two steps", async () => {
  const snap = snapshot([turn({ tools: [{ name: "a" }] })]);
  const entry = await scopedOne(snap, (s) => s.toolOrder([toolMatch("a"), toolMatch("a")]));
  assert.equal(entry.result, "mismatched");
});

Deno.test("toolOrder() is unavailable when an occurrence is undecidable", async () => {
  const done = toolMatch("a", { output: { ok: true } });
  const snap = snapshot([turn({ tools: [{ name: "b" }, { name: "a" }] })]);
  const entry = await scopedOne(snap, (s) => s.toolOrder([toolMatch("b"), done]));
  assert.equal(entry.result, "unavailable");
});

Deno.test("toolOrder() spans the turns of a session in order", async () => {
  const snap = snapshot([
    turn({ tools: [{ name: "a" }] }),
    turn({ index: 2, tools: [{ name: "b" }] }),
  ], "session");
  assert.equal(
    (await scopedOne(snap, (s) => s.toolOrder([toolMatch("a"), toolMatch("b")]))).result,
    "matched",
  );
  assert.equal(
    (await scopedOne(snap, (s) => s.toolOrder([toolMatch("b"), toolMatch("a")]))).result,
    "mismatched",
  );
});

Deno.test("toolOrder() throws invalid-value for fewer than two matches", () => {
  const scoped = recorder().scoped(() => snapshot([turn()]));
  assert.throws(() => scoped.toolOrder([toolMatch("a")] as never), isCode("invalid-value"));
  assert.throws(() => scoped.toolOrder("a" as never), isCode("invalid-value"));
});

Deno.test("eventOrder() finds events in stream order", async () => {
  const snap = snapshot([turn({ input: "go", tools: [{ name: "search" }], text: "done" })]);
  const order = [
    eventMatch("message", { role: "user" }),
    eventMatch("operation.finished", { tool: toolMatch("search") }),
    assistant("done"),
  ] as const;
  assert.equal((await scopedOne(snap, (s) => s.eventOrder(order))).result, "matched");
  const reversed = [assistant("done"), eventMatch("message", { role: "user" })] as const;
  const entry = await scopedOne(snap, (s) => s.eventOrder(reversed));
  assert.equal(entry.result, "mismatched");
});

Deno.test("eventOrder() is unavailable when not found and a channel is partial", async () => {
  const snap = snapshot([turn({ text: "done", coverage: coverage({ events: "partial" }) })]);
  const order = [assistant("done"), eventMatch("message", { role: "user" })] as const;
  assert.equal((await scopedOne(snap, (s) => s.eventOrder(order))).result, "unavailable");
});
