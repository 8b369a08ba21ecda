/** The cleanup stack on fake time (sandboxes.md §3.3, rules 36–40). */
import assert from "node:assert/strict";
import {
  CLEANUP_TIMEOUT_MS,
  type CleanupKind,
  CleanupStack,
  FORCED_CLEANUP_TIMEOUT_MS,
} from "../../src/sandbox/mod.ts";
import { createFakeClock } from "../_fakes/clock.ts";

const never = () => new Promise<void>(() => {});

Deno.test("CleanupStack.unwind() runs entries last-in first-out", async () => {
  const clock = createFakeClock();
  const stack = new CleanupStack({ clock });
  const ran: string[] = [];
  for (const kind of ["slot-release", "provider-stop", "layer-teardown", "agent-teardown"]) {
    stack.push({ kind: kind as CleanupKind, run: () => void ran.push(kind) });
  }
  assert.deepEqual(await stack.unwind(), []);
  assert.deepEqual(ran, ["agent-teardown", "layer-teardown", "provider-stop", "slot-release"]);
  assert.equal(stack.size, 0);
});

Deno.test("CleanupStack.unwind() records a throwing entry and still runs provider stop", async () => {
  const clock = createFakeClock();
  const stack = new CleanupStack({ clock });
  const ran: string[] = [];
  stack.push({ kind: "slot-release", run: () => void ran.push("slot") });
  stack.push({ kind: "provider-stop", sandboxId: "sb-1", run: () => void ran.push("stop") });
  stack.push({
    kind: "layer-teardown",
    sandboxId: "sb-1",
    run: () => Promise.reject(new Error("teardown broke")),
  });
  stack.push({ kind: "prepare-cleanup", run: () => void ran.push("prepare") });
  const diagnostics = await stack.unwind();
  assert.deepEqual(ran, ["prepare", "stop", "slot"]);
  assert.deepEqual(diagnostics, [{
    code: "sandbox-teardown-failed",
    level: "warning",
    message: "sandbox.teardown failed: teardown broke",
    data: {
      phase: "sandbox.teardown",
      timedOut: false,
      message: "teardown broke",
      sandboxId: "sb-1",
    },
  }]);
  assert.equal(stack.failures, 1);
});

Deno.test("CleanupStack.unwind() abandons an entry after 30 s with a fresh signal and moves on", async () => {
  const clock = createFakeClock();
  const stack = new CleanupStack({ clock });
  const signals: { stop?: AbortSignal; hung?: AbortSignal } = {};
  stack.push({
    kind: "provider-stop",
    run: (signal) => {
      signals.stop = signal;
      return Promise.reject(new Error("daemon gone"));
    },
  });
  stack.push({
    kind: "agent-teardown",
    run: (signal) => {
      signals.hung = signal;
      return never();
    },
  });
  const unwinding = stack.unwind();
  await clock.tickAsync(CLEANUP_TIMEOUT_MS - 1);
  const stopSignal = (): AbortSignal | undefined => signals.stop;
  assert.equal(stopSignal(), undefined, "stop waits for the entry above it");
  assert.equal(signals.hung?.aborted, false);
  await clock.tickAsync(1);
  const diagnostics = await unwinding;
  assert.equal(signals.hung?.aborted, true);
  assert.notEqual(stopSignal(), signals.hung);
  assert.equal(stopSignal()?.aborted, false);
  assert.deepEqual(diagnostics.map((d) => [d.code, d.level, d.data.timedOut]), [
    ["agent-teardown-failed", "warning", true],
    ["sandbox-stop-failed", "error", false],
  ]);
});

Deno.test("CleanupStack.unwind() after a second interrupt skips all but stop and slot release", async () => {
  const clock = createFakeClock();
  const force = new AbortController();
  force.abort();
  const stack = new CleanupStack({ clock, force: force.signal });
  const ran: string[] = [];
  stack.push({ kind: "slot-release", run: () => void ran.push("slot") });
  stack.push({ kind: "provider-stop", run: never });
  stack.push({ kind: "lease-release", run: () => void ran.push("lease") });
  stack.push({ kind: "agent-teardown", run: () => void ran.push("agent") });
  const unwinding = stack.unwind();
  await clock.tickAsync(FORCED_CLEANUP_TIMEOUT_MS);
  const diagnostics = await unwinding;
  assert.deepEqual(ran, ["slot"]);
  assert.deepEqual(diagnostics.map((d) => [d.data.phase, d.data.timedOut, d.data.message]), [
    ["agent.teardown", false, "skipped after a second interrupt"],
    ["sandbox.reset", false, "skipped after a second interrupt"],
    ["sandbox.stop", true, "did not finish within 5s"],
  ]);
});

Deno.test("CleanupStack.unwind() shortens a running stop to 5 s when the second interrupt arrives", async () => {
  const clock = createFakeClock();
  const force = new AbortController();
  const stack = new CleanupStack({ clock, force: force.signal });
  const seen: { teardown?: AbortSignal } = {};
  stack.push({ kind: "provider-stop", run: never });
  stack.push({ kind: "layer-teardown", run: (s) => (seen.teardown = s, never()) });
  let done = false;
  const unwinding = stack.unwind().finally(() => void (done = true));
  await clock.tickAsync(1000);
  force.abort();
  await clock.flush();
  assert.equal(seen.teardown?.aborted, true, "a non-essential entry is abandoned at once");
  await clock.tickAsync(FORCED_CLEANUP_TIMEOUT_MS - 1);
  assert.equal(done, false);
  await clock.tickAsync(1);
  assert.equal(done, true);
  const diagnostics = await unwinding;
  assert.deepEqual(diagnostics.map((d) => [d.code, d.data.message]), [
    ["sandbox-teardown-failed", "abandoned after a second interrupt"],
    ["sandbox-stop-failed", "did not finish within 5s"],
  ]);
});
