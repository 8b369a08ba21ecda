import assert from "node:assert/strict";
import { ReusableUtf8Encoder } from "../../src/cli/utf8.ts";

const reference = new TextEncoder();

Deno.test("ReusableUtf8Encoder gives the bytes of TextEncoder for ASCII, multi-byte, astral and lone-surrogate text", () => {
  const encoder = new ReusableUtf8Encoder(64);
  for (
    const text of ["", '{"a":1}\n', "✗ é ü 漢字\n", "🙂🙂 x\n", "bad \ud800 half\n", "x".repeat(21)]
  ) {
    assert.deepEqual(encoder.encode(text), reference.encode(text), JSON.stringify(text));
  }
});

Deno.test("ReusableUtf8Encoder encodes a text longer than its buffer in full, then reuses the buffer", () => {
  const encoder = new ReusableUtf8Encoder(64);
  const long = "✗ failed ".repeat(40);
  assert.deepEqual(encoder.encode(long), reference.encode(long));
  const first = encoder.encode("one\n");
  assert.deepEqual(first, reference.encode("one\n"));
  const second = encoder.encode("two!\n");
  assert.equal(second.buffer, first.buffer, "short texts share the buffer");
  assert.deepEqual(second, reference.encode("two!\n"));
});
