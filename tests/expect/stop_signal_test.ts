import assert from "node:assert/strict";
import { isStopSignal } from "../../src/expect/mod.ts";
import { createStopSignal } from "../../src/expect/stop_signal.ts";

Deno.test("isStopSignal() recognises a signal by its registry-symbol brand", () => {
  const signal = createStopSignal("turn succeeded", "mismatched");
  assert.equal(isStopSignal(signal), true);
  assert.match(signal.message, /turn succeeded/);
});

Deno.test("isStopSignal() recognises a signal branded by another copy of the API", () => {
  const foreign = Object.assign(new Error("x"), { [Symbol.for("niceeval.stop")]: true });
  assert.equal(isStopSignal(foreign), true);
});

Deno.test("isStopSignal() returns false for ordinary errors and non-objects", () => {
  assert.equal(isStopSignal(new Error("Stopped")), false);
  assert.equal(isStopSignal("stop"), false);
  assert.equal(isStopSignal(null), false);
});
