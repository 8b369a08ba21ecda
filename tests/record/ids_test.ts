import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { sha256Hex } from "../../src/_shared/mod.ts";
import { digestOf, locatorOf, parseLocator, slotIdOf } from "../../src/record/mod.ts";
import { flatString } from "../../src/record/_flat.ts";

Deno.test("slotIdOf() is 16 hex of SHA-256(evalId), a dash and the 4-digit ordinal", () => {
  const hex = createHash("sha256").update("greet/hello").digest("hex").slice(0, 16);
  assert.equal(slotIdOf("greet/hello", 3), `${hex}-0003`);
  assert.equal(slotIdOf("greet/hello", 12345), `${hex}-12345`);
});

/** REC-12 spelled out with BigInt: the first 60 bits, 5 at a time, most significant first. */
function referenceLocator(id: string): string {
  const bits = BigInt("0x" + createHash("sha256").update(id).digest("hex").slice(0, 15));
  const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
  let expected = "";
  for (let i = 11; i >= 0; i--) expected += alphabet[Number((bits >> BigInt(i * 5)) & 31n)];
  return `@1${expected}`;
}

Deno.test("locatorOf() encodes the first 60 bits of SHA-256 in Crockford base32, MSB first", () => {
  const id = "0b9e6f5c-3d2a-4e8f-9a71-2c4d5e6f7a8b";
  assert.equal(locatorOf(id), referenceLocator(id));
  assert.match(locatorOf("x"), /^@1[0-9A-HJKMNP-TV-Z]{12}$/);
  for (let i = 0; i < 500; i++) {
    const other = `attempt-${i}`;
    assert.equal(locatorOf(other), referenceLocator(other), other);
  }
});

Deno.test("parseLocator() is case-insensitive and maps O to 0 and I/L to 1", () => {
  assert.equal(parseLocator("@17qk3m9xt2hc4"), "@17QK3M9XT2HC4");
  assert.equal(parseLocator("@17QK3M9XT2HCO"), "@17QK3M9XT2HC0");
  assert.equal(parseLocator("@1ILQK3M9XT2HC"), "@111QK3M9XT2HC");
  assert.equal(parseLocator("@l7qk3m9xt2hc4"), "@17QK3M9XT2HC4", "the version digit typed as L");
  assert.equal(parseLocator("@I7QK3M9XT2HC4"), "@17QK3M9XT2HC4", "the version digit typed as I");
});

Deno.test("parseLocator() rejects anything else with malformed-locator", () => {
  for (const bad of ["@27QK3M9XT2HC4", "@17QK3M9XT2HC", "@17QK3M9XT2HCU", "hello"]) {
    assert.throws(
      () => parseLocator(bad),
      (e: Error & { code?: string }) => e.code === "malformed-locator",
    );
  }
});

Deno.test("issue 18.11: parseLocator() rejects a locator without @ and says how to write it (REC-12)", () => {
  assert.throws(
    () => parseLocator("17QK3M9XT2HC4"),
    (e: Error & { code?: string; hint?: string }) => {
      assert.equal(e.code, "malformed-locator");
      assert.equal(e.message, '"17QK3M9XT2HC4" is not an Attempt locator: locators start with @');
      assert.equal(e.hint, "did you mean @17QK3M9XT2HC4? (e.g. niceeval show @17QK3M9XT2HC4)");
      return true;
    },
  );
});

Deno.test("slotIdOf(), locatorOf() and digestOf() give the same strings on every call", () => {
  assert.equal(slotIdOf("a/b", 7), slotIdOf("a/b", 7));
  assert.equal(slotIdOf("a/b", 7).length, 21);
  assert.match(locatorOf("attempt-1"), /^@1[0-9A-Z]{12}$/);
  assert.equal(locatorOf("attempt-1"), locatorOf("attempt-1"));
  assert.match(digestOf({ a: 1 }), /^sha256:[0-9a-f]{64}$/);
  assert.equal(digestOf({ a: 1 }), `sha256:${sha256Hex('{"a":1}')}`);
});

Deno.test("flatString() returns an equal string, long and non-ASCII ones included", () => {
  const texts = [
    "",
    "a",
    "sha256:" + "f".repeat(64),
    "é→🙂 mixed",
    "x".repeat(300),
    "x".repeat(256),
    "é".repeat(256),
    "🙂".repeat(128),
    "lone \ud800 high, lone \udfff low",
    "sha256:" + "0".repeat(64),
    "ab",
  ];
  // Twice over: the second pass reuses the buffer views of the first.
  for (const text of [...texts, ...texts]) assert.equal(flatString(text), text);
});
