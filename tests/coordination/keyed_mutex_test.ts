/** `src/coordination/keyed_mutex.ts`: the in-process half of LEASE-2. */
import assert from "node:assert/strict";
import { createKeyedMutex } from "../../src/coordination/mod.ts";
import { watch } from "./_helpers.ts";

const signal = new AbortController().signal;

Deno.test("createKeyedMutex() grants one holder per key, FIFO, and keys are independent", async () => {
  const mutex = createKeyedMutex();
  const a = await mutex.acquire("k", { signal });
  const other = await mutex.acquire("j", { signal });
  const b = watch(mutex.acquire("k", { signal }));
  const c = watch(mutex.acquire("k", { signal }));
  await Promise.resolve();
  assert.equal(b.settled || c.settled, false);
  a[Symbol.dispose]();
  a[Symbol.dispose]();
  const bPermit = await b.promise;
  assert.equal(c.settled, false, "a double dispose does not grant twice");
  bPermit[Symbol.dispose]();
  (await c.promise)[Symbol.dispose]();
  assert.equal(mutex.isHeld("k"), false);
  assert.equal(mutex.isHeld("j"), true);
  other[Symbol.dispose]();
  assert.equal(mutex.isHeld("j"), false);
});

Deno.test("KeyedMutex.acquire() rejects with the abort reason and leaves the queue intact", async () => {
  const mutex = createKeyedMutex();
  const a = await mutex.acquire("k", { signal });
  const controller = new AbortController();
  const b = watch(mutex.acquire("k", { signal: controller.signal }));
  const c = watch(mutex.acquire("k", { signal }));
  const reason = new Error("interrupt");
  controller.abort(reason);
  await assert.rejects(b.promise, (e) => e === reason);
  a[Symbol.dispose]();
  (await c.promise)[Symbol.dispose]();
  assert.equal(mutex.isHeld("k"), false);
  await assert.rejects(mutex.acquire("k", { signal: controller.signal }), (e) => e === reason);
  assert.equal(mutex.isHeld("k"), false);
});
