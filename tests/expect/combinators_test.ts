import assert from "node:assert/strict";
import { AssertionAuthoringError } from "../../src/_shared/errors.ts";
import {
  and,
  defineValueMatch,
  eventMatch,
  includes,
  isDefined,
  matches,
  type MatchResult,
  not,
  or,
  similarity,
  type StandardSchemaV1,
  toolMatch,
} from "../../src/expect/mod.ts";
import { checkOne, recorder } from "./_turns.ts";

/** A value match that returns `result` and logs its calls. */
function fixed(result: MatchResult, calls: string[], name: string = result) {
  return defineValueMatch<unknown>({
    name,
    evaluate: () => {
      calls.push(name);
      return { result };
    },
  });
}

function isCode(code: string) {
  return (e: unknown) => e instanceof AssertionAuthoringError && e.code === code;
}

Deno.test("and() stops at the first mismatched child", async () => {
  const calls: string[] = [];
  const match = and(
    fixed("matched", calls),
    fixed("mismatched", calls),
    fixed("matched", calls, "c"),
  );
  assert.equal((await checkOne("x", match)).result, "mismatched");
  assert.deepEqual(calls, ["matched", "mismatched"]);
});

Deno.test("and() is mismatched before unavailable, then unavailable before matched", async () => {
  const calls: string[] = [];
  const u = fixed("unavailable", calls);
  const m = fixed("matched", calls);
  const x = fixed("mismatched", calls);
  assert.equal((await checkOne("x", and(u, x))).result, "mismatched");
  assert.equal((await checkOne("x", and(u, m))).result, "unavailable");
  assert.equal((await checkOne("x", and(m, m))).result, "matched");
});

Deno.test("or() stops at the first matched child", async () => {
  const calls: string[] = [];
  const match = or(
    fixed("mismatched", calls),
    fixed("matched", calls),
    fixed("matched", calls, "c"),
  );
  assert.equal((await checkOne("x", match)).result, "matched");
  assert.deepEqual(calls, ["mismatched", "matched"]);
});

Deno.test("or() is matched before unavailable, then unavailable before mismatched", async () => {
  const calls: string[] = [];
  const u = fixed("unavailable", calls);
  const m = fixed("matched", calls);
  const x = fixed("mismatched", calls);
  assert.equal((await checkOne("x", or(u, m))).result, "matched");
  assert.equal((await checkOne("x", or(x, u))).result, "unavailable");
  assert.equal((await checkOne("x", or(x, x))).result, "mismatched");
});

Deno.test("not() swaps matched and mismatched and keeps unavailable", async () => {
  const calls: string[] = [];
  assert.equal((await checkOne("x", not(fixed("matched", calls)))).result, "mismatched");
  assert.equal((await checkOne("x", not(fixed("mismatched", calls)))).result, "matched");
  assert.equal((await checkOne("x", not(fixed("unavailable", calls)))).result, "unavailable");
  assert.equal(not(includes("error")).name, 'not(includes("error"))');
});

Deno.test("and() names its children in the criterion", () => {
  assert.equal(and(includes("a"), includes("b")).name, 'and(includes("a"), includes("b"))');
});

Deno.test("and() evaluates asynchronous children in order", async () => {
  const calls: string[] = [];
  const slow = defineValueMatch<unknown>({
    name: "slow",
    evaluate: async () => {
      await Promise.resolve();
      calls.push("slow");
      return true;
    },
  });
  assert.equal((await checkOne("x", and(slow, fixed("matched", calls)))).result, "matched");
  assert.deepEqual(calls, ["slow", "matched"]);
});

Deno.test("and() records errored when a child throws", async () => {
  const boom = defineValueMatch<unknown>({
    name: "boom",
    evaluate: () => {
      throw new Error("bad");
    },
  });
  const entry = await checkOne("x", and(includes("x"), boom));
  assert.equal(entry.status, "errored");
  assert.equal(entry.reason, "evaluation-errored");
});

Deno.test("and() resolves orStop with the refinement of a schema child", async () => {
  const upper: StandardSchemaV1<unknown, string> = {
    "~standard": { version: 1, vendor: "t", validate: (v) => ({ value: String(v).toUpperCase() }) },
  };
  const r = recorder();
  assert.equal(await r.check("ok", and(isDefined(), matches(upper))).orStop(), "OK");
});

Deno.test("and() throws match-domain-mismatch when domains are mixed", () => {
  assert.throws(() => and(includes("a"), toolMatch("x") as never), isCode("match-domain-mismatch"));
  assert.throws(
    () => or(toolMatch("x"), eventMatch("message") as never),
    isCode("match-domain-mismatch"),
  );
});

Deno.test("or() throws match-domain-mismatch for a measurement", () => {
  assert.throws(() => or(includes("a"), similarity("a") as never), isCode("match-domain-mismatch"));
  assert.throws(() => not(similarity("a") as never), isCode("match-domain-mismatch"));
});

Deno.test("not() throws not-a-match for a value that is no match", () => {
  assert.throws(
    () => not({ kind: "boolean", domain: "value", name: "fake" } as never),
    isCode("not-a-match"),
  );
});

Deno.test("and() keeps the tool domain so calledTool accepts it", () => {
  const match = and(toolMatch("a"), toolMatch({ status: "completed" }));
  assert.equal(match.domain, "tool");
});
