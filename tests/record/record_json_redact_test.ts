import assert from "node:assert/strict";
import { Redactor } from "../../src/_shared/mod.ts";
import { recordJson, recordJsonPieces } from "../../src/record/atomic.ts";

Deno.test("recordJson() redacts credential values in strings, escaped strings and keys", () => {
  const redactor = new Redactor(["sk-secret-1", 'pa"ss\\wd']);
  const text = recordJson(
    { message: "key sk-secret-1", nested: [{ text: 'x pa"ss\\wd y' }], ["sk-secret-1"]: 1 },
    redactor,
  );
  assert.deepEqual(JSON.parse(text), {
    message: "key ***",
    nested: [{ text: "x *** y" }],
    "***": 1,
  });
  assert.ok(text.endsWith("}\n"));
});

Deno.test("recordJson() returns the plain serialization when nothing matches", () => {
  const value = { a: "nothing here", n: 1 };
  assert.equal(recordJson(value, new Redactor(["sk-secret-1"])), recordJson(value));
  assert.equal(recordJson(value, new Redactor()), '{\n  "a": "nothing here",\n  "n": 1\n}\n');
});

Deno.test("recordJson() keeps numbers and stays valid JSON when a numeric value is a whole number", () => {
  const text = recordJson({ durationMs: 123456, pin: "pin 123456" }, new Redactor(["123456"]));
  assert.deepEqual(JSON.parse(text), { durationMs: 123456, pin: "pin ***" });
});

Deno.test("issue 20: recordJsonPieces() joins to recordJson() byte for byte, and redacts each piece", () => {
  const slots = Array.from({ length: 5 }, (_, i) => ({
    slotId: `s${i}`,
    evalId: i === 3 ? "uses sk-secret-1" : `e${i}`,
    nested: { ordinal: i, list: [1, { deep: "x" }] },
  }));
  const doc = { format: "f", header: { a: 1, b: [] }, expectedSlots: slots };
  assert.equal([...recordJsonPieces(doc, "expectedSlots")].join(""), recordJson(doc));
  assert.ok([...recordJsonPieces(doc, "expectedSlots")].length > 5);
  const redactor = new Redactor(["sk-secret-1"]);
  const joined = [...recordJsonPieces(doc, "expectedSlots", redactor)].join("");
  assert.equal(joined, recordJson(doc, redactor));
  assert.equal(JSON.parse(joined).expectedSlots[3].evalId, "uses ***");
  // An empty array and a key that is not last fall back to one piece.
  const empty = { a: 1, expectedSlots: [] };
  assert.deepEqual([...recordJsonPieces(empty, "expectedSlots")], [recordJson(empty)]);
  const notLast = { expectedSlots: slots, z: 1 };
  assert.deepEqual([...recordJsonPieces(notLast, "expectedSlots")], [recordJson(notLast)]);
});

Deno.test("issue 20: recordJsonPieces() maps each element with itemOf, in every form it writes", () => {
  const slots = Array.from({ length: 4 }, (_, i) => ({ slotId: `s${i}`, extra: "dropped" }));
  const itemOf = (item: unknown) => ({ slotId: (item as { slotId: string }).slotId });
  const mapped = slots.map(itemOf);
  const doc = { format: "f", expectedSlots: slots };
  assert.equal(
    [...recordJsonPieces(doc, "expectedSlots", undefined, itemOf)].join(""),
    recordJson({ format: "f", expectedSlots: mapped }),
  );
  const notLast = { expectedSlots: slots, z: 1 };
  assert.deepEqual([...recordJsonPieces(notLast, "expectedSlots", undefined, itemOf)], [
    recordJson({ expectedSlots: mapped, z: 1 }),
  ]);
});
