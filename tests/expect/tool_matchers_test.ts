import assert from "node:assert/strict";
import { AssertionAuthoringError } from "../../src/_shared/errors.ts";
import { jsonMatch, satisfies, type ToolMatch, toolMatch } from "../../src/expect/mod.ts";
import { coverage, scopedOne, snapshot, type ToolSpec, turn } from "./_turns.ts";

/** Result of `calledTool(match)` on one turn holding `tool`. */
async function onTool(
  match: ToolMatch,
  tool: ToolSpec,
  actions: "complete" | "partial" = "complete",
) {
  const cov = actions === "complete" ? coverage() : coverage({ actions: "partial" });
  const snap = snapshot([turn({ tools: [tool], coverage: cov })]);
  return (await scopedOne(snap, (s) => s.calledTool(match))).result;
}

Deno.test("toolMatch() matches the exact name or a RegExp", async () => {
  assert.equal(await onTool(toolMatch("get_weather"), { name: "get_weather" }), "matched");
  assert.equal(await onTool(toolMatch("get"), { name: "get_weather" }), "mismatched");
  assert.equal(await onTool(toolMatch(/^get_/g), { name: "get_weather" }), "matched");
  assert.equal(await onTool(toolMatch(/^get_/g), { name: "get_weather" }), "matched");
});

Deno.test("toolMatch() wraps a plain JSON pattern input in jsonMatch", async () => {
  const match = toolMatch("get_weather", { input: { city: "Brooklyn" } });
  assert.equal(
    await onTool(match, { name: "get_weather", input: { city: "Brooklyn", d: 1 } }),
    "matched",
  );
  assert.equal(
    await onTool(match, { name: "get_weather", input: { city: "Queens" } }),
    "mismatched",
  );
  assert.equal(match.name, 'toolMatch("get_weather", { input: jsonMatch({"city":"Brooklyn"}) })');
});

Deno.test("toolMatch() accepts an explicit jsonMatch as output condition", async () => {
  const match = toolMatch("a", { output: jsonMatch({ sky: /sun/ }) });
  assert.equal(await onTool(match, { name: "a", output: { sky: "sunny" } }), "matched");
});

Deno.test("toolMatch() accepts a value match as input condition", async () => {
  const match = toolMatch("search", {
    input: satisfies("has q", (v: unknown) => typeof v === "object"),
  });
  assert.equal(await onTool(match, { name: "search", input: { q: "x" } }), "matched");
  assert.equal(await onTool(match, { name: "search", input: "x" }), "mismatched");
});

Deno.test("toolMatch() checks the status of a finished occurrence", async () => {
  const failed = toolMatch({ status: "failed" });
  assert.equal(await onTool(failed, { name: "a", status: "failed" }), "matched");
  assert.equal(await onTool(failed, { name: "a", status: "rejected" }), "mismatched");
  assert.equal(failed.name, 'toolMatch({ status: "failed" })');
});

Deno.test("toolMatch() decides a pending occurrence's status only when actions are complete", async () => {
  const completed = toolMatch("a", { status: "completed" });
  assert.equal(await onTool(completed, { name: "a", status: "pending" }), "mismatched");
  const snap = snapshot([turn({ tools: [{ name: "a", status: "pending" }] })]);
  const entry = await scopedOne(snap, (s) => s.notCalledTool(completed));
  assert.equal(entry.result, "matched");
  const partial = snapshot([
    turn({ tools: [{ name: "a", status: "pending" }], coverage: coverage({ actions: "partial" }) }),
  ]);
  assert.equal((await scopedOne(partial, (s) => s.notCalledTool(completed))).result, "unavailable");
  assert.equal(
    await onTool(toolMatch("a", { status: "pending" }), { name: "a", status: "pending" }),
    "matched",
  );
});

Deno.test("toolMatch() treats an output condition on a pending occurrence like its status", async () => {
  const match = toolMatch("a", { output: { sky: "sunny" } });
  const snap = snapshot([turn({ tools: [{ name: "a", status: "pending" }] })]);
  assert.equal((await scopedOne(snap, (s) => s.notCalledTool(match))).result, "matched");
});

Deno.test("toolMatch() makes an output condition unavailable when a finished occurrence has no output", async () => {
  const match = toolMatch("a", { output: { sky: "sunny" } });
  assert.equal(await onTool(match, { name: "a" }), "unavailable");
  assert.equal(await onTool(match, { name: "a", output: { sky: "sunny" } }), "matched");
  assert.equal(await onTool(match, { name: "a", output: { sky: "grey" } }), "mismatched");
});

Deno.test("toolMatch() decides the name and input of a pending occurrence", async () => {
  const match = toolMatch("a", { input: { q: 1 }, output: {} });
  const snap = snapshot([
    turn({
      tools: [{ name: "a", input: { q: 2 }, status: "pending" }],
      coverage: coverage({ actions: "partial" }),
    }),
  ]);
  // The input differs, so the occurrence is a known non-match even with partial actions.
  const entry = await scopedOne(snap, (s) => s.calledTool(match, { count: 2 }));
  assert.equal(entry.result, "unavailable");
  const complete = snapshot([turn({ tools: [{ name: "a", input: { q: 2 }, status: "pending" }] })]);
  assert.equal((await scopedOne(complete, (s) => s.calledTool(match))).result, "mismatched");
});

Deno.test("toolMatch() throws match-domain-mismatch for a tool match as input condition", () => {
  assert.throws(
    () => toolMatch("a", { input: toolMatch("b") as never }),
    (e: unknown) => e instanceof AssertionAuthoringError && e.code === "match-domain-mismatch",
  );
});

Deno.test("toolMatch() throws a TypeError for an unknown condition or status", () => {
  assert.throws(() => toolMatch("a", { name: "b" } as never), TypeError);
  assert.throws(() => toolMatch("a", { status: "done" } as never), TypeError);
  assert.throws(() => toolMatch(5 as never, {}), TypeError);
});
