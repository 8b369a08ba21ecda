import assert from "node:assert/strict";
import {
  estimateCost,
  estimateTurnCost,
  lookupPrice,
  type PricingTable,
} from "../../src/expect/mod.ts";

const pricing: PricingTable = {
  "acme/*": { inputPerMTok: 1, outputPerMTok: 2 },
  "acme/big/*": { inputPerMTok: 10, outputPerMTok: 20 },
  "acme/exact": { inputPerMTok: 3, outputPerMTok: 4 },
};

Deno.test("lookupPrice() prefers the exact key over patterns", () => {
  assert.equal(lookupPrice("acme/exact", pricing)?.inputPerMTok, 3);
});

Deno.test("lookupPrice() uses the longest matching prefix pattern", () => {
  assert.equal(lookupPrice("acme/big/m2", pricing)?.inputPerMTok, 10);
  assert.equal(lookupPrice("acme/m1", pricing)?.inputPerMTok, 1);
});

Deno.test("lookupPrice() returns undefined without a matching key or model", () => {
  assert.equal(lookupPrice("acme", pricing), undefined);
  assert.equal(lookupPrice("acmex/m1", pricing), undefined);
  assert.equal(lookupPrice("other", pricing), undefined);
  assert.equal(lookupPrice(undefined, pricing), undefined);
  assert.equal(lookupPrice("toString", {}), undefined);
});

Deno.test("S107 estimateTurnCost() gives 2.00 for 1,000,000 in and 500,000 out on acme/*", () => {
  const table: PricingTable = { "acme/*": { inputPerMTok: 1, outputPerMTok: 2 } };
  const usage = { inputTokens: 1_000_000, outputTokens: 500_000 };
  assert.equal(estimateTurnCost(usage, "acme/m1", table), 2);
  assert.equal(estimateTurnCost(usage, "acme/m1", {}), undefined);
});

Deno.test("estimateTurnCost() prices cache reads and writes, falling back to the input price", () => {
  const table: PricingTable = {
    m: { inputPerMTok: 1, outputPerMTok: 2, cacheReadPerMTok: 0.1 },
  };
  const usage = {
    inputTokens: 1_000_000,
    cacheReadTokens: 500_000,
    cacheCreationTokens: 200_000,
    outputTokens: 0,
  };
  // fresh 300k × 1 + read 500k × 0.1 + write 200k × 1 (fallback)
  assert.ok(Math.abs((estimateTurnCost(usage, "m", table) ?? 0) - 0.55) < 1e-12);
});

Deno.test("estimateTurnCost() has no estimate without both token counts and ignores costUSD", () => {
  const table: PricingTable = { m: { inputPerMTok: 1, outputPerMTok: 1 } };
  assert.equal(estimateTurnCost({ inputTokens: 5, costUSD: 9 }, "m", table), undefined);
  assert.equal(estimateTurnCost(undefined, "m", table), undefined);
  assert.equal(estimateTurnCost({ inputTokens: 0, outputTokens: 0, costUSD: 9 }, "m", table), 0);
});

Deno.test("estimateCost() sums the turns with an estimate and marks the rest incomplete", () => {
  const table: PricingTable = { m: { inputPerMTok: 1, outputPerMTok: 1 } };
  const priced = { usage: { inputTokens: 1_000_000, outputTokens: 0 } };
  assert.deepEqual(estimateCost([priced, priced], "m", table), { usd: 2, complete: true });
  assert.deepEqual(estimateCost([priced, {}], "m", table), { usd: 1, complete: false });
  assert.deepEqual(estimateCost([{}], "m", table), { usd: undefined, complete: false });
  assert.deepEqual(estimateCost([], "m", table), { usd: undefined, complete: true });
});
