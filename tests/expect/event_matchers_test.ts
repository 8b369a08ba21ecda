import assert from "node:assert/strict";
import { AssertionAuthoringError } from "../../src/_shared/errors.ts";
import { eventMatch, includes, toolMatch } from "../../src/expect/mod.ts";
import { scopedOne, snapshot, turn } from "./_turns.ts";

Deno.test("eventMatch() selects messages by role and text", async () => {
  const snap = snapshot([turn({ input: "weather?", text: "It is sunny" })]);
  const assistant = eventMatch("message", { role: "assistant", text: "sunny" });
  assert.equal((await scopedOne(snap, (s) => s.event(assistant))).result, "matched");
  const user = eventMatch("message", { role: "user", text: includes("weather") });
  assert.equal((await scopedOne(snap, (s) => s.event(user))).result, "matched");
  const wrong = eventMatch("message", { role: "user", text: "sunny" });
  assert.equal((await scopedOne(snap, (s) => s.event(wrong))).result, "mismatched");
  assert.equal(
    assistant.name,
    'eventMatch("message", { role: "assistant", text: includes("sunny") })',
  );
});

Deno.test("eventMatch() evaluates a tool match on the occurrence of an operation event", async () => {
  const snap = snapshot([
    turn({ tools: [{ name: "a", output: 1 }, { name: "b", status: "failed" }] }),
  ]);
  const started = eventMatch("operation.started", { tool: toolMatch("b", { status: "failed" }) });
  assert.equal((await scopedOne(snap, (s) => s.event(started, { count: 1 }))).result, "matched");
  const finished = eventMatch("operation.finished", { tool: toolMatch("a") });
  assert.equal((await scopedOne(snap, (s) => s.event(finished, { count: 1 }))).result, "matched");
  assert.equal(
    (await scopedOne(snap, (s) => s.event(eventMatch("operation.started"), { count: 2 }))).result,
    "matched",
  );
});

Deno.test("eventMatch() throws a TypeError for an event type that is not selectable", () => {
  assert.throws(() => eventMatch("thinking" as never), TypeError);
  assert.throws(() => eventMatch("message", { tool: toolMatch("a") } as never), TypeError);
});

Deno.test("eventMatch() throws match-domain-mismatch for a value match as tool", () => {
  assert.throws(
    () => eventMatch("operation.started", { tool: includes("a") as never }),
    (e: unknown) => e instanceof AssertionAuthoringError && e.code === "match-domain-mismatch",
  );
});
