/**
 * Section C of scenarios.md with real sandbox Attempts: exclusive lanes keyed by the planned
 * provider of each pair (`custom:<name>`), not by a scheduler-only field (LANE-1 … LANE-4).
 */
import assert from "node:assert/strict";
import { defineSandbox, type SandboxLayer } from "../../src/sandbox/mod.ts";
import { createFakeClock } from "../_fakes/clock.ts";
import { createFakeProvider } from "../_fakes/provider.ts";
import { startSandboxRun } from "./_sandbox_harness.ts";

/** A shared (non-exclusive) template over its own fake provider. */
function sharedTemplate(name = "shared"): SandboxLayer {
  const provider = createFakeProvider({ clock: createFakeClock(), name });
  return defineSandbox({ name, create: (ctx) => provider.create("p", ctx) });
}

Deno.test("S19 an exclusive provider's Attempts never overlap, shared ones run beside them, one warning", async () => {
  const run = await startSandboxRun({
    cap: 4,
    exclusive: true,
    evals: ["e0", "e1", "e2"].map((id, i) => ({ id, durationMs: 20 + 11 * i })),
    experiments: [
      { id: "l1", attempts: 2 },
      { id: "l2" },
      { id: "s", attempts: 2, sandbox: sharedTemplate() },
    ],
  });
  await run.flush();
  const lane = run.scheduler.snapshot().lanes["custom:fake"]!;
  assert.deepEqual([lane.capacity, lane.held], [1, 1]);
  assert.ok(lane.waiting > 0);
  await run.finish();
  assert.deepEqual(run.log.allViolations(), []);
  assert.equal(run.log.starts().length, 15);
  const exclusive = new Set(["l1", "l2"]);
  let running = 0;
  let overlapWithShared = false;
  let shared = 0;
  for (const e of run.log.events) {
    if (e.type !== "attempt_start" && e.type !== "attempt_end") continue;
    const delta = e.type === "attempt_start" ? 1 : -1;
    if (exclusive.has(e.slot.experimentId)) running += delta;
    else shared += delta;
    assert.ok(running <= 1, "two exclusive Attempts overlapped");
    if (running === 1 && shared > 0) overlapWithShared = true;
  }
  assert.ok(overlapWithShared, "shared Attempts never ran beside the exclusive lane");
  const warnings = run.log.diagnostics("provider-exclusive-serial");
  assert.equal(warnings.length, 1);
  assert.deepEqual(warnings[0]!.data, { provider: "fake", laneKey: "custom:fake", concurrency: 4 });
});

Deno.test("S20 G = 1 with an exclusive custom provider emits no provider-exclusive-serial", async () => {
  const run = await startSandboxRun({
    cap: 1,
    exclusive: true,
    evals: [{ id: "a", durationMs: 5 }, { id: "b", durationMs: 5 }],
    experiments: [{ id: "x" }],
  });
  await run.finish();
  assert.deepEqual(run.log.diagnostics("provider-exclusive-serial"), []);
  assert.equal(run.log.starts().length, 2);
});

Deno.test("S21 an exclusive-lane waiter holds no global slot while shared work runs beside the holder", async () => {
  const run = await startSandboxRun({
    cap: 2,
    exclusive: true,
    evals: [{ id: "a" }, { id: "b" }, { id: "c" }],
    experiments: [
      { id: "l", evals: ["a", "b"] },
      { id: "d", evals: ["c"], sandbox: sharedTemplate() },
    ],
  });
  await run.flush();
  assert.deepEqual(run.holding(), ["l:a", "d:c"]);
  const s = run.scheduler.snapshot();
  assert.deepEqual(s.lanes["custom:fake"], { capacity: 1, held: 1, waiting: 1 });
  assert.equal(s.heldSlots, 2);
  assert.equal(s.globalWaiters, 0);
  assert.equal(s.running, 2);
  const rows = () => run.log.ofType("wait").map((w) => [w.scope, w.key, w.state]);
  assert.deepEqual(rows(), [["lane", "custom:fake", "started"]], "one run-scope row for the lane");
  run.release("l:a");
  await run.flush();
  assert.deepEqual(run.holding(), ["d:c", "l:b"]);
  assert.deepEqual(rows(), [["lane", "custom:fake", "started"], ["lane", "custom:fake", "ended"]]);
  await run.finish();
  assert.deepEqual(run.log.allViolations(), []);
});

Deno.test("S22 two experiments on one exclusive custom lane never overlap despite maxConcurrency 4", async () => {
  const run = await startSandboxRun({
    cap: 8,
    exclusive: true,
    evals: ["a", "b", "c"].map((id, i) => ({ id, durationMs: 10 + 3 * i })),
    experiments: [{ id: "p", maxConcurrency: 4 }, { id: "q", maxConcurrency: 4 }],
  });
  await run.flush();
  assert.equal(run.scheduler.snapshot().running, 1);
  await run.finish();
  assert.deepEqual(run.log.allViolations(), []);
  assert.equal(run.log.replay.peakRunning, 1);
  assert.equal(run.log.starts().length, 6);
  assert.equal(run.plan.slots[0]!.sandbox?.laneKey, "custom:fake");
});
