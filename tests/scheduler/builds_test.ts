/**
 * Section D of scenarios.md: image/template builds in the admission chain (CHAIN-2, W2,
 * sandboxes.md rules 63–66), through real planning and the real scheduler with a fake provider
 * that has artifacts. The fake is registered under the `local` name so that `localSandbox()` layers
 * reach it; each name in `passEnv` is one build key of the template.
 */
import assert from "node:assert/strict";
import { sleep } from "../../src/_shared/mod.ts";
import { localSandbox, type ProviderLoader } from "../../src/sandbox/mod.ts";
import { BUILD_TIMEOUT_MS } from "../../src/scheduler/mod.ts";
import { createFakeProvider, type FakeProvider } from "../_fakes/provider.ts";
import { outcomeSummary } from "./_harness.ts";
import { type SandboxRun, type SandboxRunSpec, startSandboxRun } from "./_sandbox_harness.ts";

/** One build the test settles by hand. */
interface PendingBuild {
  readonly key: string;
  readonly signal: AbortSignal;
  resolve(): void;
  reject(error: Error): void;
}

/** A fake provider with artifacts, and every `prepareArtifacts` call it got. */
interface BuildingProvider {
  readonly loaders: Readonly<Record<string, ProviderLoader>>;
  /** Calls in start order. */
  readonly builds: PendingBuild[];
  /** Builds in progress now, and the most at once. */
  readonly running: () => number;
  readonly peak: () => number;
  /** Set by `startBuilding` once the harness made its clock. */
  provider?: FakeProvider;
}

/** A fake `local` provider whose template keys are its `passEnv` names, lowercased. */
function buildingProvider(o: { buildMs?: number } = {}): BuildingProvider {
  const builds: PendingBuild[] = [];
  let running = 0;
  let peak = 0;
  const out: BuildingProvider = {
    builds,
    running: () => running,
    peak: () => peak,
    loaders: {
      local: ({ clock }) => {
        const fake = createFakeProvider({ clock, name: "builder" });
        out.provider = fake;
        return Promise.resolve({
          ...fake,
          plan: (spec: unknown) => {
            const keys = (spec as { passEnv: readonly string[] }).passEnv.map((n) =>
              n.toLowerCase()
            );
            return Promise.resolve({
              plan: "fake-plan",
              identity: keys.join(","),
              buildKeys: keys,
            });
          },
          prepareArtifacts: (_plan: unknown, key: string, ctx: { signal: AbortSignal }) => {
            running++;
            peak = Math.max(peak, running);
            return new Promise<{ source: "built" }>((resolve, reject) => {
              const done = () => running--;
              builds.push({
                key,
                signal: ctx.signal,
                resolve: () => {
                  done();
                  resolve({ source: "built" });
                },
                reject: (error) => {
                  done();
                  reject(error);
                },
              });
              if (o.buildMs !== undefined) {
                sleep(clock, o.buildMs, { signal: ctx.signal }).then(
                  () => builds.find((b) => b.key === key)!.resolve(),
                  () => undefined,
                );
              }
            });
          },
        });
      },
    },
  };
  return out;
}

function start(
  builder: BuildingProvider,
  spec: Omit<SandboxRunSpec, "providers">,
): Promise<SandboxRun> {
  return startSandboxRun({ ...spec, providers: builder.loaders });
}

Deno.test("S26 an Eval without a build runs to completion while another Eval's build is pending", async () => {
  const builder = buildingProvider();
  const run = await start(builder, {
    cap: 2,
    evals: [
      { id: "a", sandbox: localSandbox({ passEnv: ["IMAGE_A"] }) },
      { id: "b", sandbox: localSandbox() },
    ],
    experiments: [{ id: "x", maxConcurrency: 1, sandbox: null }],
  });
  await run.flush();
  assert.deepEqual(builder.builds.map((b) => b.key), ["image_a"]);
  // a comes first by key, yet it waits for its build holding neither a permit nor a slot (W2).
  assert.deepEqual(run.holding(), ["x:b"]);
  const s = run.scheduler.snapshot();
  assert.deepEqual(s.experimentPermits.x, { capacity: 1, held: 1, waiting: 0 });
  assert.deepEqual([s.heldSlots, s.running, s.queued], [1, 1, 1]);
  assert.deepEqual(s.builds, { running: 1, pending: 0, done: 0, failed: 0 });
  run.release("x:b");
  await run.flush();
  assert.deepEqual(run.log.ofType("attempt_end").map((e) => e.slot.evalId), ["b"]);
  assert.deepEqual(run.log.starts(), ["x:b#0"]);
  assert.equal(run.scheduler.snapshot().queued, 1);
  builder.builds[0]!.resolve();
  await run.flush();
  assert.deepEqual(run.holding(), ["x:a"]);
  const outcomes = await run.finish();
  assert.deepEqual(outcomeSummary(run.plan, outcomes), ["x:a#0 passed", "x:b#0 passed"]);
  assert.deepEqual(run.log.allViolations(), []);
  assert.equal(builder.builds.length, 1);
});

Deno.test("S27 a failing build errors its dependent Attempts without a locator while others run", async () => {
  const builder = buildingProvider();
  const run = await start(builder, {
    cap: 2,
    evals: [
      { id: "a", sandbox: localSandbox({ passEnv: ["IMAGE_A"] }) },
      { id: "b", sandbox: localSandbox(), durationMs: 10 },
    ],
    experiments: [{ id: "x", attempts: 2, sandbox: null }],
  });
  await run.flush();
  assert.deepEqual(builder.builds.map((b) => b.key), ["image_a"]);
  builder.builds[0]!.reject(new Error("ERR_PNPM_IGNORED_BUILDS: esbuild"));
  const outcomes = await run.finish();
  assert.deepEqual(outcomeSummary(run.plan, outcomes), [
    "x:a#0 errored-undispatched:sandbox-build-failed",
    "x:a#1 errored-undispatched:sandbox-build-failed",
    "x:b#0 passed",
    "x:b#1 passed",
  ]);
  assert.deepEqual(run.log.starts(), ["x:b#0", "x:b#1"]);
  const errored = run.log.ofType("slot_errored");
  assert.deepEqual(
    errored.map((e) => [e.slot.evalId, e.slot.ordinal, e.code, e.phase]),
    [["a", 0, "sandbox-build-failed", "sandbox.build"], [
      "a",
      1,
      "sandbox-build-failed",
      "sandbox.build",
    ]],
  );
  assert.match(errored[0]!.message, /ERR_PNPM_IGNORED_BUILDS: esbuild/);
  const diagnostics = run.log.diagnostics("sandbox-build-failed");
  assert.deepEqual(
    diagnostics.map((d) => [d.level, d.persist, d.data]),
    [0, 1].map((attempt) => [
      "error",
      true,
      {
        schema: "niceeval.sandbox-build-failure/v1",
        buildKey: "image_a",
        evalId: "a",
        attempt,
        phase: "sandbox.build",
        message: "ERR_PNPM_IGNORED_BUILDS: esbuild",
      },
    ]),
  );
  // No sandbox was created for a: only b's two Attempts reached the provider.
  assert.equal(builder.provider!.handles.length, 2);
  assert.deepEqual(run.log.allViolations(), []);
});

Deno.test("S27 a provider build error's detailFor() gives each slot's diagnostic detail (rule 67)", async () => {
  const builder = buildingProvider();
  const run = await start(builder, {
    cap: 1,
    evals: [{ id: "a", sandbox: localSandbox({ passEnv: ["IMAGE_A"] }) }],
    experiments: [{ id: "x", attempts: 2, sandbox: null }],
  });
  await run.flush();
  const error = Object.assign(new Error("RUN failed"), {
    detailFor: (evalId: string, attempt: number) => ({
      schema: "niceeval.sandbox-build-failure/v1",
      evalId,
      attempt,
      errorCode: "ERR_EXAMPLE",
      remediation: "docker-disk-full",
    }),
  });
  builder.builds[0]!.reject(new Error("wrapped", { cause: error }));
  await run.finish();
  const data = run.log.diagnostics("sandbox-build-failed").map((d) => d.data);
  assert.deepEqual(
    data,
    [0, 1].map((attempt) => ({
      schema: "niceeval.sandbox-build-failure/v1",
      evalId: "a",
      attempt,
      errorCode: "ERR_EXAMPLE",
      remediation: "docker-disk-full",
    })),
  );
});

Deno.test("runPlan() builds each key once, at most maxBuildConcurrency at a time, in priority order", async () => {
  const builder = buildingProvider({ buildMs: 1000 });
  const run = await start(builder, {
    cap: 4,
    maxBuildConcurrency: 2,
    evals: [
      { id: "a", sandbox: localSandbox({ passEnv: ["K1", "K2"] }), durationMs: 10 },
      { id: "b", sandbox: localSandbox({ passEnv: ["K2", "K3"] }), durationMs: 10 },
      { id: "c", sandbox: localSandbox({ passEnv: ["K3"] }), durationMs: 10 },
    ],
    experiments: [{ id: "x", attempts: 2, sandbox: null }],
  });
  await run.flush();
  assert.deepEqual(builder.builds.map((b) => b.key), ["k1", "k2"]);
  assert.deepEqual(run.scheduler.snapshot().builds, { running: 2, pending: 1, done: 0, failed: 0 });
  await run.clock.tickAsync(1000);
  await run.flush();
  // a had both keys: it runs now; b and c still wait for k3.
  assert.deepEqual(builder.builds.map((b) => b.key), ["k1", "k2", "k3"]);
  assert.deepEqual(run.log.starts().map((s) => s.split("#")[0]).sort(), ["x:a", "x:a"]);
  const outcomes = await run.finish();
  assert.ok(outcomes.every((o) => o.kind === "executed" && o.result.verdict === "passed"));
  assert.equal(builder.peak(), 2);
  assert.equal(builder.builds.length, 3);
  assert.deepEqual(run.scheduler.snapshot().builds, { running: 0, pending: 0, done: 3, failed: 0 });
});

/** One eval on one lane whose sandbox needs an image build. */
function oneImageSpec() {
  return {
    cap: 1,
    evals: [{ id: "a", sandbox: localSandbox({ passEnv: ["IMAGE_A"] }) }],
    experiments: [{ id: "x", sandbox: null }],
  };
}

Deno.test("runPlan() settles the slots of a build that never ends sandbox-build-timeout after 30 min", async () => {
  const builder = buildingProvider();
  const run = await start(builder, oneImageSpec());
  await run.flush();
  await run.clock.tickAsync(BUILD_TIMEOUT_MS - 1);
  assert.equal(builder.builds[0]!.signal.aborted, false);
  assert.equal(run.log.ofType("slot_errored").length, 0);
  await run.clock.tickAsync(1);
  assert.equal(builder.builds[0]!.signal.aborted, true);
  const outcomes = await run.finish();
  assert.deepEqual(outcomeSummary(run.plan, outcomes), [
    "x:a#0 errored-undispatched:sandbox-build-timeout",
  ]);
  assert.deepEqual(run.log.starts(), []);
});

Deno.test("runPlan() closes build waiters interrupted and aborts the build on interrupt", async () => {
  const builder = buildingProvider();
  const run = await start(builder, oneImageSpec());
  await run.flush();
  run.interrupt.abort();
  const outcomes = await run.finish();
  assert.deepEqual(outcomes, [{ kind: "not-dispatched", reason: "interrupted" }]);
  assert.equal(builder.builds[0]!.signal.aborted, true);
  assert.deepEqual(run.log.diagnostics("sandbox-build-cancelled"), []);
});
