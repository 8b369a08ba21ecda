import assert from "node:assert/strict";
import { sumUsage, validateUsage } from "../../src/agents/mod.ts";

Deno.test("validateUsage() accepts every field with valid values", () => {
  assert.equal(
    validateUsage({
      inputTokens: 10,
      outputTokens: 0,
      cacheReadTokens: 2,
      cacheCreationTokens: 1,
      reasoningTokens: 3,
      requests: 1,
      costUSD: 0.0125,
    }),
    undefined,
  );
});

Deno.test("validateUsage() treats undefined fields as absent", () => {
  assert.equal(validateUsage({ inputTokens: undefined, notAField: undefined }), undefined);
});

Deno.test("validateUsage() rejects a negative token count", () => {
  assert.equal(validateUsage({ inputTokens: -1 })?.path, "usage.inputTokens");
});

Deno.test("validateUsage() rejects a fractional token count", () => {
  assert.equal(validateUsage({ outputTokens: 1.5 })?.path, "usage.outputTokens");
});

Deno.test("validateUsage() rejects a non-integer requests count", () => {
  assert.equal(validateUsage({ requests: "1" })?.path, "usage.requests");
});

Deno.test("validateUsage() rejects a non-finite or negative cost", () => {
  assert.equal(validateUsage({ costUSD: Infinity })?.path, "usage.costUSD");
  assert.equal(validateUsage({ costUSD: -0.5 })?.path, "usage.costUSD");
});

Deno.test("validateUsage() rejects an unknown field with a suggestion", () => {
  const problem = validateUsage({ inputToken: 3 });
  assert.equal(problem?.path, "usage.inputToken");
  assert.match(problem!.message, /did you mean "inputTokens"/);
});

Deno.test("validateUsage() rejects a non-object", () => {
  assert.equal(validateUsage([1], "turn.usage")?.path, "turn.usage");
});

Deno.test("sumUsage() keeps a field only when every turn reported it", () => {
  const sum = sumUsage([
    { inputTokens: 3, outputTokens: 1, costUSD: 0.5 },
    { inputTokens: 2, outputTokens: 4 },
  ]);
  assert.deepEqual(sum, { inputTokens: 5, outputTokens: 5 });
});

Deno.test("sumUsage() drops every field when one turn reported no usage", () => {
  assert.deepEqual(sumUsage([{ inputTokens: 3 }, undefined]), {});
});

Deno.test("sumUsage() returns an empty frozen usage for an empty scope", () => {
  const sum = sumUsage([]);
  assert.deepEqual(sum, {});
  assert.ok(Object.isFrozen(sum));
});

Deno.test("sumUsage() keeps zero counts", () => {
  assert.deepEqual(sumUsage([{ requests: 0 }, { requests: 0 }]), { requests: 0 });
});
