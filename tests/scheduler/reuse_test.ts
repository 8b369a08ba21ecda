/** Section H of scenarios.md: reuse pools (REUSE-1 … REUSE-6), on the fake provider. */
import assert from "node:assert/strict";
import { ledgerGitArgv } from "../../src/sandbox/mod.ts";
import type { ExecCommand } from "../../src/sandbox/mod.ts";
import { outcomeSummary } from "./_harness.ts";
import { type SandboxRun, startSandboxRun } from "./_sandbox_harness.ts";

const RESET = ledgerGitArgv(["reset", "-q", "--hard", "niceeval-anchor"]).join(" ");

function isReset(command: ExecCommand): boolean {
  return "argv" in command && command.argv.join(" ") === RESET;
}

/** Sandbox ids whose users overlapped (a sandbox serving two Attempts at once). */
function overlaps(run: SandboxRun): string[] {
  const busy = new Map<string, number>();
  const out: string[] = [];
  for (const u of run.uses) {
    const n = (busy.get(u.sandbox) ?? 0) + (u.event === "begin" ? 1 : -1);
    busy.set(u.sandbox, n);
    if (n > 1) out.push(u.sandbox);
  }
  return out;
}

Deno.test("S51 a reuse pool creates at most maxConcurrency sandboxes and never shares one at once", async () => {
  const run = await startSandboxRun({
    cap: 10,
    evals: ["a", "b", "c", "d", "e", "f"].map((id, i) => ({ id, durationMs: 10 + 7 * i })),
    experiments: [{ id: "x", sandboxReuse: true, maxConcurrency: 2 }],
  });
  const outcomes = await run.finish();
  assert.ok(outcomes.every((o) => o.kind === "executed" && o.result.verdict === "passed"));
  assert.equal(run.provider.handles.length, 2);
  assert.equal(new Set(run.uses.map((u) => u.sandbox)).size, 2);
  assert.deepEqual(overlaps(run), []);
  assert.equal(run.log.replay.peakRunning, 2);
  // REUSE-6: both stopped once, at the experiment's end.
  assert.deepEqual(run.provider.handles.map((h) => [h.stopped, h.stopCalls]), [
    [true, 1],
    [true, 1],
  ]);
  assert.deepEqual(run.log.allViolations(), []);
});

Deno.test("S52 a failed workdir reset retires the sandbox with sandbox-reset-failed", async () => {
  const run = await startSandboxRun({
    cap: 1,
    evals: [{ id: "a", durationMs: 5 }, { id: "b", durationMs: 5 }],
    experiments: [{ id: "x", sandboxReuse: true }],
    provider: { exec: (command) => ({ exitCode: isReset(command) ? 1 : 0 }) },
  });
  const outcomes = await run.finish();
  assert.deepEqual(outcomeSummary(run.plan, outcomes), ["x:a#0 passed", "x:b#0 passed"]);
  assert.equal(run.provider.handles.length, 2);
  assert.deepEqual([...new Set(run.uses.map((u) => u.sandbox))], ["fake-1", "fake-2"]);
  assert.equal(run.provider.handles[0]!.stopped, true);
  const first = outcomes[0]!;
  assert.ok(first.kind === "executed");
  const reset = first.result.details.diagnostics.filter((d) => d.code === "sandbox-reset-failed");
  assert.equal(reset.length, 1);
  assert.equal(reset[0]!.level, "warning");
  assert.equal(reset[0]!.data?.sandboxId, "fake-1");
});

Deno.test("S53 an Attempt that times out retires its pooled sandbox instead of resetting it", async () => {
  const run = await startSandboxRun({
    cap: 1,
    evals: [{ id: "slow", durationMs: 5_000, timeoutMs: 100 }, { id: "quick", durationMs: 5 }],
    experiments: [{ id: "x", sandboxReuse: true }],
  });
  const outcomes = await run.finish();
  const slow = outcomes[0]!;
  assert.ok(slow.kind === "executed");
  assert.equal(slow.result.error?.code, "timeout");
  const first = run.provider.handles[0]!;
  assert.equal(first.execs.some((e) => isReset(e.command)), false);
  assert.equal(first.stopped, true);
  assert.equal(run.provider.handles.length, 2);
  assert.deepEqual(outcomeSummary(run.plan, outcomes)[1], "x:quick#0 passed");
});

Deno.test("S54 a pooled sandbox whose lifetime cannot cover the next deadline is replaced first", async () => {
  const asked: [string, number][] = [];
  const run = await startSandboxRun({
    cap: 1,
    evals: [{ id: "a", durationMs: 5 }, { id: "b", durationMs: 5 }],
    experiments: [{ id: "x", sandboxReuse: true, timeoutMs: 60_000 }],
    provider: {
      ensureLifetime: (min, handle) => {
        asked.push([handle.id, min]);
        // fake-1 had enough left for its first lease only.
        const used = asked.filter(([id]) => id === handle.id).length;
        return handle.id === "fake-1" && used > 1
          ? { ready: false, reason: "expires in 20 s" }
          : { ready: true };
      },
    },
  });
  const outcomes = await run.finish();
  assert.deepEqual(outcomeSummary(run.plan, outcomes), ["x:a#0 passed", "x:b#0 passed"]);
  assert.deepEqual(asked, [["fake-1", 90_000], ["fake-1", 90_000], ["fake-2", 90_000]]);
  assert.deepEqual(run.uses.filter((u) => u.event === "begin").map((u) => u.sandbox), [
    "fake-1",
    "fake-2",
  ]);
  assert.equal(run.provider.handles[0]!.stopped, true);
});

Deno.test("an interrupt while a pool instance is created closes the slot interrupted, never started", async () => {
  const run = await startSandboxRun({
    cap: 1,
    evals: [{ id: "a", durationMs: 5 }],
    experiments: [{ id: "x", sandboxReuse: true }],
    provider: { createLatencyMs: 1_000 },
  });
  await run.clock.tickAsync(500);
  assert.equal(run.provider.tries.length, 1);
  assert.equal(run.scheduler.snapshot().running, 0);
  run.interrupt.abort();
  const outcomes = await run.finish();
  assert.deepEqual(outcomeSummary(run.plan, outcomes), ["x:a#0 not-dispatched:interrupted"]);
  assert.deepEqual(run.log.starts(), []);
  assert.deepEqual(run.log.allViolations(), []);
});

Deno.test("a pooled Attempt starts its deadline when the lease is handed over (rule 46)", async () => {
  const run = await startSandboxRun({
    cap: 1,
    evals: [{ id: "a", durationMs: 50, timeoutMs: 100 }],
    experiments: [{ id: "x", sandboxReuse: true }],
    provider: { createLatencyMs: 1_000 },
  });
  const t0 = run.clock.now();
  const outcomes = await run.finish();
  const start = run.log.ofType("attempt_start")[0]!;
  assert.equal(start.at - t0, 1_000);
  assert.ok(outcomes[0]!.kind === "executed" && outcomes[0]!.result.verdict === "passed");
});
