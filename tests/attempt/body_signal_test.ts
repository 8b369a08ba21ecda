/** `src/attempt/_body_signal.ts`: the signal of `t` (rule 3.1.3). */
import assert from "node:assert/strict";
import { BodySignal } from "../../src/attempt/_body_signal.ts";

Deno.test("BodySignal aborts with the Attempt's reason while the body runs", () => {
  const attempt = new AbortController();
  const body = new BodySignal(attempt.signal);
  assert.equal(body.signal.aborted, false);
  const reason = new Error("timeout");
  attempt.abort(reason);
  assert.equal(body.signal.reason, reason);
  body.settle(new Error("settled"));
  assert.equal(body.signal.reason, reason, "settling after the abort changes nothing");
});

Deno.test("BodySignal aborts at settle and ignores the Attempt's later abort", () => {
  const attempt = new AbortController();
  const body = new BodySignal(attempt.signal);
  let fired = 0;
  body.signal.addEventListener("abort", () => fired++);
  const settled = new Error("settled");
  body.settle(settled);
  attempt.abort(new Error("interrupt"));
  assert.equal(body.signal.reason, settled);
  assert.equal(fired, 1);
});

Deno.test("BodySignal of an already aborted Attempt is aborted at once", () => {
  const attempt = new AbortController();
  const reason = new Error("interrupt");
  attempt.abort(reason);
  assert.equal(new BodySignal(attempt.signal).signal.reason, reason);
});
