/** The heap governor of `exp` (issue 20, docs/memory.md). */
import assert from "node:assert/strict";
import {
  HeapGovernor,
  type HeapPort,
  processHeapGovernor,
  processHeapPort,
} from "../../src/cli/heap_governor.ts";

const MB = 1024 * 1024;

/** A heap whose use the test sets; a collection leaves `live`. */
function fakeHeap(): HeapPort & { use: number; live: number; collections: number } {
  return {
    use: 0,
    live: 0,
    collections: 0,
    used() {
      return this.use;
    },
    collect() {
      this.collections++;
      this.use = this.live;
    },
  };
}

function ticks(governor: HeapGovernor, n: number): void {
  for (let i = 0; i < n; i++) governor.tick();
}

/** Collections so far after the heap reached `usedMB` and 32 more events came. */
function collectionsAt(
  heap: ReturnType<typeof fakeHeap>,
  governor: HeapGovernor,
  usedMB: number,
): number {
  heap.use = usedMB * MB;
  ticks(governor, 32);
  return heap.collections;
}

Deno.test("issue 20: the governor collects only past its limit, looking every 32 events", () => {
  const heap = fakeHeap();
  const governor = new HeapGovernor(heap);
  heap.use = 64 * MB;
  ticks(governor, 64);
  assert.equal(heap.collections, 0);
  heap.use = 70 * MB;
  heap.live = 30 * MB;
  ticks(governor, 31);
  assert.equal(heap.collections, 0);
  ticks(governor, 1);
  assert.equal(heap.collections, 1);
  assert.equal(governor.collections, 1);
  // Next limit: max(30 × 1.5, 30 + 32) = 62 MB.
  assert.equal(collectionsAt(heap, governor, 62), 1);
  assert.equal(collectionsAt(heap, governor, 63), 2);
});

Deno.test("issue 20: past a live heap of 64 MB the limit is 1.5 × the live heap", () => {
  const heap = fakeHeap();
  const governor = new HeapGovernor(heap);
  heap.live = 100 * MB;
  assert.equal(collectionsAt(heap, governor, 200), 1);
  assert.equal(collectionsAt(heap, governor, 150), 1);
  assert.equal(collectionsAt(heap, governor, 151), 2);
});

Deno.test("issue 20: check() looks now, between planning phases, and shares the limit with tick()", () => {
  const heap = fakeHeap();
  const governor = new HeapGovernor(heap);
  heap.use = 64 * MB;
  governor.check();
  assert.equal(heap.collections, 0);
  heap.use = 65 * MB;
  heap.live = 40 * MB;
  governor.check();
  assert.equal(heap.collections, 1);
  // Next limit: max(40 × 1.5, 40 + 32) = 72 MB, for ticks too.
  heap.use = 72 * MB;
  governor.check();
  ticks(governor, 32);
  assert.equal(heap.collections, 1);
  heap.use = 73 * MB;
  ticks(governor, 31);
  assert.equal(heap.collections, 1);
  governor.check();
  assert.equal(heap.collections, 2);
});

Deno.test("issue 20: planning and the run share one governor per process", async () => {
  assert.equal(await processHeapGovernor(), await processHeapGovernor());
});

Deno.test("issue 20: this runtime lets the governor collect: garbage it drops is gone afterwards", async () => {
  const port = await processHeapPort();
  assert.ok(port, "gc is not available to the governor");
  port.collect();
  const before = port.used();
  let garbage: number[][] | undefined = Array.from(
    { length: 2_000 },
    () => new Array(2_000).fill(1),
  );
  assert.ok(port.used() > before + 10 * MB);
  garbage = undefined;
  port.collect();
  assert.equal(garbage, undefined);
  assert.ok(port.used() < before + 10 * MB);
});
