import assert from "node:assert/strict";
import { createAgentSession, createSessionSlot } from "../../src/agents/mod.ts";

Deno.test("createAgentSession() starts with no id and empty slots", () => {
  const session = createAgentSession();
  assert.equal(session.id, undefined);
  assert.equal(session.get(createSessionSlot<number>("n")), undefined);
});

Deno.test("createAgentSession() capture keeps the first non-undefined id", () => {
  const session = createAgentSession();
  session.capture(undefined);
  assert.equal(session.id, undefined);
  session.capture("thread-1");
  session.capture("thread-2");
  session.capture(undefined);
  assert.equal(session.id, "thread-1");
});

Deno.test("createAgentSession() capture rejects a non-string id", () => {
  const session = createAgentSession();
  assert.throws(() => session.capture(42 as unknown as string), TypeError);
  assert.equal(session.id, undefined);
});

Deno.test("createAgentSession() get and set round-trip a slot value", () => {
  const session = createAgentSession();
  const history = createSessionSlot<string[]>("history");
  session.set(history, ["a"]);
  assert.deepEqual(session.get(history), ["a"]);
  session.set(history, ["a", "b"]);
  assert.deepEqual(session.get(history), ["a", "b"]);
});

Deno.test("createAgentSession() take reads and clears a slot", () => {
  const session = createAgentSession();
  const slot = createSessionSlot<number>("n");
  session.set(slot, 7);
  assert.equal(session.take(slot), 7);
  assert.equal(session.take(slot), undefined);
  assert.equal(session.get(slot), undefined);
});

Deno.test("createSessionSlot() makes slots distinct by identity, not by name", () => {
  const session = createAgentSession();
  const first = createSessionSlot<number>("same");
  const second = createSessionSlot<number>("same");
  assert.notEqual(first, second);
  session.set(first, 1);
  assert.equal(session.get(second), undefined);
  session.set(second, 2);
  assert.equal(session.get(first), 1);
  assert.equal(first.name, "same");
  assert.ok(Object.isFrozen(first));
});

Deno.test("createAgentSession() keeps separate sessions independent", () => {
  const slot = createSessionSlot<number>("n");
  const a = createAgentSession();
  const b = createAgentSession();
  a.set(slot, 1);
  a.capture("a");
  assert.equal(b.get(slot), undefined);
  assert.equal(b.id, undefined);
});

Deno.test("createSessionSlot() rejects a non-string name", () => {
  assert.throws(() => createSessionSlot(3 as unknown as string), TypeError);
});
