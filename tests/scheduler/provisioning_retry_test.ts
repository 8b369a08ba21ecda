/**
 * Section P of scenarios.md for provisioning: sandbox create retries keep the global slot and count
 * as running, never as backoff (RETRY-6, WAIT-1 W13, CHAIN-11). Real scheduler, real attempt
 * runner, fake provider, fake clock.
 */
import assert from "node:assert/strict";
import { ProviderError } from "../../src/sandbox/mod.ts";
import { outcomeSummary } from "./_harness.ts";
import { startSandboxRun } from "./_sandbox_harness.ts";

Deno.test("S118 RETRY-6 WAIT-1 CHAIN-11: 429 twice then success runs the Attempt; the slot is held and counted running, backoff 0", async () => {
  const run = await startSandboxRun({
    cap: 1,
    evals: [{ id: "a", durationMs: 5 }],
    experiments: [{ id: "x" }],
    provider: { failures: ["rate_limit", "rate_limit"] },
  });
  // Sampled at every step of fake time from the first try until the body begins.
  const samples: string[] = [];
  for (let i = 0; i < 200 && run.uses.length === 0; i++) {
    await run.clock.tickAsync(50);
    const tries = run.provider.tries.length;
    if (tries === 0 || run.uses.length > 0) continue;
    const s = run.scheduler.snapshot();
    const c = run.log.counters;
    samples.push(
      `try ${tries}: held ${s.heldSlots} running ${s.running}/${c.running} backoff ${s.backoff}/${c.backoff}`,
    );
  }
  // In every sampled wait the Attempt held its global slot and was counted `running`, not backoff.
  const states = new Set(samples.map((s) => s.replace(/^try \d: /, "")));
  assert.deepEqual([...states], ["held 1 running 1/1 backoff 0/0"]);
  // Both retry waits (W13) were observed, then the third try succeeded and the body ran.
  assert.ok(samples.some((s) => s.startsWith("try 1:")), samples.join("\n"));
  assert.ok(samples.some((s) => s.startsWith("try 2:")), samples.join("\n"));
  assert.equal(run.provider.tries.length, 3, "two rate-limited tries, then the third succeeds");
  assert.equal(run.uses[0]?.name, "x:a", "the Attempt runs its body");
  assert.deepEqual(run.log.ofType("backoff"), [], "no send backoff was ever reported");
  const outcomes = await run.finish();
  assert.deepEqual(outcomeSummary(run.plan, outcomes), ["x:a#0 passed"]);
  assert.deepEqual(run.log.allViolations(), []);
  // cli.md §9: the result's retries list the provisioning retries, by class.
  assert.deepEqual(run.log.ofType("attempt_end")[0]!.result.retries, [
    { phase: "sandbox.create", reason: "rate_limit", count: 2 },
  ]);
});

Deno.test("RETRY-6 a create rate-limited on every try errors sandbox-create-failed and keeps its 3 retries in the result", async () => {
  const run = await startSandboxRun({
    cap: 1,
    evals: [{ id: "a", durationMs: 5 }],
    experiments: [{ id: "x" }],
    provider: { failures: ["rate_limit", "rate_limit", "rate_limit", "rate_limit"] },
  });
  for (let i = 0; i < 400 && run.log.ofType("attempt_end").length === 0; i++) {
    await run.clock.tickAsync(50);
  }
  const outcomes = await run.finish();
  assert.equal(run.provider.tries.length, 4, "every try of the create was rate limited");
  assert.deepEqual(outcomeSummary(run.plan, outcomes), ["x:a#0 errored"]);
  const { result } = run.log.ofType("attempt_end")[0]!;
  assert.equal(result.error?.code, "sandbox-create-failed");
  assert.deepEqual(result.retries, [{ phase: "sandbox.create", reason: "rate_limit", count: 3 }]);
});

Deno.test("S119 RETRY-6: an ambiguous create failure from a provider that cannot reconcile is not retried", async () => {
  const run = await startSandboxRun({
    cap: 1,
    evals: [{ id: "a", durationMs: 5 }],
    experiments: [{ id: "x" }],
    provider: { failures: ["ambiguous"], reconcile: false },
  });
  const outcomes = await run.finish();
  assert.equal(run.provider.tries.length, 1, "no second try");
  assert.deepEqual(run.uses, [], "the body never ran");
  assert.deepEqual(outcomeSummary(run.plan, outcomes), ["x:a#0 errored"]);
  const { result } = run.log.ofType("attempt_end")[0]!;
  const { error } = result;
  assert.equal(error?.code, "sandbox-create-failed");
  assert.equal(error?.phase, "sandbox.create");
  assert.equal(error?.scope, "attempt");
  assert.match(error!.message, /after 1 try \(ambiguous\)/);
  // Neither a retry delay nor a reconcile attempt came before the failure.
  assert.equal(result.timedMs, 0);
  assert.deepEqual(result.details.diagnostics.map((d) => d.code), []);
});

Deno.test("S119 RETRY-6: a missing-credentials create failure is not retried and has scope experiment", async () => {
  const run = await startSandboxRun({
    cap: 1,
    evals: [{ id: "a", durationMs: 5 }],
    experiments: [{ id: "x" }],
  });
  assert.equal(run.provider.tries.length, 0, "replaced before the first try");
  run.provider.create = (_plan, ctx) => {
    run.provider.tries.push(ctx.owner.provisionToken);
    return Promise.reject(
      new ProviderError("fatal", "missing credentials: set FAKE_API_KEY", { scope: "experiment" }),
    );
  };
  const outcomes = await run.finish();
  assert.equal(run.provider.tries.length, 1, "no second try");
  assert.deepEqual(outcomeSummary(run.plan, outcomes), ["x:a#0 errored"]);
  const { result } = run.log.ofType("attempt_end")[0]!;
  const { error } = result;
  assert.equal(error?.code, "sandbox-create-failed");
  assert.equal(error?.scope, "experiment");
  assert.match(error!.message, /after 1 try \(fatal\): missing credentials/);
  assert.equal(result.timedMs, 0, "no retry delay");
});
