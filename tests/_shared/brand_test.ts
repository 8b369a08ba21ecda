/** Brand reads (issue 20: a frozen definition is read once, and answers never go stale). */
import assert from "node:assert/strict";
import { brand, DEFINITION_KEY, readBrand } from "../../src/_shared/brand.ts";

Deno.test("issue 20: readBrand() answers a frozen definition the same every time", () => {
  const def = Object.freeze(brand({ name: "x" }, "agent"));
  const first = readBrand(def);
  assert.deepEqual(first, { kind: "agent", version: readBrand(def)!.version });
  assert.deepEqual(readBrand(def), first);
  assert.equal(readBrand(Object.freeze({ name: "plain" })), undefined);
});

Deno.test("issue 20: readBrand() rereads a frozen object whose brand object can still change", () => {
  const raw: { kind: unknown; version: number } = { kind: 1, version: 1 };
  const value = Object.freeze(Object.defineProperty({}, DEFINITION_KEY, { value: raw }));
  assert.equal(readBrand(value), undefined);
  raw.kind = "agent";
  assert.deepEqual(readBrand(value), { kind: "agent", version: 1 });
});

Deno.test("issue 20: readBrand() rereads an object that is not frozen", () => {
  const value: Record<string | symbol, unknown> = { name: "x" };
  assert.equal(readBrand(value), undefined);
  brand(value, "eval");
  assert.equal(readBrand(value)?.kind, "eval");
});
