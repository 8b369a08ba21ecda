/** Sections D and J of scenarios.md through the scheduler: registrations and orphan recovery. */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { ExperimentHookContext } from "../../src/discovery/mod.ts";
import {
  coordinationDirOf,
  leaseDirOf,
  teardownsDirOf,
  tryAcquireLock,
} from "../../src/coordination/mod.ts";
import { fakePlan } from "../_fakes/plan.ts";
import { eventually, fakeProbe, identity, names, tempProject } from "../coordination/_helpers.ts";
import {
  exists,
  finish,
  plantOrphan,
  SELF,
  startCoordinated,
  until,
  withSharedState,
} from "./_lifecycle_harness.ts";

/** Hooks that log `<hook>:<selectedEvalIds>` into `timeline`. */
function loggingHooks(timeline: string[], extra: {
  setup?: (ctx: ExperimentHookContext) => unknown;
  teardown?: (ctx: ExperimentHookContext) => unknown;
} = {}) {
  return {
    setup: async (ctx: ExperimentHookContext) => {
      timeline.push(`setup:${ctx.selectedEvalIds.join(",")}`);
      await extra.setup?.(ctx);
    },
    teardown: async (ctx: ExperimentHookContext) => {
      timeline.push(`teardown:${ctx.selectedEvalIds.join(",")}`);
      await extra.teardown?.(ctx);
    },
  };
}

const DEAD = identity({ pid: 5555, processStartedAt: "2026-11-29T08:00:00Z" });

Deno.test("S63 during setup the registration names the run and its flock is held; after teardown it is gone", async () => {
  await using project = await tempProject();
  const dir = teardownsDirOf(project.root);
  let during: { record: Record<string, unknown>; flockFree: boolean } | undefined;
  const plan = fakePlan({
    evals: ["a", "b"],
    experiments: [{
      id: "E",
      evals: ["a"],
      setup: async () => {
        const [name] = await names(dir);
        const path = join(dir, name!);
        const lock = await tryAcquireLock(path, { create: false });
        lock?.release();
        during = { record: JSON.parse(await Deno.readTextFile(path)), flockFree: lock !== null };
      },
      teardown: () => {},
    }],
  });
  const run = startCoordinated(plan, { cap: 2, root: project.root });
  await finish(run);
  assert.ok(during, "setup ran");
  assert.equal(during.flockFree, false);
  const { startedAt: _startedAt, ...record } = during.record;
  assert.deepEqual(record, {
    schema: "niceeval.teardown-registration/v1",
    experimentId: "E",
    selectedEvalIds: ["a"],
    invocationId: "inv-now",
    host: SELF.host,
    pid: SELF.pid,
    processStartedAt: SELF.processStartedAt,
  });
  assert.deepEqual(await names(dir), []);
});

Deno.test("S66 a registration of another host is never touched", async () => {
  await using project = await tempProject();
  const path = await plantOrphan(project.root, "E", identity({ host: "host-b", pid: 999 }), ["x"]);
  const timeline: string[] = [];
  const plan = fakePlan({ evals: ["a"], experiments: [{ id: "E", ...loggingHooks(timeline) }] });
  const run = startCoordinated(plan, { cap: 1, root: project.root });
  await finish(run);
  assert.deepEqual(timeline, ["setup:a", "teardown:a"]);
  assert.ok(await exists(path));
  assert.deepEqual(run.log.diagnostics("orphan-teardown-ran"), []);
});

Deno.test("S67 a free registration whose pid runs with another start time is an orphan", async () => {
  await using project = await tempProject();
  const path = await plantOrphan(project.root, "E", DEAD, ["old"]);
  const probe = fakeProbe(
    { [SELF.pid]: true, [DEAD.pid]: true },
    { [SELF.pid]: SELF.processStartedAt, [DEAD.pid]: "2026-11-29T09:30:00Z" },
  );
  const timeline: string[] = [];
  const plan = fakePlan({ evals: ["a"], experiments: [{ id: "E", ...loggingHooks(timeline) }] });
  const run = startCoordinated(plan, { cap: 1, root: project.root, probe });
  await finish(run);
  assert.deepEqual(timeline, ["teardown:old", "setup:a", "teardown:a"]);
  assert.equal(await exists(path), false);
  const ran = run.log.diagnostics("orphan-teardown-ran");
  assert.equal(ran.length, 1);
  assert.deepEqual(ran[0]!.data, { experimentId: "E", invocationId: "inv-5555", pid: DEAD.pid });
  assert.equal(ran[0]!.level, "info");
});

Deno.test("S74 an unwritable teardowns directory warns and the run completes", async () => {
  await using project = await tempProject();
  await Deno.mkdir(coordinationDirOf(project.root), { recursive: true });
  await Deno.writeTextFile(teardownsDirOf(project.root), "not a directory");
  const timeline: string[] = [];
  const plan = fakePlan({ evals: ["a"], experiments: [{ id: "E", ...loggingHooks(timeline) }] });
  const run = startCoordinated(plan, { cap: 1, root: project.root });
  const outcomes = await finish(run);
  const warnings = run.log.diagnostics("teardown-registration-write-failed");
  assert.equal(warnings.length, 1);
  assert.equal(warnings[0]!.level, "warning");
  assert.equal(warnings[0]!.persist, true);
  assert.deepEqual(timeline, ["setup:a", "teardown:a"]);
  assert.deepEqual(outcomes.map((o) => o.kind === "executed" && o.result.verdict), ["passed"]);
});

Deno.test("S75 an orphan teardown that throws warns, deletes the claim, and the run proceeds", async () => {
  await using project = await tempProject();
  await plantOrphan(project.root, "E", DEAD, ["old"]);
  const timeline: string[] = [];
  const hooks = loggingHooks(timeline, {
    teardown: (ctx) => {
      if (ctx.selectedEvalIds.includes("old")) throw new Error("state store unreachable");
    },
  });
  const plan = fakePlan({ evals: ["a"], experiments: [{ id: "E", ...hooks }] });
  const run = startCoordinated(plan, { cap: 1, root: project.root });
  const outcomes = await finish(run);
  const failed = run.log.diagnostics("orphan-teardown-failed");
  assert.equal(failed.length, 1);
  assert.match(failed[0]!.message, /state store unreachable/);
  assert.equal(failed[0]!.persist, true);
  assert.deepEqual(await names(teardownsDirOf(project.root)), []);
  assert.deepEqual(timeline, ["teardown:old", "setup:a", "teardown:a"]);
  assert.deepEqual(outcomes.map((o) => o.kind === "executed" && o.result.verdict), ["passed"]);
});

Deno.test("S32 orphan teardown, its lease released, a new owner, the registration, then setup", async () => {
  await using project = await tempProject();
  await plantOrphan(project.root, "E", DEAD, ["old"]);
  const lease = leaseDirOf(project.root, "db/main");
  const teardowns = teardownsDirOf(project.root);
  const order: string[] = [];
  const hooks = loggingHooks([], {
    setup: async () => {
      if (await exists(join(lease, "released-0000000001.json"))) order.push("released-1");
      if (await exists(join(lease, "owner-0000000002.json"))) order.push("owner-2");
      const mine = (await names(teardowns)).filter((n) => n.endsWith("-inv-now.json"));
      if (mine.length === 1) order.push("registration");
      order.push("setup");
    },
    teardown: async (ctx) => {
      if (!ctx.selectedEvalIds.includes("old")) return;
      const files = await names(lease);
      order.push(files.includes("owner-0000000001.json") ? "orphan-teardown (lease 1)" : "?");
    },
  });
  const plan = withSharedState(
    fakePlan({ evals: ["a"], experiments: [{ id: "E", ...hooks }] }),
    { E: "db/main" },
  );
  const run = startCoordinated(plan, { cap: 1, root: project.root });
  await finish(run);
  assert.deepEqual(order, [
    "orphan-teardown (lease 1)",
    "released-1",
    "owner-2",
    "registration",
    "setup",
  ]);
  assert.ok(await exists(join(lease, "released-0000000002.json")));
});

Deno.test("S68 an orphan of an Experiment whose ordinals are all carried is recovered before the run ends (ORPH-5)", async () => {
  await using project = await tempProject();
  await plantOrphan(project.root, "E", DEAD, ["old"]);
  let release!: () => void;
  const timeline: string[] = [];
  const hooks = loggingHooks(timeline, { teardown: () => new Promise<void>((r) => release = r) });
  const plan = fakePlan({
    evals: ["a"],
    experiments: [{ id: "E", ...hooks, carried: { "a#0": "passed" } }],
  });
  const run = startCoordinated(plan, { cap: 1, root: project.root });
  await until(run.clock, () => timeline.length === 1, "the orphan teardown started");
  await run.clock.tickAsync(1_000);
  assert.equal(run.done.settled, false, "the Invocation awaits its recovery task");
  release();
  assert.deepEqual(await finish(run), [{ kind: "carried" }]);
  assert.deepEqual(timeline, ["teardown:old"]);
  assert.equal(run.log.diagnostics("orphan-teardown-ran").length, 1);
});

Deno.test("S70 orphans of an unselected Experiment, or of one without teardown, get one reminder each (ORPH-6)", async () => {
  await using project = await tempProject();
  const f1 = await plantOrphan(project.root, "F", DEAD, ["x"]);
  const f2 = await plantOrphan(project.root, "F", identity({ pid: 5556 }), ["y"]);
  const g = await plantOrphan(project.root, "G", DEAD, ["z"]);
  const plan = fakePlan({
    evals: ["a"],
    experiments: [{ id: "E", ...loggingHooks([]) }, { id: "G" }],
  });
  const run = startCoordinated(plan, { cap: 1, root: project.root });
  await finish(run);
  const pending = run.log.diagnostics("orphan-teardown-pending");
  assert.deepEqual(pending.map((d) => d.data?.command), [
    "niceeval exp F --teardown",
    "niceeval exp G --teardown",
  ]);
  assert.ok(pending.every((d) => d.level === "info" && d.message.includes(`${d.data?.command}`)));
  for (const path of [f1, f2, g]) assert.ok(await exists(path), path);
});

Deno.test("runPlan() recovers an orphan whose flock another scan holds for a moment (ORPH-2)", async () => {
  await using project = await tempProject();
  const path = await plantOrphan(project.root, "E", DEAD, ["old"]);
  const scanner = await tryAcquireLock(path, { create: false });
  const timeline: string[] = [];
  const plan = fakePlan({ evals: ["a"], experiments: [{ id: "E", ...loggingHooks(timeline) }] });
  const run = startCoordinated(plan, { cap: 1, root: project.root });
  await run.clock.tickAsync(1);
  // Released only once the recovery task met the held flock and sleeps on its retry timer.
  await eventually(() => run.clock.countTimers() === 1, "the claimer finds the flock taken");
  assert.deepEqual(timeline, []);
  scanner!.release();
  await finish(run, 10);
  assert.deepEqual(timeline, ["teardown:old", "setup:a", "teardown:a"]);
});
