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
