import assert from "node:assert/strict";
import { PriorityGate } from "../../src/scheduler/mod.ts";

Deno.test("PriorityGate grants a freed unit to the smallest waiting key", async () => {
  const gate = new PriorityGate(1);
  const first = gate.tryAcquire()!;
  const order: string[] = [];
  const late = gate.acquire([5]).then((p) => (order.push("late"), p));
  const early = gate.acquire([1]).then((p) => (order.push("early"), p));
  assert.deepEqual(gate.smallestWaitingKey(), [1]);
  first.release();
  (await early).release();
  (await late).release();
  assert.deepEqual(order, ["early", "late"]);
});

Deno.test("PriorityGate.acquire() rejects with the abort reason and leaves the queue", async () => {
  const gate = new PriorityGate(1);
  const held = gate.tryAcquire()!;
  const controller = new AbortController();
  const waiting = gate.acquire([1], { signal: controller.signal });
  controller.abort(new Error("stop"));
  await assert.rejects(waiting, /stop/);
  assert.equal(gate.waiting, 0);
  held.release();
  assert.equal(gate.held, 0);
});

Deno.test("PriorityGate.park() queues nothing while a unit is free, then grants parked keys in order without a promise", () => {
  const gate = new PriorityGate(1);
  const stop = new AbortController();
  assert.equal(gate.park([0], stop.signal, () => assert.fail("nothing to grant")), false);
  const held = gate.tryAcquire()!;
  const entries: string[] = [];
  assert.equal(gate.park([2], stop.signal, (e) => entries.push(`b ${"permit" in e}`)), true);
  assert.equal(gate.park([1], stop.signal, (e) => entries.push(`a ${"permit" in e}`)), true);
  assert.equal(gate.waiting, 2);
  held.release(); // synchronous: the smallest key gets the unit at once
  assert.deepEqual(entries, ["a true"]);
  assert.deepEqual([gate.held, gate.waiting], [1, 1]);
});

Deno.test("PriorityGate.park() hands over the abort reason and leaves the queue", () => {
  const gate = new PriorityGate(1);
  gate.tryAcquire();
  const stop = new AbortController();
  const entries: unknown[] = [];
  assert.equal(gate.park([1], stop.signal, (e) => entries.push(e)), true);
  stop.abort("early-exit");
  assert.deepEqual(entries, [{ stopped: "early-exit" }]);
  assert.equal(gate.waiting, 0);
  assert.equal(gate.park([2], stop.signal, () => assert.fail("aborted")), false);
});
