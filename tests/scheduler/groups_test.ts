/** Section G of scenarios.md: eval groups (GRP-1 … GRP-6, CHAIN-1), on the fake provider. */
import assert from "node:assert/strict";
import { UsageError } from "../../src/_shared/mod.ts";
import { ledgerGitArgv, type SandboxLayer, sandboxLayer } from "../../src/sandbox/mod.ts";
import { outcomeSummary } from "./_harness.ts";
import { type SandboxRunSpec, startSandboxRun } from "./_sandbox_harness.ts";

function groupSpec(
  members: readonly string[],
  extra: Partial<SandboxRunSpec> = {},
): SandboxRunSpec {
  return {
    cap: 4,
    evals: [{ id: "g/a", groupId: "g", durationMs: 10 }, {
      id: "g/b",
      groupId: "g",
      durationMs: 10,
    }],
    experiments: [{ id: "x", attempts: 2 }],
    groups: [{ id: "g", onUnavailable: "stop-group", members }],
    ...extra,
  };
}

/**
 * One lane (cap 1) over group `g` of two 5 ms members, `attempts` each, meeting an unavailable
 * sandbox with `onUnavailable`; `layer` is the group's own layer.
 */
function laneSpec(
  onUnavailable: "stop-group" | "replace-sandbox",
  options: { attempts?: number; layer?: SandboxLayer; provider?: SandboxRunSpec["provider"] } = {},
): SandboxRunSpec {
  return {
    cap: 1,
    evals: [{ id: "g/a", groupId: "g", durationMs: 5 }, { id: "g/b", groupId: "g", durationMs: 5 }],
    experiments: [{ id: "x", ...(options.attempts ? { attempts: options.attempts } : {}) }],
    groups: [{
      id: "g",
      onUnavailable,
      members: ["g/a", "g/b"],
      ...(options.layer ? { sandbox: options.layer } : {}),
    }],
    ...(options.provider ? { provider: options.provider } : {}),
  };
}

Deno.test("S43 a group's starts are a#0, a#1, b#0, b#1, one at a time, whatever the member order", async () => {
  const orders: string[][] = [];
  const poolKeys: (string | null)[] = [];
  for (const members of [["g/b", "g/a"], ["g/a", "g/b"]]) {
    const run = await startSandboxRun(groupSpec(members));
    await run.finish();
    assert.deepEqual(run.log.allViolations(), []);
    assert.equal(run.log.replay.peakRunning, 1);
    orders.push(run.log.starts());
    poolKeys.push(run.plan.slots[0]!.sandbox!.poolKey);
    // GRP-1: one shared physical sandbox for the whole lane.
    assert.equal(run.provider.handles.length, 1);
    assert.equal(run.provider.handles[0]!.stopped, true);
  }
  assert.deepEqual(orders[0], ["x:g/a#0", "x:g/a#1", "x:g/b#0", "x:g/b#1"]);
  assert.deepEqual(orders[1], orders[0]);
  assert.equal(poolKeys[0], poolKeys[1]);
});

Deno.test("S44 two groups overlap with each other, each serially, under maxConcurrency 4", async () => {
  const run = await startSandboxRun({
    cap: 4,
    evals: [
      { id: "g/a", groupId: "g" },
      { id: "g/b", groupId: "g" },
      { id: "h/a", groupId: "h" },
      { id: "h/b", groupId: "h" },
    ],
    experiments: [{ id: "x", maxConcurrency: 4 }],
    groups: [
      { id: "g", onUnavailable: "stop-group", members: ["g/a", "g/b"] },
      { id: "h", onUnavailable: "stop-group", members: ["h/a", "h/b"] },
    ],
  });
  await run.flush();
  assert.deepEqual(run.holding(), ["x:g/a", "x:h/a"]);
  run.release("x:g/a");
  await run.flush();
  assert.deepEqual(run.holding(), ["x:h/a", "x:g/b"]);
  await run.finish();
  assert.deepEqual(run.log.allViolations(), []);
  assert.equal(run.log.replay.peakRunning, 2);
  assert.equal(run.provider.handles.length, 2);
});

Deno.test("S45 grouped evals with sandboxReuse fail planning before any create", async () => {
  const spec = groupSpec(["g/a", "g/b"], { experiments: [{ id: "x", sandboxReuse: true }] });
  const error = await startSandboxRun(spec).then(
    () => assert.fail("expected a UsageError"),
    (e: unknown) => e,
  );
  assert.ok(error instanceof UsageError);
  assert.equal(error.code, "eval-group-sandbox-reuse-conflict");
});

Deno.test("S46 grouped evals under a direct agent fail planning with eval-group-direct-agent", async () => {
  const spec = groupSpec(["g/a", "g/b"], {
    experiments: [{ id: "x", direct: true, sandbox: null }],
  });
  const error = await startSandboxRun(spec).then(
    () => assert.fail("expected a UsageError"),
    (e: unknown) => e,
  );
  assert.ok(error instanceof UsageError);
  assert.equal(error.code, "eval-group-direct-agent");
});

Deno.test("S47 stop-group: a failed first create errors it, skips the other 3, another group completes", async () => {
  const run = await startSandboxRun({
    cap: 1,
    evals: [
      { id: "g/a", groupId: "g", durationMs: 5 },
      { id: "g/b", groupId: "g", durationMs: 5 },
      { id: "h/a", groupId: "h", durationMs: 5 },
    ],
    experiments: [{ id: "x", attempts: 2 }],
    groups: [
      { id: "g", onUnavailable: "stop-group", members: ["g/a", "g/b"] },
      { id: "h", onUnavailable: "stop-group", members: ["h/a"] },
    ],
    provider: { failures: ["fatal"] },
  });
  const outcomes = await run.finish();
  assert.deepEqual(outcomeSummary(run.plan, outcomes), [
    "x:g/a#0 errored",
    "x:g/a#1 not-dispatched:group-unavailable",
    "x:g/b#0 not-dispatched:group-unavailable",
    "x:g/b#1 not-dispatched:group-unavailable",
    "x:h/a#0 passed",
    "x:h/a#1 passed",
  ]);
  const failed = outcomes[0]!;
  assert.ok(failed.kind === "executed");
  assert.equal(failed.result.error?.code, "sandbox-create-failed");
  const unavailable = run.log.diagnostics("eval-group-unavailable");
  assert.equal(unavailable.length, 1);
  assert.equal(unavailable[0]!.level, "error");
  assert.deepEqual(unavailable[0]!.data, {
    experimentId: "x",
    evalGroupId: "g",
    phase: "sandbox.create",
    unstarted: 3,
  });
  assert.deepEqual(run.log.allViolations(), []);
});

Deno.test("S48 replace-sandbox: one failure gets a replacement, a second in that phase stops", async (t) => {
  const spec = (failures: number): SandboxRunSpec =>
    laneSpec("replace-sandbox", {
      attempts: 2,
      provider: { failures: Array(failures).fill("fatal") },
    });
  await t.step("one create failure: the next slot creates a replacement", async () => {
    const run = await startSandboxRun(spec(1));
    const outcomes = await run.finish();
    assert.deepEqual(outcomeSummary(run.plan, outcomes), [
      "x:g/a#0 errored",
      "x:g/a#1 passed",
      "x:g/b#0 passed",
      "x:g/b#1 passed",
    ]);
    const warnings = run.log.diagnostics("eval-group-replacing-sandbox");
    assert.equal(warnings.length, 1);
    assert.deepEqual(warnings[0]!.data, {
      experimentId: "x",
      evalGroupId: "g",
      phase: "sandbox.create",
    });
    assert.equal(run.provider.handles.length, 1);
    assert.deepEqual(run.log.diagnostics("eval-group-unavailable"), []);
  });
  await t.step("a second create failure stops the lane", async () => {
    const run = await startSandboxRun(spec(2));
    const outcomes = await run.finish();
    assert.deepEqual(outcomeSummary(run.plan, outcomes), [
      "x:g/a#0 errored",
      "x:g/a#1 errored",
      "x:g/b#0 not-dispatched:group-unavailable",
      "x:g/b#1 not-dispatched:group-unavailable",
    ]);
    assert.equal(run.log.diagnostics("eval-group-replacing-sandbox").length, 1);
    const stopped = run.log.diagnostics("eval-group-unavailable");
    assert.equal(stopped.length, 1);
    assert.equal(stopped[0]!.data?.unstarted, 2);
  });
});

Deno.test("S49 a carried group ordinal never runs and the next lane slot does not wait for it", async () => {
  const run = await startSandboxRun({
    cap: 2,
    evals: [{ id: "g/a", groupId: "g" }, { id: "g/b", groupId: "g" }],
    experiments: [{ id: "x", carried: ["g/a#0"] }],
    groups: [{ id: "g", onUnavailable: "stop-group", members: ["g/a", "g/b"] }],
  });
  await run.flush();
  assert.deepEqual(run.holding(), ["x:g/b"]);
  const outcomes = await run.finish();
  assert.deepEqual(outcomeSummary(run.plan, outcomes), ["x:g/a#0 carried", "x:g/b#0 passed"]);
  assert.deepEqual(run.log.starts(), ["x:g/b#0"]);
});

Deno.test("GRP-6 stop-group: a failed workdir reset after a member stops the lane", async () => {
  const reset = ledgerGitArgv(["reset", "-q", "--hard", "niceeval-anchor"]).join(" ");
  const run = await startSandboxRun(laneSpec("stop-group", {
    provider: {
      exec: (command) => ({
        exitCode: "argv" in command && command.argv.join(" ") === reset ? 1 : 0,
      }),
    },
  }));
  const outcomes = await run.finish();
  // Cleanup never changes a verdict (rule 39): the member that ran keeps its own.
  assert.deepEqual(outcomeSummary(run.plan, outcomes), [
    "x:g/a#0 passed",
    "x:g/b#0 not-dispatched:group-unavailable",
  ]);
  const first = outcomes[0]!;
  assert.ok(first.kind === "executed");
  assert.ok(first.result.details.diagnostics.some((d) => d.code === "sandbox-reset-failed"));
  const stopped = run.log.diagnostics("eval-group-unavailable");
  assert.deepEqual(stopped.map((d) => d.data), [
    { experimentId: "x", evalGroupId: "g", phase: "sandbox.reset", unstarted: 1 },
  ]);
  assert.equal(run.provider.handles.length, 1);
  assert.equal(run.provider.handles[0]!.stopped, true);
});

Deno.test("GRP-6 replace-sandbox: a failed setup hook retires the sandbox and the next slot gets a new one", async () => {
  let setups = 0;
  const layer = sandboxLayer().setup(() => {
    setups++;
    if (setups === 1) throw new Error("first setup broke");
  });
  const run = await startSandboxRun(laneSpec("replace-sandbox", { attempts: 2, layer }));
  const outcomes = await run.finish();
  assert.deepEqual(outcomeSummary(run.plan, outcomes), [
    "x:g/a#0 errored",
    "x:g/a#1 passed",
    "x:g/b#0 passed",
    "x:g/b#1 passed",
  ]);
  const failed = outcomes[0]!;
  assert.ok(failed.kind === "executed");
  assert.equal(failed.result.error?.code, "sandbox-setup-failed");
  assert.deepEqual(run.log.diagnostics("eval-group-replacing-sandbox").map((d) => d.data), [
    { experimentId: "x", evalGroupId: "g", phase: "sandbox.setup" },
  ]);
  // Setup runs once per physical sandbox: the broken one and its replacement.
  assert.equal(setups, 2);
  assert.deepEqual(run.provider.handles.map((h) => h.stopped), [true, true]);
  assert.deepEqual([...new Set(run.uses.map((u) => u.sandbox))], ["fake-2"]);
});

Deno.test("GRP-6 replace-sandbox: a second prepare failure stops the lane", async () => {
  const layer = sandboxLayer().prepare(() => Promise.reject(new Error("prepare broke")));
  const run = await startSandboxRun(laneSpec("replace-sandbox", { attempts: 2, layer }));
  const outcomes = await run.finish();
  assert.deepEqual(outcomeSummary(run.plan, outcomes), [
    "x:g/a#0 errored",
    "x:g/a#1 errored",
    "x:g/b#0 not-dispatched:group-unavailable",
    "x:g/b#1 not-dispatched:group-unavailable",
  ]);
  assert.deepEqual(run.log.diagnostics("eval-group-replacing-sandbox").map((d) => d.data), [
    { experimentId: "x", evalGroupId: "g", phase: "sandbox.prepare" },
  ]);
  assert.deepEqual(run.log.diagnostics("eval-group-unavailable").map((d) => d.data), [
    { experimentId: "x", evalGroupId: "g", phase: "sandbox.prepare", unstarted: 2 },
  ]);
  // The first sandbox was retired, not reset for the next member.
  assert.equal(run.provider.handles.length, 2);
  assert.deepEqual(run.uses, []);
});

Deno.test("planning rejects group members whose own layer declares hooks (eval-group-incompatible)", async () => {
  const hooked = sandboxLayer().setup(() => {});
  const error = await startSandboxRun({
    cap: 1,
    evals: [{ id: "g/a", groupId: "g", sandbox: hooked }, { id: "g/b", groupId: "g" }],
    experiments: [{ id: "x" }],
    groups: [{ id: "g", onUnavailable: "stop-group", members: ["g/a", "g/b"] }],
  }).then(() => assert.fail("expected a UsageError"), (e: unknown) => e);
  assert.ok(error instanceof UsageError);
  assert.equal(error.code, "eval-group-incompatible");
  assert.match(error.message, /"g\/a"/);
});
