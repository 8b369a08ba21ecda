/**
 * PRIO-1 for reuse-pool leases: the scheduler hands each sandbox Attempt the priority key of its
 * grants, and the Attempt's pool lease waits under that key, so a freed sandbox goes to the
 * waiter that comes first in scheduler order, not to the one that waited longest.
 */
import assert from "node:assert/strict";
import { createAttemptRunner, SandboxRuntime } from "../../src/attempt/mod.ts";
import type { TestContext } from "../../src/discovery/mod.ts";
import { isTrue } from "../../src/expect/mod.ts";
import type { PlannedSlot } from "../../src/plan/mod.ts";
import { createProviderRegistry, defineSandbox } from "../../src/sandbox/mod.ts";
import type { AttemptControl } from "../../src/scheduler/mod.ts";
import { priorityOrder } from "../../src/scheduler/keys.ts";
import { createFakeClock } from "../_fakes/clock.ts";
import { createFakeControl } from "../_fakes/control.ts";
import { createFakeProvider } from "../_fakes/provider.ts";
import { createSeededRandom } from "../_fakes/random.ts";
import { startRun } from "./_harness.ts";
import { planOf } from "./_sandbox_harness.ts";

Deno.test("createScheduler() hands each sandbox Attempt the priority key of its grants", async () => {
  const provider = createFakeProvider({ clock: createFakeClock() });
  const template = defineSandbox({
    name: provider.name,
    create: (ctx) => provider.create("fake-plan", ctx),
  });
  // Experiment "many" has more rounds, so its Attempts come first although "one" is listed first.
  const plan = await planOf({
    evals: [{ id: "a" }, { id: "b" }],
    experiments: [{ id: "one", evals: ["a"] }, { id: "many", attempts: 2 }],
  }, template);
  const run = startRun(plan, { cap: 1 });
  const { rank } = priorityOrder(plan, 1);
  const seen: { position: number; priority: unknown }[] = [];
  for (;;) {
    await run.flush();
    const live = run.fake.live();
    if (live.length === 0) break;
    for (const attempt of live) {
      seen.push({ position: attempt.slot.position, priority: attempt.control.sandbox?.priority });
      attempt.pass();
    }
  }
  await run.done;
  assert.equal(seen.length, plan.slots.length);
  for (const { position, priority } of seen) assert.equal(priority, rank[position]);
  // G = 1: grants follow the key order (PRIO-7), and so do the keys handed over.
  assert.deepEqual(seen.map((s) => s.priority), plan.slots.map((_, i) => i));
});

Deno.test("createAttemptRunner() leases a freed pool sandbox to the waiter first in scheduler order", async () => {
  const clock = createFakeClock();
  const provider = createFakeProvider({ clock });
  const template = defineSandbox({
    name: provider.name,
    create: (ctx) => provider.create("fake-plan", ctx),
    classifyCreateError: (e) => provider.classifyCreateError(e),
  });
  const holds = new Map<string, () => void>();
  const begun: string[] = [];
  const body = (name: string) => async (t: TestContext) => {
    begun.push(name);
    await new Promise<void>((resolve) => holds.set(name, resolve));
    t.check(true, isTrue());
  };
  const plan = await planOf(
    {
      evals: [{ id: "a" }, { id: "b" }, { id: "c" }],
      experiments: [{ id: "x", sandboxReuse: true, maxConcurrency: 1 }],
    },
    template,
    body,
  );
  const random = createSeededRandom(11);
  const runtime = new SandboxRuntime({
    registry: createProviderRegistry({ hostEnv: {}, clock }),
    owner: { host: "test-host", pid: 1, processStart: "unknown" },
    runIds: ["run-x"],
    clock,
    random,
    projectRoot: "/project",
  });
  const runner = createAttemptRunner({
    plan,
    root: "/project",
    clock,
    random,
    pricing: {},
    sandboxes: runtime,
  });
  const { rank } = priorityOrder(plan, 1);
  const slotOf = (evalId: string) => plan.slots.find((s) => s.evalId === evalId)!;
  const start = (slot: PlannedSlot) => runner(slot, pooledControl(rank[slot.position]!));

  const a = start(slotOf("a"));
  await clock.flush();
  assert.deepEqual(begun, ["x:a"]);
  // The pool (capacity 1) is full: "c" starts waiting first, "b" (first in key order) later.
  assert.ok(rank[slotOf("b").position]! < rank[slotOf("c").position]!);
  const c = start(slotOf("c"));
  await clock.flush();
  const b = start(slotOf("b"));
  await clock.flush();
  assert.deepEqual(begun, ["x:a"]);

  holds.get("x:a")!();
  await clock.flush();
  assert.deepEqual(begun, ["x:a", "x:b"]);
  holds.get("x:b")!();
  await clock.flush();
  holds.get("x:c")!();
  await clock.flush();
  const results = await Promise.all([a, b, c]);
  assert.deepEqual(results.map((r) => r.verdict), ["passed", "passed", "passed"]);
  assert.equal(provider.handles.length, 1);
  assert.deepEqual(await runtime.stopPools("x"), []);
});

/** A control like the scheduler's for a pooled Attempt of capacity 1 under `priority`. */
function pooledControl(priority: number): AttemptControl {
  return {
    ...createFakeControl(),
    start: () => {},
    sandbox: {
      poolCapacity: 1,
      priority,
      acquireMachineSlot: () => Promise.resolve(undefined),
      pace: () => Promise.resolve(),
      groupSandboxFailed: () => {},
    },
  };
}
