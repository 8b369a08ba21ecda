import assert from "node:assert/strict";
import { KeyedQueue } from "../../src/record/_keyed_queue.ts";

interface Step {
  readonly key: number;
  readonly name: string;
  readonly done: PromiseWithResolvers<void>;
}

/** A queue whose jobs finish only when the test resolves them; records start order. */
function manualQueue(limit: number) {
  const started: Step[] = [];
  const queue = new KeyedQueue<Step>(limit, (step) => {
    started.push(step);
    return step.done.promise;
  });
  const push = (key: number, name: string): Step => {
    const step = { key, name, done: Promise.withResolvers<void>() };
    queue.push(key, step);
    return step;
  };
  return { queue, started, push, names: () => started.map((s) => s.name) };
}

/** Lets queued promise continuations run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

Deno.test("KeyedQueue runs the jobs of one key in order, one at a time", async () => {
  const { queue, push, names } = manualQueue(4);
  const a1 = push(1, "a1");
  const a2 = push(1, "a2");
  const a3 = push(1, "a3");
  await settle();
  assert.deepEqual(names(), ["a1"]);
  a1.done.resolve();
  await settle();
  assert.deepEqual(names(), ["a1", "a2"]);
  a2.done.resolve();
  await settle();
  a3.done.resolve();
  await queue.idle();
  assert.deepEqual(names(), ["a1", "a2", "a3"]);
  assert.equal(queue.size, 0);
});

Deno.test("KeyedQueue runs different keys in parallel up to its limit, oldest key first", async () => {
  const { queue, push, names } = manualQueue(2);
  const steps = [push(1, "k1"), push(2, "k2"), push(3, "k3"), push(4, "k4")];
  await settle();
  assert.deepEqual(names(), ["k1", "k2"]);
  assert.equal(queue.size, 4);
  steps[1]!.done.resolve();
  await settle();
  assert.deepEqual(names(), ["k1", "k2", "k3"]);
  for (const s of steps) s.done.resolve();
  await queue.idle();
  assert.deepEqual(names(), ["k1", "k2", "k3", "k4"]);
});

Deno.test("KeyedQueue runs a job pushed while its key is busy after the running one", async () => {
  const { queue, push, names } = manualQueue(1);
  const a1 = push(1, "a1");
  const b1 = push(2, "b1");
  await settle();
  const a2 = push(1, "a2");
  a1.done.resolve();
  await settle();
  // The worker of key 1 takes a2 before key 2 gets the only slot.
  assert.deepEqual(names(), ["a1", "a2"]);
  a2.done.resolve();
  b1.done.resolve();
  await queue.idle();
  assert.deepEqual(names(), ["a1", "a2", "b1"]);
});

Deno.test("KeyedQueue.idle() waits for jobs pushed while it waits", async () => {
  const { queue, push, names } = manualQueue(2);
  const first = push(1, "first");
  let idle = false;
  const waiting = queue.idle().then(() => idle = true);
  await settle();
  const later = push(2, "later");
  first.done.resolve();
  await settle();
  assert.equal(idle, false);
  later.done.resolve();
  await waiting;
  assert.deepEqual(names(), ["first", "later"]);
});

Deno.test("KeyedQueue.idle() rejects with a job's rejection and drops that key's later jobs", async () => {
  const ran: string[] = [];
  const queue = new KeyedQueue<string>(2, (job) => {
    ran.push(job);
    return job === "bad" ? Promise.reject(new Error("bug")) : Promise.resolve();
  });
  queue.push(1, "bad");
  queue.push(1, "after-bad");
  queue.push(2, "other");
  await assert.rejects(queue.idle(), /bug/);
  assert.deepEqual(ran.sort(), ["bad", "other"]);
});

Deno.test("KeyedQueue refuses a limit below 1", () => {
  assert.throws(() => new KeyedQueue(0, () => Promise.resolve()), RangeError);
});

Deno.test("KeyedQueue.whenAtMost() resolves once the queued and running jobs shrank to the size", async () => {
  const { queue, push } = manualQueue(2);
  const steps = [push(1, "a"), push(2, "b"), push(3, "c"), push(3, "d")];
  await queue.whenAtMost(4); // already true: resolves at once
  let shrunk = false;
  const wait = queue.whenAtMost(2).then(() => shrunk = true);
  steps[0]!.done.resolve();
  await settle();
  assert.equal(queue.size, 3);
  assert.equal(shrunk, false);
  steps[1]!.done.resolve();
  await settle();
  assert.equal(queue.size, 2);
  assert.equal(shrunk, true);
  await wait;
  for (const s of steps) s.done.resolve();
  await queue.idle();
  assert.equal(queue.size, 0);
});

Deno.test("KeyedQueue.whenAtMost() counts the unrun jobs of a key whose job rejected as gone", async () => {
  const queue = new KeyedQueue<number>(
    1,
    (n) => n === 1 ? Promise.reject(new Error("boom")) : Promise.resolve(),
  );
  queue.push(7, 1);
  queue.push(7, 2);
  queue.push(7, 3);
  assert.equal(queue.size, 3);
  await queue.whenAtMost(0);
  assert.equal(queue.size, 0);
  await assert.rejects(queue.idle(), /boom/);
});

Deno.test("KeyedQueue.whenAtMost() resolves waiters of different sizes as each is reached, oldest first", async () => {
  const { queue, push } = manualQueue(4);
  const steps = [push(1, "a"), push(2, "b"), push(3, "c"), push(4, "d")];
  const resolved: string[] = [];
  const waits = [
    queue.whenAtMost(1).then(() => resolved.push("≤1 first")),
    queue.whenAtMost(3).then(() => resolved.push("≤3")),
    queue.whenAtMost(1).then(() => resolved.push("≤1 second")),
    queue.whenAtMost(2).then(() => resolved.push("≤2")),
  ];
  steps[0]!.done.resolve();
  await settle();
  assert.deepEqual(resolved, ["≤3"]);
  steps[1]!.done.resolve();
  await settle();
  assert.deepEqual(resolved, ["≤3", "≤2"]);
  // A waiter added after others resolved still counts: the largest waited size is kept.
  const late = queue.whenAtMost(1).then(() => resolved.push("≤1 late"));
  steps[2]!.done.resolve();
  await settle();
  assert.deepEqual(resolved, ["≤3", "≤2", "≤1 first", "≤1 second", "≤1 late"]);
  steps[3]!.done.resolve();
  await Promise.all([...waits, late, queue.idle()]);
});
