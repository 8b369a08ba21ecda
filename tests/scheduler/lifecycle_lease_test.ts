/** Sections D and K of scenarios.md through the scheduler: sharedState leases (LEASE, LIFE-6). */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  acquireLease,
  inspectLease,
  leaseDirOf,
  teardownsDirOf,
  tryAcquireLock,
} from "../../src/coordination/mod.ts";
import type { ExperimentHookContext } from "../../src/discovery/mod.ts";
import type { RunAttempt } from "../../src/scheduler/mod.ts";
import { createFakeClock } from "../_fakes/clock.ts";
import { evalIds, fakePlan } from "../_fakes/plan.ts";
import { identity, names, tempProject } from "../coordination/_helpers.ts";
import { exists, finish, startCoordinated, until, withSharedState } from "./_lifecycle_harness.ts";

const KEY = "db/main";

/** Hooks that count calls and log `<id>:<hook>:<start|end>` marks. */
function windowHooks(id: string, marks: string[], options: {
  setup?: (ctx: ExperimentHookContext) => unknown;
  teardown?: (ctx: ExperimentHookContext) => unknown;
} = {}) {
  return {
    setup: async (ctx: ExperimentHookContext) => {
      marks.push(`${id}:setup`);
      await options.setup?.(ctx);
    },
    teardown: async (ctx: ExperimentHookContext) => {
      await options.teardown?.(ctx);
      marks.push(`${id}:teardown`);
    },
  };
}

/** Takes the lease as another process would (another open file, another identity). */
function holdElsewhere(root: string) {
  return acquireLease(KEY, {
    projectRoot: root,
    experimentId: "X",
    invocationId: "inv-other",
    identity: identity({ pid: 7777 }),
    signal: new AbortController().signal,
    clock: createFakeClock(),
  });
}

function leaseFile(root: string, name: string): string {
  return join(leaseDirOf(root, KEY), name);
}

Deno.test("S29 50 Attempts waiting for a held key hold no slot while another Experiment completes", async () => {
  await using project = await tempProject();
  const other = await holdElsewhere(project.root);
  const plan = withSharedState(
    fakePlan({
      evals: [...evalIds(10, "b"), "a"],
      experiments: [
        { id: "E1", evals: ["a"], attempts: 50 },
        { id: "E2", evals: evalIds(10, "b") },
      ],
    }),
    { E1: KEY },
  );
  const run = startCoordinated(plan, { cap: 2, root: project.root });
  const e2Done = () => run.log.ofType("attempt_end").filter((e) => e.slot.experimentId === "E2");
  await until(run.clock, () => e2Done().length === 10, "E2 completed");
  assert.deepEqual(run.log.starts().filter((s) => s.startsWith("E1")), []);
  const snapshot = run.scheduler.snapshot();
  assert.equal(snapshot.heldSlots, 0);
  assert.equal(snapshot.queued, 50);
  assert.equal(run.done.settled, false);
  await other.release();
  const outcomes = await finish(run, 500);
  assert.equal(outcomes.filter((o) => o.kind === "executed").length, 60);
  assert.deepEqual(run.log.allViolations(), []);
});

Deno.test("S77 while E1 waits for its key, E2 runs at G and E1 stays queued without a slot", async () => {
  await using project = await tempProject();
  const other = await holdElsewhere(project.root);
  const plan = withSharedState(
    fakePlan({
      evals: ["a", "b1", "b2", "b3"],
      experiments: [{ id: "E1", evals: ["a"], attempts: 4 }, {
        id: "E2",
        evals: ["b1", "b2", "b3"],
      }],
    }),
    { E1: KEY },
  );
  const run = startCoordinated(plan, { cap: 2, root: project.root, script: () => undefined });
  await until(
    run.clock,
    () => run.fake.live().length === 2 && run.log.diagnostics("state-lease-waiting").length > 0,
    "two Attempts run and E1 waits",
  );
  assert.deepEqual(run.fake.live().map((a) => a.name).sort(), ["E2:b1#0", "E2:b2#0"]);
  const snapshot = run.scheduler.snapshot();
  assert.deepEqual([snapshot.heldSlots, snapshot.running, snapshot.queued], [2, 2, 5]);
  const waiting = run.log.diagnostics("state-lease-waiting");
  assert.equal(waiting.length, 1);
  assert.deepEqual(waiting[0]!.data, { experimentId: "E1", sharedStateKey: KEY, retained: false });
  assert.deepEqual([waiting[0]!.level, waiting[0]!.persist], ["info", false]);
  assert.ok(!JSON.stringify(waiting).includes(other.owner.ownerToken));
  const rows = () => run.log.ofType("wait").map((w) => [w.scope, w.key, w.experimentId, w.state]);
  assert.deepEqual(rows(), [["state-lease", KEY, "E1", "started"]], "the panel row of the wait");
  await other.release();
  // E1 can only run once it holds the released lease; a lease that is never handed over fails
  // here after the harness's hang bound instead of hanging the suite.
  await until(
    run.clock,
    () => {
      for (const attempt of run.fake.live()) attempt.pass();
      return run.done.settled;
    },
    "every Attempt ends after the other process released the lease",
    500,
  );
  assert.equal((await run.done.promise).length, 7);
  assert.equal(run.log.diagnostics("state-lease-waiting").length, 1);
  assert.deepEqual(rows(), [
    ["state-lease", KEY, "E1", "started"],
    ["state-lease", KEY, "E1", "ended"],
  ]);
});

Deno.test("S78 two Experiments of one Invocation sharing a key never overlap", async () => {
  await using project = await tempProject();
  const marks: string[] = [];
  const plan = withSharedState(
    fakePlan({
      evals: ["a", "b", "c"],
      experiments: [
        { id: "E1", ...windowHooks("E1", marks), attempts: 2 },
        { id: "E2", ...windowHooks("E2", marks), attempts: 2 },
      ],
    }),
    { E1: KEY, E2: KEY },
  );
  const run = startCoordinated(plan, { cap: 4, root: project.root });
  await finish(run, 500);
  assert.equal(marks.length, 4);
  const first = marks[0]!.split(":")[0];
  assert.deepEqual(marks, [
    `${first}:setup`,
    `${first}:teardown`,
    `${first === "E1" ? "E2" : "E1"}:setup`,
    `${first === "E1" ? "E2" : "E1"}:teardown`,
  ]);
  assert.deepEqual(await names(leaseDirOf(project.root, KEY)), [
    "key",
    "lock",
    "owner-0000000001.json",
    "owner-0000000002.json",
    "released-0000000001.json",
    "released-0000000002.json",
  ]);
});

Deno.test("S89 a setup failure alone releases the lease once cleanup succeeded", async () => {
  await using project = await tempProject();
  const marks: string[] = [];
  const hooks = windowHooks("E", marks, { setup: () => Promise.reject(new Error("no tunnel")) });
  const plan = withSharedState(
    fakePlan({ evals: ["a"], experiments: [{ id: "E", ...hooks }] }),
    { E: KEY },
  );
  const run = startCoordinated(plan, { cap: 1, root: project.root });
  const outcomes = await finish(run);
  assert.equal(outcomes[0]!.kind, "errored-undispatched");
  assert.deepEqual(marks, ["E:setup", "E:teardown"]);
  assert.ok(await exists(leaseFile(project.root, "released-0000000001.json")));
  assert.deepEqual(run.log.diagnostics("state-lease-recovery-required"), []);
});

for (
  const [step, options] of [
    ["teardown throws", { teardown: () => Promise.reject(new Error("drop failed")) }],
    ["the pool stop fails (step 1)", { beforeTeardown: () => Promise.resolve(false) }],
    ["a fresh sandbox was not stopped (step 2)", { freshStopFailed: true }],
  ] as const
) {
  Deno.test(`S80 when ${step} the lease is retained with cleanup-failed and no token`, async () => {
    await using project = await tempProject();
    const hooks = windowHooks("E", [], "teardown" in options ? { teardown: options.teardown } : {});
    const plan = withSharedState(
      fakePlan({ evals: ["a"], experiments: [{ id: "E", ...hooks }] }),
      { E: KEY },
    );
    const run = startCoordinated(plan, {
      cap: 1,
      root: project.root,
      ...("beforeTeardown" in options ? { beforeTeardown: options.beforeTeardown } : {}),
      ...("freshStopFailed" in options ? { wrap: withStopFailure } : {}),
    });
    await finish(run);
    assert.equal(await exists(leaseFile(project.root, "released-0000000001.json")), false);
    const retained = run.log.diagnostics("state-lease-recovery-required");
    assert.equal(retained.length, 1);
    assert.deepEqual(retained[0]!.data, {
      experimentId: "E",
      sharedStateKey: KEY,
      reason: "cleanup-failed",
    });
    assert.deepEqual([retained[0]!.level, retained[0]!.persist], ["warning", true]);
    const evidence = await inspectLease(KEY, { projectRoot: project.root });
    assert.equal(evidence.state, "retained");
    assert.ok(!JSON.stringify(run.log.events).includes(evidence.owner!.ownerToken));
    assert.deepEqual(await names(teardownsDirOf(project.root)), [], "the registration is removed");
  });
}

/** Adds a fresh-sandbox stop failure to every result (the CHAIN-12 ledger). */
function withStopFailure(run: RunAttempt): RunAttempt {
  return async (slot, control) => {
    const result = await run(slot, control);
    const diagnostic = {
      code: "sandbox-stop-failed",
      level: "error",
      message: "container did not stop",
      data: null,
    } as const;
    return { ...result, details: { ...result.details, diagnostics: [diagnostic] } };
  };
}

Deno.test("S91 a planted owner record is never overwritten and the waiter names the recovery command", async () => {
  await using project = await tempProject();
  const dir = leaseDirOf(project.root, KEY);
  await Deno.mkdir(dir, { recursive: true });
  const planted = JSON.stringify({
    schema: "niceeval.shared-state-owner/v1",
    key: KEY,
    generation: 1,
    ownerToken: "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee",
    experimentId: "E",
    invocationId: "inv-old",
    host: "host-a",
    pid: 5555,
    processStartedAt: "2026-11-29T08:00:00Z",
    acquiredAt: "2026-11-29T08:00:01Z",
  });
  await Deno.writeTextFile(join(dir, "owner-0000000001.json"), planted);
  const marks: string[] = [];
  const plan = withSharedState(
    fakePlan({ evals: ["a"], experiments: [{ id: "E", ...windowHooks("E", marks) }] }),
    { E: KEY },
  );
  const run = startCoordinated(plan, { cap: 1, root: project.root });
  await until(run.clock, () => run.log.diagnostics("state-lease-waiting").length > 0, "a notice");
  await run.clock.tickAsync(10_000);
  const [notice] = run.log.diagnostics("state-lease-waiting");
  assert.equal(notice!.data?.retained, true);
  assert.match(notice!.message, /niceeval exp E --teardown --recover-shared-state db\/main/);
  assert.ok(!notice!.message.includes("aaaaaaaa"));
  run.interrupt.abort(new Error("SIGINT"));
  const outcomes = await finish(run);
  assert.deepEqual(outcomes, [{ kind: "not-dispatched", reason: "interrupted" }]);
  assert.deepEqual(marks, [], "no hook runs without the lease");
  assert.equal(await Deno.readTextFile(join(dir, "owner-0000000001.json")), planted);
  assert.deepEqual(await names(dir), ["lock", "owner-0000000001.json"]);
});

Deno.test("runPlan() after a second interrupt during setup retains the lease, keeps the registration and skips teardown (INT-2)", async () => {
  await using project = await tempProject();
  let finishSetup!: () => void;
  const marks: string[] = [];
  const hooks = windowHooks("E", marks, {
    setup: () => new Promise<void>((resolve) => finishSetup = resolve),
  });
  const plan = withSharedState(
    fakePlan({ evals: ["a", "b"], experiments: [{ id: "E", ...hooks }] }),
    { E: KEY },
  );
  const run = startCoordinated(plan, { cap: 2, root: project.root });
  await until(run.clock, () => marks.length === 1, "setup started");
  run.interrupt.abort(new Error("SIGINT"));
  run.force.abort(new Error("SIGINT"));
  const [registration] = await names(teardownsDirOf(project.root));
  const path = join(teardownsDirOf(project.root), registration!);
  const free = await tryAcquireLock(path, { create: false });
  assert.ok(free, "the registration's flock was dropped at once");
  free.release();
  assert.equal((await inspectLease(KEY, { projectRoot: project.root })).state, "retained");
  finishSetup();
  await finish(run);
  assert.deepEqual(marks, ["E:setup"]);
  assert.ok(await exists(path), "the registration remains for ORPH-3");
  assert.equal(await exists(leaseFile(project.root, "released-0000000001.json")), false);
});

Deno.test("runPlan() stops waiting for a running teardown after a second interrupt and skips the ones not started (INT-2)", async () => {
  await using project = await tempProject();
  const marks: string[] = [];
  const hang = windowHooks("E1", marks, { teardown: () => new Promise(() => {}) });
  const plan = withSharedState(
    fakePlan({
      evals: ["a", "b"],
      experiments: [
        { id: "E1", evals: ["a"], ...hang },
        { id: "E2", evals: ["b"], ...windowHooks("E2", marks) },
      ],
    }),
    { E1: KEY, E2: "other/key" },
  );
  const run = startCoordinated(plan, {
    cap: 2,
    root: project.root,
    script: (slot) => slot.experimentId === "E2" ? undefined : { durationMs: 10 },
  });
  await until(
    run.clock,
    () => run.log.ofType("experiment_teardown").length === 1 && run.fake.live().length === 1,
    "E1's teardown runs while E2's Attempt still runs",
  );
  run.interrupt.abort(new Error("SIGINT"));
  run.force.abort(new Error("SIGINT"));
  await finish(run);
  assert.deepEqual(marks.sort(), ["E1:setup", "E2:setup"], "E2's teardown never started");
  for (const key of [KEY, "other/key"]) {
    assert.equal((await inspectLease(key, { projectRoot: project.root })).state, "retained");
  }
  assert.equal((await names(teardownsDirOf(project.root))).length, 2, "both registrations remain");
});
