import assert from "node:assert/strict";
import { type GateEntry, PriorityGate } from "../../src/scheduler/mod.ts";

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
  assert.equal(gate.park([0], "x", () => assert.fail("nothing to grant")), null);
  const held = gate.tryAcquire()!;
  const entries: string[] = [];
  const onEntry = (name: string, e: GateEntry) => entries.push(`${name} ${"permit" in e}`);
  assert.notEqual(gate.park([2], "b", onEntry), null);
  assert.notEqual(gate.park([1], "a", onEntry), null);
  assert.equal(gate.waiting, 2);
  held.release(); // synchronous: the smallest key gets the unit at once
  assert.deepEqual(entries, ["a true"]);
  assert.deepEqual([gate.held, gate.waiting], [1, 1]);
});

Deno.test("ParkedWait.cancel() hands over the reason and leaves the queue", () => {
  const gate = new PriorityGate(1);
  gate.tryAcquire();
  const entries: unknown[] = [];
  const parked = gate.park([1], 7, (value, e) => entries.push([value, e]))!;
  assert.equal(parked.cancel("early-exit"), true);
  assert.deepEqual(entries, [[7, { stopped: "early-exit" }]]);
  assert.equal(gate.waiting, 0);
  assert.equal(parked.cancel("again"), false);
  assert.equal(entries.length, 1);
});

Deno.test("PriorityGate.reserve() ranks a place taken at another gate's grant with the waiters already queued (PRIO-1)", async () => {
  const permits = new PriorityGate(1);
  const slots = new PriorityGate(1);
  const permit = permits.tryAcquire()!;
  const slot = slots.tryAcquire()!;
  const order: string[] = [];
  let ticket: ReturnType<PriorityGate["reserve"]> | undefined;
  const queued = slots.acquire([5]).then((p) => (order.push("queued"), p));
  const waiting = permits.acquire([1], { onGrant: () => void (ticket = slots.reserve([1])) });
  // One release step: the permit first lets [1] through, then the slot goes to the smaller key.
  permit.release();
  slot.release();
  assert.ok(ticket);
  const mine = await ticket.take();
  order.push("reserved");
  (await waiting).release();
  mine.release();
  (await queued).release();
  assert.deepEqual(order, ["reserved", "queued"]);
});

Deno.test("Ticket.cancel() releases a unit granted but not taken, and chains to the place it took next", () => {
  const first = new PriorityGate(1);
  const second = new PriorityGate(1);
  const ticket = first.reserve([1], second);
  assert.equal(first.held, 1);
  assert.equal(second.held, 1);
  ticket.cancel();
  ticket.cancel();
  assert.deepEqual([first.held, second.held, first.waiting, second.waiting], [0, 0, 0, 0]);
});

Deno.test("Ticket.take() rejects with the abort reason and gives the place up", async () => {
  const gate = new PriorityGate(1);
  const held = gate.tryAcquire()!;
  const ticket = gate.reserve([1]);
  const controller = new AbortController();
  const taking = ticket.take(controller.signal);
  controller.abort(new Error("stop"));
  await assert.rejects(taking, /stop/);
  assert.equal(gate.waiting, 0);
  held.release();
  assert.equal(gate.held, 0);
});
