/**
 * TIME-3, INT-1: the runner stops waiting for a body that ignores its aborted signal after
 * ATTEMPT_ABORT_GRACE_MS and still tears the Attempt down in the order of sandboxes.md §3.3
 * (agent teardown, layer teardown, provider stop), keeping the cleanup diagnostics (step 14). Real
 * `local` provider (its sandbox roots are counted), fake runner clock for the grace.
 */
import assert from "node:assert/strict";
import { completeEvidenceCoverage, defineAgent } from "../../src/agents/mod.ts";
import { defineEval } from "../../src/discovery/mod.ts";
import { localSandbox } from "../../src/sandbox/mod.ts";
import { ATTEMPT_ABORT_GRACE_MS } from "../../src/_shared/mod.ts";
import { createFakeClock } from "../_fakes/clock.ts";
import { createFakeControl } from "../_fakes/control.ts";
import { localRoots, runSandboxEval } from "./_sandbox.ts";

/** A body that announces its start, then never settles and never reads `t.signal`. */
function stuckEval(calls: string[]) {
  const { promise: started, resolve } = Promise.withResolvers<void>();
  const evalDef = defineEval({
    test: () => {
      calls.push("body");
      resolve();
      return new Promise<void>(() => {});
    },
  });
  return { evalDef, started };
}

Deno.test("INT-1 an abandoned body's sandbox is torn down in order, with its cleanup diagnostics", async () => {
  await using roots = await localRoots();
  const clock = createFakeClock();
  const control = createFakeControl();
  const calls: string[] = [];
  const agent = defineAgent({
    name: "tracked",
    kind: "sandbox",
    evidenceCoverage: completeEvidenceCoverage,
    teardown: async () => {
      calls.push(`agent teardown, ${(await roots.left()).length} sandbox(es) left`);
    },
    send: () => Promise.resolve({ status: "completed", events: [] }),
  });
  const template = localSandbox().teardown(() => {
    calls.push("layer teardown");
    throw new Error("cannot clean");
  });
  const { evalDef, started } = stuckEval(calls);
  let settled = false;
  const running = runSandboxEval(roots, evalDef, { agent, template, control, clock })
    .finally(() => void (settled = true));
  await started;
  assert.equal((await roots.left()).length, 1);
  control.abort("interrupt");
  await clock.tickAsync(ATTEMPT_ABORT_GRACE_MS - 1);
  assert.equal(settled, false, "the body still has its grace");
  assert.deepEqual(calls, ["body"]);
  await clock.tickAsync(1);
  const result = await running;
  // The body never returned; the sandbox is gone anyway, agent teardown first (rule 36).
  assert.deepEqual(calls, ["body", "agent teardown, 1 sandbox(es) left", "layer teardown"]);
  assert.deepEqual(await roots.left(), []);
  assert.equal(result.verdict, "interrupted");
  const found = result.details.diagnostics.filter((d) => d.code === "sandbox-teardown-failed");
  assert.equal(found.length, 1);
  assert.deepEqual({ ...found[0]!.data, sandboxId: null }, {
    phase: "sandbox.teardown",
    timedOut: false,
    message: "cannot clean",
    sandboxId: null,
  });
  assert.match(String(found[0]!.data?.sandboxId), /^niceeval-local-/);
  assert.ok(result.details.logs.some((l) => l.text.startsWith("abandoned:")));
});

Deno.test("S123 a timed-out body that never returns is errored timeout (abandoned) and its sandbox removed", async () => {
  await using roots = await localRoots();
  const clock = createFakeClock();
  const control = createFakeControl();
  const calls: string[] = [];
  const agent = defineAgent({
    name: "plain",
    kind: "sandbox",
    evidenceCoverage: completeEvidenceCoverage,
    send: () => Promise.resolve({ status: "completed", events: [] }),
  });
  const { evalDef, started } = stuckEval(calls);
  const running = runSandboxEval(roots, evalDef, {
    agent,
    template: localSandbox(),
    control,
    clock,
  });
  await started;
  control.abort("timeout");
  await clock.tickAsync(ATTEMPT_ABORT_GRACE_MS);
  const result = await running;
  assert.deepEqual(await roots.left(), []);
  assert.equal(result.verdict, "errored");
  assert.equal(result.error?.code, "timeout");
  assert.match(result.error!.message, /did not return after its signal aborted; abandoned/);
  // The timed part ended at the abandonment; cleanup came after it.
  const cleanup = result.details.phases.find((p) => p.phase === "cleanup");
  assert.ok(cleanup && cleanup.startedAt >= result.startedAt + result.timedMs);
});
