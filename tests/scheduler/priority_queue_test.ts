import assert from "node:assert/strict";
import { PriorityQueue } from "../../src/scheduler/mod.ts";
import { createSeededRandom } from "../_fakes/random.ts";

Deno.test("PriorityQueue pops the smallest key and keeps insertion order for equal keys", () => {
  const q = new PriorityQueue<string>();
  q.push([2, 0], "c");
  q.push([1, 5], "b");
  q.push([1, 5], "b2");
  q.push([1, 0], "a");
  assert.deepEqual(q.peekKey(), [1, 0]);
  assert.deepEqual([q.pop(), q.pop(), q.pop(), q.pop(), q.pop()], ["a", "b", "b2", "c", undefined]);
});

Deno.test("PriorityQueue.remove() takes out any value and keeps the heap ordered", () => {
  const random = createSeededRandom(9);
  const q = new PriorityQueue<{ n: number }>();
  const values = Array.from({ length: 500 }, () => ({ n: Math.floor(random.next() * 1000) }));
  for (const v of values) q.push([v.n], v);
  const removed = new Set(values.filter((_, i) => i % 3 === 0));
  for (const v of removed) assert.equal(q.remove(v), true);
  assert.equal(q.remove(values[0]!), false);
  const out: number[] = [];
  for (let v = q.pop(); v !== undefined; v = q.pop()) out.push(v.n);
  const kept = values.filter((v) => !removed.has(v)).map((v) => v.n).sort((a, b) => a - b);
  assert.deepEqual(out, kept);
});
