import assert from "node:assert/strict";
import { z } from "zod";
import {
  commandSucceeded,
  equals,
  isDefined,
  isFalse,
  isTrue,
  jsonMatch,
  matches,
  satisfies,
  type StandardSchemaV1,
} from "../../src/expect/mod.ts";
import { checkOne, recorder } from "./_turns.ts";

Deno.test("equals() treats +0 and -0 as equal but NaN only equal to NaN", async () => {
  assert.equal((await checkOne(-0, equals(0))).result, "matched");
  assert.equal((await checkOne([0], equals([-0]))).result, "matched");
  assert.equal((await checkOne(NaN, equals(NaN))).result, "matched");
  assert.equal((await checkOne("1", equals(1))).result, "mismatched");
});

Deno.test("equals() compares arrays element-wise with equal length", async () => {
  assert.equal((await checkOne([1, [2, 3]], equals([1, [2, 3]]))).result, "matched");
  assert.equal((await checkOne([1, 2, 3], equals([1, 2]))).result, "mismatched");
  assert.equal((await checkOne({ 0: 1, length: 1 }, equals([1]))).result, "mismatched");
});

Deno.test("equals() compares plain objects by own enumerable keys", async () => {
  assert.equal((await checkOne({ b: 2, a: 1 }, equals({ a: 1, b: 2 }))).result, "matched");
  assert.equal((await checkOne({ a: 1, b: 2 }, equals({ a: 1 }))).result, "mismatched");
  assert.equal(
    (await checkOne({ a: 1, c: undefined }, equals({ a: 1, b: undefined }))).result,
    "mismatched",
  );
  const entry = await checkOne({ a: { b: [1, 2] } }, equals({ a: { b: [1, 3] } }));
  assert.equal(entry.reason, "differs at $.a.b[1]");
});

Deno.test("equals() compares Dates by time and other objects by identity", async () => {
  assert.equal((await checkOne(new Date(5), equals(new Date(5)))).result, "matched");
  assert.equal((await checkOne(new Date(5), equals(new Date(6)))).result, "mismatched");
  assert.equal((await checkOne(5, equals(new Date(5)))).result, "mismatched");
  const map = new Map([[1, 2]]);
  assert.equal((await checkOne(map, equals(map))).result, "matched");
  assert.equal((await checkOne(new Map([[1, 2]]), equals(map))).result, "mismatched");
  class Point {
    constructor(readonly x: number) {}
  }
  assert.equal((await checkOne(new Point(1), equals(new Point(1)))).result, "mismatched");
  assert.equal((await checkOne({ x: 1 }, equals(new Point(1)))).result, "mismatched");
});

Deno.test("equals() copies the expected value so later mutation does not change the match", async () => {
  const expected = { a: [1] };
  const match = equals(expected);
  expected.a.push(2);
  assert.equal((await checkOne({ a: [1] }, match)).result, "matched");
});

Deno.test("jsonMatch() allows extra keys but requires every listed key", async () => {
  const match = jsonMatch({ city: "Brooklyn" });
  assert.equal((await checkOne({ city: "Brooklyn", days: 3 }, match)).result, "matched");
  const missing = await checkOne({ town: "Brooklyn" }, match);
  assert.equal(missing.result, "mismatched");
  assert.equal(missing.reason, "missing key at $.city");
  assert.equal((await checkOne(["Brooklyn"], match)).result, "mismatched");
  assert.equal(match.name, 'jsonMatch({"city":"Brooklyn"})');
});

Deno.test("jsonMatch() requires arrays of the same length, matched element-wise", async () => {
  const match = jsonMatch([1, { a: 2 }]);
  assert.equal((await checkOne([1, { a: 2, b: 3 }], match)).result, "matched");
  assert.equal((await checkOne([1, { a: 2 }, 3], match)).result, "mismatched");
  assert.equal((await checkOne([1], match)).result, "mismatched");
});

Deno.test("jsonMatch() tests RegExp leaves against strings only", async () => {
  const match = jsonMatch({ city: /brook/i });
  assert.equal((await checkOne({ city: "Brooklyn" }, match)).result, "matched");
  assert.equal((await checkOne({ city: 7 }, match)).result, "mismatched");
  const global = jsonMatch(/a/g);
  assert.equal((await checkOne("a", global)).result, "matched");
  assert.equal((await checkOne("a", global)).result, "matched");
});

Deno.test("jsonMatch() calls function leaves and requires exactly true", async () => {
  const match = jsonMatch({ n: (v) => typeof v === "number" && v > 2 });
  assert.equal((await checkOne({ n: 3 }, match)).result, "matched");
  assert.equal((await checkOne({ n: 1 }, match)).result, "mismatched");
  const truthy = jsonMatch((() => 1) as never);
  assert.equal((await checkOne({}, truthy)).result, "mismatched");
});

Deno.test("jsonMatch() compares other leaves with Object.is", async () => {
  assert.equal((await checkOne({ a: NaN }, jsonMatch({ a: NaN }))).result, "matched");
  assert.equal((await checkOne({ a: -0 }, jsonMatch({ a: 0 }))).result, "mismatched");
  assert.equal((await checkOne({ a: null }, jsonMatch({ a: null }))).result, "matched");
});

Deno.test("jsonMatch() records errored when a function leaf throws", async () => {
  const entry = await checkOne(
    {},
    jsonMatch(() => {
      throw new Error("boom");
    }),
  );
  assert.equal(entry.status, "errored");
  assert.equal(entry.reason, "evaluation-errored");
  assert.equal(entry.error, "boom");
});

Deno.test("jsonMatch() throws a TypeError for a pattern that is not a JsonMatch", () => {
  assert.throws(() => jsonMatch({ a: new Map() } as never), /\$\.a is not a valid JSON pattern/);
  assert.throws(() => jsonMatch(undefined as never), TypeError);
});

Deno.test("matches() resolves orStop with the validated output of a Standard Schema", async () => {
  const schema = z.object({ n: z.coerce.number() });
  const r = recorder();
  const value: { n: number } = await r.check({ n: "4" }, matches(schema)).orStop();
  assert.deepEqual(value, { n: 4 });
  assert.equal(r.seal()[0]?.criterion, "matches(zod)");
});

Deno.test("matches() returns mismatched with the issue messages when validation fails", async () => {
  const entry = await checkOne({ n: "x" }, matches(z.object({ n: z.number() })));
  assert.equal(entry.result, "mismatched");
  assert.match(entry.reason ?? "", /number/);
});

Deno.test("matches() leaves the entry pending while an async validation runs", async () => {
  const schema: StandardSchemaV1<unknown, string> = {
    "~standard": {
      version: 1,
      vendor: "test",
      validate: (value) =>
        Promise.resolve(
          typeof value === "string"
            ? { value: value.toUpperCase() }
            : { issues: [{ message: "no" }] },
        ),
    },
  };
  const r = recorder();
  const handle = r.check("ok", matches(schema));
  assert.equal(r.seal()[0]?.reason, "evaluation-pending");
  assert.equal(await handle.orStop(), "OK");
  await r.pending();
  assert.equal(r.seal()[0]?.result, "matched");
});

Deno.test("matches() throws a TypeError when the argument is not a Standard Schema", () => {
  assert.throws(() => matches({} as never), TypeError);
});

Deno.test("isDefined() matches anything except null and undefined", async () => {
  assert.equal((await checkOne(0, isDefined())).result, "matched");
  assert.equal((await checkOne("", isDefined())).result, "matched");
  assert.equal((await checkOne(null, isDefined())).result, "mismatched");
  const entry = await checkOne(undefined, isDefined("user id"));
  assert.equal(entry.result, "mismatched");
  assert.equal(entry.criterion, 'isDefined("user id")');
});

Deno.test("isTrue() and isFalse() match only the exact booleans", async () => {
  assert.equal((await checkOne(true, isTrue())).result, "matched");
  assert.equal((await checkOne(1, isTrue())).result, "mismatched");
  assert.equal((await checkOne(false, isFalse())).result, "matched");
  assert.equal((await checkOne(0, isFalse())).result, "mismatched");
  assert.equal(isFalse("escalated").name, 'isFalse("escalated")');
});

Deno.test("satisfies() matches when the predicate returns true", async () => {
  const short = satisfies("short", (s: string) => s.length < 5);
  assert.equal((await checkOne("abc", short)).result, "matched");
  assert.equal((await checkOne("abcdef", short)).result, "mismatched");
  assert.equal(short.name, 'satisfies("short")');
});

Deno.test("satisfies() supports an asynchronous predicate", async () => {
  const entry = await checkOne(3, satisfies("odd", (n: number) => Promise.resolve(n % 2 === 1)));
  assert.equal(entry.result, "matched");
});

Deno.test("satisfies() records errored when the predicate returns a non-boolean", async () => {
  const entry = await checkOne("abc", satisfies("length", (s: string) => s.length as never));
  assert.equal(entry.status, "errored");
  assert.equal(entry.reason, "evaluation-errored");
});

Deno.test("satisfies() records errored when the async predicate rejects", async () => {
  const entry = await checkOne(1, satisfies("x", () => Promise.reject(new Error("nope"))));
  assert.equal(entry.status, "errored");
  assert.equal(entry.error, "nope");
});

Deno.test("commandSucceeded() matches a command result with exit code 0", async () => {
  const ok = { exitCode: 0, stdout: "", stderr: "" };
  assert.equal((await checkOne(ok, commandSucceeded())).result, "matched");
  const failed = await checkOne({ exitCode: 2, stdout: "", stderr: "boom\n" }, commandSucceeded());
  assert.equal(failed.result, "mismatched");
  assert.equal(failed.received, 2);
  assert.equal(failed.reason, "boom");
});

Deno.test("commandSucceeded() returns mismatched with reason not-a-command-result for other subjects", async () => {
  assert.equal((await checkOne("ok", commandSucceeded())).reason, "not-a-command-result");
  assert.equal((await checkOne({ code: 0 }, commandSucceeded())).reason, "not-a-command-result");
});
