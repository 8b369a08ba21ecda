import assert from "node:assert/strict";
import { AssertionAuthoringError } from "../../src/_shared/errors.ts";
import { includes, toolMatch } from "../../src/expect/mod.ts";
import { coverage, recorder, scopedOne, snapshot, turn } from "./_turns.ts";

const partialActions = coverage({ actions: "partial" });

function isCode(code: string) {
  return (e: unknown) => e instanceof AssertionAuthoringError && e.code === code;
}

Deno.test("succeeded() returns matched when every turn completed", async () => {
  const entry = await scopedOne(snapshot([turn(), turn({ index: 2 })]), (s) => s.succeeded());
  assert.equal(entry.result, "matched");
  assert.equal(entry.criterion, "turn succeeded");
  assert.equal(entry.matcher, "succeeded");
});

Deno.test("succeeded() returns mismatched with the failed status and the last error text", async () => {
  const failed = turn({ index: 2, status: "failed", error: "deterministic failure" });
  const entry = await scopedOne(snapshot([turn(), failed], "session"), (s) => s.succeeded());
  assert.equal(entry.result, "mismatched");
  assert.equal(entry.criterion, "session succeeded");
  assert.equal(entry.expected, "completed");
  assert.equal(entry.received, "failed");
  assert.equal(entry.reason, "deterministic failure");
});

Deno.test("succeeded() returns mismatched with reason no-turns when the scope has no turn", async () => {
  const entry = await scopedOne(snapshot([], "attempt"), (s) => s.succeeded());
  assert.equal(entry.result, "mismatched");
  assert.equal(entry.reason, "no-turns");
  assert.equal(entry.criterion, "succeeded");
});

Deno.test("succeeded() returns unavailable when status coverage is not complete", async () => {
  const snap = snapshot([turn({ coverage: coverage({ status: "partial" }) })]);
  const entry = await scopedOne(snap, (s) => s.succeeded());
  assert.equal(entry.result, "unavailable");
  assert.equal(entry.reason, "source-unavailable");
  const failed = snapshot([
    turn({ status: "failed", coverage: coverage({ status: "unavailable" }) }),
  ]);
  assert.equal((await scopedOne(failed, (s) => s.succeeded())).result, "mismatched");
});

Deno.test("calledTool() with a string means toolMatch(name) and defaults to at least one", async () => {
  const snap = snapshot([turn({ tools: [{ name: "get_weather" }, { name: "get_weather" }] })]);
  const entry = await scopedOne(snap, (s) => s.calledTool("get_weather"));
  assert.equal(entry.result, "matched");
  assert.equal(entry.criterion, "turn calledTool get_weather");
  assert.equal((await scopedOne(snap, (s) => s.calledTool("other"))).result, "mismatched");
});

Deno.test("calledTool() with an exact count is mismatched as soon as k > n, whatever the coverage", async () => {
  const snap = snapshot([
    turn({ tools: [{ name: "a" }, { name: "a" }], coverage: partialActions }),
  ]);
  const entry = await scopedOne(snap, (s) => s.calledTool("a", { count: 1 }));
  assert.equal(entry.result, "mismatched");
  assert.equal(entry.criterion, "turn calledTool a (exactly 1)");
});

Deno.test("calledTool() with an exact count is matched only when nothing is unseen", async () => {
  const tools = [{ name: "a" }, { name: "b" }];
  const complete = snapshot([turn({ tools })]);
  assert.equal(
    (await scopedOne(complete, (s) => s.calledTool("a", { count: 1 }))).result,
    "matched",
  );
  const partial = snapshot([turn({ tools, coverage: partialActions })]);
  const entry = await scopedOne(partial, (s) => s.calledTool("a", { count: 1 }));
  assert.equal(entry.result, "unavailable");
  assert.equal(entry.reason, "source-unavailable");
});

Deno.test("calledTool() with an exact count is mismatched when k + u < n and nothing is unseen", async () => {
  const snap = snapshot([turn({ tools: [{ name: "a" }] })]);
  assert.equal(
    (await scopedOne(snap, (s) => s.calledTool("a", { count: 2 }))).result,
    "mismatched",
  );
  const partial = snapshot([turn({ tools: [{ name: "a" }], coverage: partialActions })]);
  assert.equal(
    (await scopedOne(partial, (s) => s.calledTool("a", { count: 2 }))).result,
    "unavailable",
  );
});

Deno.test("calledTool() counts unavailable occurrences as possible matches", async () => {
  // Finished without output: the output condition is unavailable for each occurrence.
  const match = toolMatch("a", { output: { ok: true } });
  const snap = snapshot([turn({ tools: [{ name: "a", output: { ok: true } }, { name: "a" }] })]);
  assert.equal(
    (await scopedOne(snap, (s) => s.calledTool(match, { count: 1 }))).result,
    "unavailable",
  );
  assert.equal(
    (await scopedOne(snap, (s) => s.calledTool(match, { count: 3 }))).result,
    "mismatched",
  );
  assert.equal(
    (await scopedOne(snap, (s) => s.calledTool(match, { count: 2 }))).result,
    "unavailable",
  );
  assert.equal(
    (await scopedOne(snap, (s) => s.calledTool(match, { count: { atLeast: 1 } }))).result,
    "matched",
  );
});

Deno.test("calledTool() with atLeast is matched by positive evidence whatever the coverage", async () => {
  const snap = snapshot([
    turn({ tools: [{ name: "a" }, { name: "a" }], coverage: partialActions }),
  ]);
  const entry = await scopedOne(snap, (s) => s.calledTool("a", { count: { atLeast: 2 } }));
  assert.equal(entry.result, "matched");
  assert.equal(entry.criterion, "turn calledTool a (at least 2)");
  const more = await scopedOne(snap, (s) => s.calledTool("a", { count: { atLeast: 3 } }));
  assert.equal(more.result, "unavailable");
});

Deno.test("calledTool() throws an authoring error for count 0 and invalid counts", () => {
  const scoped = recorder().scoped(() => snapshot([turn()]));
  assert.throws(() => scoped.calledTool("a", { count: 0 }), isCode("invalid-value"));
  for (const count of [-1, 1.5, { atLeast: 0 }, "2", { atLeast: 1, most: 2 }]) {
    assert.throws(() => scoped.calledTool("a", { count: count as never }), isCode("invalid-value"));
  }
});

Deno.test("calledTool() throws match-domain-mismatch for a value match", () => {
  const scoped = recorder().scoped(() => snapshot([turn()]));
  assert.throws(() => scoped.calledTool(includes("a") as never), isCode("match-domain-mismatch"));
  assert.throws(() => scoped.calledTool({ kind: "boolean" } as never), isCode("not-a-match"));
});

Deno.test("notCalledTool() is mismatched on a match and unavailable when actions are partial", async () => {
  const snap = snapshot([turn({ tools: [{ name: "delete_file" }] })]);
  assert.equal((await scopedOne(snap, (s) => s.notCalledTool("delete_file"))).result, "mismatched");
  assert.equal((await scopedOne(snap, (s) => s.notCalledTool("other"))).result, "matched");
  const partial = snapshot([turn({ coverage: partialActions })]);
  assert.equal((await scopedOne(partial, (s) => s.notCalledTool("other"))).result, "unavailable");
});

Deno.test("notCalledTool() reads the worst actions coverage over the turns in scope", async () => {
  const snap = snapshot([
    turn(),
    turn({ index: 2, coverage: coverage({ actions: "unavailable" }) }),
  ], "session");
  const entry = await scopedOne(snap, (s) => s.notCalledTool("x"));
  assert.equal(entry.result, "unavailable");
  assert.equal(entry.criterion, "session notCalledTool x");
});

Deno.test("usedNoTools() uses the declared coverage when the scope has no turn", async () => {
  assert.equal(
    (await scopedOne(snapshot([], "attempt"), (s) => s.usedNoTools())).result,
    "matched",
  );
  const declared = snapshot([], "attempt", partialActions);
  assert.equal((await scopedOne(declared, (s) => s.usedNoTools())).result, "unavailable");
  const used = snapshot([turn({ tools: [{ name: "a" }] })]);
  assert.equal((await scopedOne(used, (s) => s.usedNoTools())).result, "mismatched");
});

Deno.test("maxToolCalls() is mismatched above max whatever the coverage", async () => {
  const tools = [{ name: "a" }, { name: "b" }, { name: "c" }];
  const partial = snapshot([turn({ tools, coverage: partialActions })]);
  const entry = await scopedOne(partial, (s) => s.maxToolCalls(2));
  assert.equal(entry.result, "mismatched");
  assert.equal(entry.received, 3);
  assert.equal((await scopedOne(partial, (s) => s.maxToolCalls(3))).result, "unavailable");
  assert.equal(
    (await scopedOne(snapshot([turn({ tools })]), (s) => s.maxToolCalls(3))).result,
    "matched",
  );
});

Deno.test("maxToolCalls() throws invalid-value for a negative or fractional max", () => {
  const scoped = recorder().scoped(() => snapshot([]));
  assert.throws(() => scoped.maxToolCalls(-1), isCode("invalid-value"));
  assert.throws(() => scoped.maxToolCalls(1.5), isCode("invalid-value"));
});

Deno.test("noFailedActions() is mismatched on a failed call and accepts rejected ones", async () => {
  const failed = snapshot([turn({ tools: [{ name: "a", status: "failed" }] })]);
  assert.equal((await scopedOne(failed, (s) => s.noFailedActions())).result, "mismatched");
  const rejected = snapshot([turn({ tools: [{ name: "a", status: "rejected" }] })]);
  assert.equal((await scopedOne(rejected, (s) => s.noFailedActions())).result, "matched");
});

Deno.test("noFailedActions() is unavailable with a pending call or partial actions", async () => {
  const pending = snapshot([turn({ tools: [{ name: "a", status: "pending" }] })]);
  assert.equal((await scopedOne(pending, (s) => s.noFailedActions())).result, "unavailable");
  const partial = snapshot([turn({ coverage: partialActions })]);
  assert.equal((await scopedOne(partial, (s) => s.noFailedActions())).result, "unavailable");
});

Deno.test("maxTokens() sums input and output tokens over the turns in scope", async () => {
  const snap = snapshot([
    turn({ usage: { inputTokens: 10, outputTokens: 5 } }),
    turn({ index: 2, usage: { inputTokens: 20, outputTokens: 5 } }),
  ], "session");
  const entry = await scopedOne(snap, (s) => s.maxTokens(40));
  assert.equal(entry.result, "matched");
  assert.equal(entry.received, 40);
  assert.equal((await scopedOne(snap, (s) => s.maxTokens(39))).result, "mismatched");
});

Deno.test("maxTokens() is mismatched on a known partial sum above max despite a missing field", async () => {
  const snap = snapshot([turn({ usage: { inputTokens: 50 } }), turn({ index: 2 })]);
  assert.equal((await scopedOne(snap, (s) => s.maxTokens(40))).result, "mismatched");
  const entry = await scopedOne(snap, (s) => s.maxTokens(60));
  assert.equal(entry.result, "unavailable");
  assert.equal(entry.reason, "source-unavailable");
});

Deno.test("maxTokens() is unavailable when usage coverage is not complete", async () => {
  const usage = { inputTokens: 1, outputTokens: 1 };
  const snap = snapshot([turn({ usage, coverage: coverage({ usage: "partial" }) })]);
  assert.equal((await scopedOne(snap, (s) => s.maxTokens(10))).result, "unavailable");
});

Deno.test("maxCost() compares the injected estimate with the bound", async () => {
  const snap = snapshot([turn({ usage: { inputTokens: 1, outputTokens: 1 } })]);
  const over = { estimateCost: () => ({ usd: 0.6, complete: false }) };
  assert.equal((await scopedOne(snap, (s) => s.maxCost(0.5), over)).result, "mismatched");
  const partial = { estimateCost: () => ({ usd: 0.1, complete: false }) };
  assert.equal((await scopedOne(snap, (s) => s.maxCost(0.5), partial)).result, "unavailable");
  const ok = { estimateCost: () => ({ usd: 0.5, complete: true }) };
  const entry = await scopedOne(snap, (s) => s.maxCost(0.5), ok);
  assert.equal(entry.result, "matched");
  assert.equal(entry.criterion, "turn maxCost 0.5");
});

Deno.test("maxCost() passes the turns in scope to the estimator", async () => {
  const turns = [turn(), turn({ index: 2 })];
  let seen = 0;
  const options = {
    estimateCost: (t: readonly unknown[]) => {
      seen = t.length;
      return { usd: 0, complete: true };
    },
  };
  await scopedOne(snapshot(turns, "session"), (s) => s.maxCost(1), options);
  assert.equal(seen, 2);
});

Deno.test("maxCost() throws invalid-value for a negative or infinite bound", () => {
  const scoped = recorder().scoped(() => snapshot([]));
  assert.throws(() => scoped.maxCost(-0.01), isCode("invalid-value"));
  assert.throws(() => scoped.maxCost(Infinity), isCode("invalid-value"));
});
