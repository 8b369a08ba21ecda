/** Lowercase hex identifiers as bytes and back (issue 20). */
import assert from "node:assert/strict";
import { latin1Text, readHex, writeHex } from "../../src/_shared/mod.ts";

Deno.test("readHex() and writeHex() round-trip every byte value", () => {
  const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
  const text = new Uint8Array(512);
  writeHex(bytes, 0, 256, text, 0);
  const spelled = latin1Text(text);
  assert.equal(spelled, Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join(""));
  const back = new Uint8Array(258);
  assert.equal(readHex(`xx${spelled}`, 2, 256, back, 2), true);
  assert.deepEqual(back.subarray(2), bytes);
});

Deno.test("readHex() refuses anything but lowercase hex digits", () => {
  const out = new Uint8Array(1);
  for (const text of ["AB", "0g", "g0", " 1", "/0", ":0", "`0", "0-"]) {
    assert.equal(readHex(text, 0, 1, out, 0), false, text);
  }
  assert.equal(readHex("af", 0, 1, out, 0), true);
  assert.equal(out[0], 0xaf);
});
