import assert from "node:assert/strict";
import { defineScoreMatch, defineValueMatch } from "../../src/expect/mod.ts";
import { checkOne } from "./_turns.ts";

Deno.test("defineValueMatch() turns true and false into matched and mismatched", async () => {
  const even = defineValueMatch<number>({ name: "isEven", evaluate: (n) => n % 2 === 0 });
  assert.equal(even.name, "isEven");
  const entry = await checkOne(4, even);
  assert.equal(entry.result, "matched");
  assert.equal(entry.criterion, "isEven");
  assert.equal(entry.matcher, "isEven");
  assert.equal((await checkOne(3, even)).result, "mismatched");
});

Deno.test("defineValueMatch() keeps a returned MatchOutcome", async () => {
  const match = defineValueMatch<string>({
    name: "custom",
    evaluate: () => ({
      result: "unavailable",
      reason: "no index",
      expected: "x",
      received: { a: 1 },
    }),
  });
  const entry = await checkOne("s", match);
  assert.equal(entry.result, "unavailable");
  assert.equal(entry.status, "unavailable");
  assert.equal(entry.reason, "no index");
  assert.deepEqual(entry.received, { a: 1 });
});

Deno.test("defineValueMatch() records errored when evaluate returns the wrong shape", async () => {
  for (const bad of ["yes", { result: "maybe" }, { result: "matched", expected: () => 1 }, null]) {
    const match = defineValueMatch<unknown>({ name: "bad", evaluate: () => bad as never });
    const entry = await checkOne(1, match);
    assert.equal(entry.status, "errored", JSON.stringify(bad));
    assert.equal(entry.reason, "evaluation-errored");
  }
});

Deno.test("defineValueMatch() records errored when evaluate throws", async () => {
  const match = defineValueMatch<unknown>({
    name: "thrower",
    evaluate: () => {
      throw new Error("kaput");
    },
  });
  const entry = await checkOne(1, match);
  assert.equal(entry.result, "errored");
  assert.equal(entry.error, "kaput");
});

Deno.test("defineValueMatch() throws a TypeError without a name or evaluate function", () => {
  assert.throws(() => defineValueMatch({ name: "", evaluate: () => true }), TypeError);
  assert.throws(() => defineValueMatch({ name: "x" } as never), TypeError);
});

Deno.test("defineScoreMatch() records the measurement it returns", async () => {
  const brevity = defineScoreMatch<string>({ name: "brevity", score: (s) => 1 - s.length / 10 });
  const entry = await checkOne("ab", brevity);
  assert.equal(entry.entry, "measurement");
  assert.equal(entry.measurement, 0.8);
  assert.equal(entry.status, "passed");
});

Deno.test("defineScoreMatch() records unavailable with its reason", async () => {
  const match = defineScoreMatch<string>({ name: "m", score: () => ({ unavailable: "no model" }) });
  const entry = await checkOne("x", match);
  assert.equal(entry.status, "unavailable");
  assert.equal(entry.reason, "no model");
  assert.equal(entry.measurement, null);
});

Deno.test("defineScoreMatch() records errored for a score outside [0, 1]", async () => {
  for (const value of [1.5, -0.1, NaN, "0.5"]) {
    const match = defineScoreMatch<string>({ name: "m", score: () => value as never });
    const entry = await checkOne("x", match);
    assert.equal(entry.status, "errored", String(value));
    assert.equal(entry.reason, "evaluation-errored");
  }
});

Deno.test("defineScoreMatch() supports an asynchronous score", async () => {
  const match = defineScoreMatch<string>({ name: "m", score: () => Promise.resolve(0.25) });
  assert.equal((await checkOne("x", match)).measurement, 0.25);
});
