/** The sandbox part of one Attempt with the fake provider (sandboxes.md §3.1–§3.2, rules 34–35). */
import assert from "node:assert/strict";
import {
  type AttemptLayer,
  CleanupStack,
  createInstanceFactory,
  type FreshSandboxOptions,
  hasSandboxCode,
  localSandbox,
  openFreshSandbox,
  openLeasedSandbox,
  Pool,
  type SandboxDiagnostic,
  sandboxLayer,
} from "../../src/sandbox/mod.ts";
import { createFakeClock } from "../_fakes/clock.ts";
import {
  createFakeProvider,
  type FakeHandle,
  type FakeProviderOptions,
} from "../_fakes/provider.ts";
import { createSeededRandom } from "../_fakes/random.ts";

const owner = { host: "h", pid: 1, processStart: "unknown", runId: "run-1" };

function attemptBed(
  o:
    & { fake?: Omit<FakeProviderOptions, "clock">; layers?: AttemptLayer[] }
    & Partial<
      Omit<FreshSandboxOptions, "provider">
    > = {},
) {
  const { fake, ...rest } = o;
  const clock = createFakeClock();
  const provider = createFakeProvider({ clock, ...fake });
  const cleanup = new CleanupStack({ clock });
  const phases: string[] = [];
  const diagnostics: SandboxDiagnostic[] = [];
  const calls: string[] = [];
  const options: FreshSandboxOptions = {
    provider,
    plan: "plan",
    owner,
    lifetimeMs: Infinity,
    clock,
    random: createSeededRandom(2),
    signal: new AbortController().signal,
    cleanup,
    layers: o.layers ?? [],
    fixtures: [],
    hostDir: "/",
    startDeadline: () => (calls.push("deadline"), clock.now() + 60_000),
    onEvidence: () => {},
    onDiagnostic: (d) => diagnostics.push(d),
    onPhase: (p) => phases.push(p),
    ...rest,
  };
  return { clock, provider, cleanup, phases, diagnostics, calls, options };
}

Deno.test("openFreshSandbox() runs steps 4–10 in order and the stack unwinds them LIFO", async () => {
  const calls: string[] = [];
  const template = localSandbox()
    .setup(() => void calls.push("template setup"))
    .teardown(() => void calls.push("template teardown"))
    .prepare("make deps", (_sb, ctx) => {
      calls.push("template prepare fn");
      ctx.onCleanup(() => Promise.resolve(void calls.push("prepare cleanup")));
      return Promise.resolve();
    });
  const other = sandboxLayer()
    .setup(() => void calls.push("eval setup"))
    .teardown(() => void calls.push("eval teardown"))
    .prepare(["npm", "ci"]);
  const bed = attemptBed({
    layers: [{ layer: template, owner: "exp" }, { layer: other, owner: "eval" }],
    agent: {
      ensure: () => Promise.resolve(void calls.push("agent ensure")),
      setup: () => {
        calls.push("agent setup");
        return Promise.resolve(() => Promise.resolve(void calls.push("agent teardown")));
      },
    },
  });
  const result = await openFreshSandbox(bed.options);
  assert.equal(result.ok, true);
  assert.deepEqual(bed.phases, [
    "sandbox.create",
    "sandbox.setup",
    "sandbox.fixture",
    "sandbox.prepare",
    "agent.ensure",
    "workspace.baseline",
    "agent.setup",
  ]);
  const handle = bed.provider.handles[0] as FakeHandle;
  const commands = handle.execs.map((e) =>
    "script" in e.command ? e.command.script : e.command.argv.join(" ")
  );
  assert.ok(commands.includes("make deps"));
  assert.ok(commands.includes("npm ci"));
  assert.ok(commands.indexOf("make deps") < commands.indexOf("npm ci"));
  assert.deepEqual(await bed.cleanup.unwind(), []);
  assert.deepEqual(calls, [
    "template setup",
    "eval setup",
    "template prepare fn",
    "agent ensure",
    "agent setup",
    "agent teardown",
    "prepare cleanup",
    "eval teardown",
    "template teardown",
  ]);
  assert.equal(handle.stopped, true);
});

Deno.test("openFreshSandbox() starts the deadline at create and binds the facade to it", async () => {
  const bed = attemptBed();
  const result = await openFreshSandbox(bed.options);
  assert.ok(result.ok);
  assert.deepEqual(bed.calls, ["deadline"]);
  await bed.clock.tickAsync(20_000);
  result.setPhase("test");
  await result.sandbox.runCommand("true");
  const handle = bed.provider.handles[0] as FakeHandle;
  assert.equal(handle.execs.at(-1)!.options.timeoutMs, 40_000);
  await bed.cleanup.unwind();
});

Deno.test("openFreshSandbox() runs a layer's teardowns iff its setup phase was entered (rule 35)", async () => {
  const calls: string[] = [];
  const template = localSandbox()
    .teardown(() => void calls.push("template teardown"))
    .setup(() => Promise.reject(new Error("setup broke")));
  const other = sandboxLayer().teardown(() => void calls.push("eval teardown"));
  const bed = attemptBed({
    layers: [{ layer: template, owner: "exp" }, { layer: other, owner: "e" }],
  });
  const result = await openFreshSandbox(bed.options);
  assert.equal(result.ok, false);
  assert.ok(!result.ok);
  assert.deepEqual(
    [result.failure.code, result.failure.phase, result.failure.message, result.failure.scope],
    ["sandbox-setup-failed", "sandbox.setup", "setup broke", "attempt"],
  );
  await bed.cleanup.unwind();
  assert.deepEqual(calls, ["template teardown"]);
  assert.equal((bed.provider.handles[0] as FakeHandle).stopped, true);
});

Deno.test("openFreshSandbox() maps failures of each phase to the codes of rule 34", async (t) => {
  const boom = () => Promise.reject(new Error("boom"));
  const cases: [string, Parameters<typeof attemptBed>[0], string][] = [
    ["fixture", { fixtures: ["/nonexistent/niceeval-fixture"] }, "sandbox-fixture-failed"],
    [
      "prepare fn",
      { layers: [{ layer: localSandbox().prepare(boom), owner: "x" }] },
      "sandbox-prepare-failed",
    ],
    ["prepare script", {
      layers: [{ layer: localSandbox().prepare("false"), owner: "x" }],
      fake: { exec: (c) => ({ exitCode: "script" in c ? 1 : 0 }) },
    }, "sandbox-command-failed"],
    ["agent ensure", { agent: { ensure: boom } }, "agent-ensure-failed"],
    ["agent setup", { agent: { setup: boom } }, "agent-setup-failed"],
    ["create", { fake: { failures: ["fatal"] } }, "sandbox-create-failed"],
  ];
  for (const [name, options, code] of cases) {
    await t.step(name, async () => {
      const bed = attemptBed(options);
      const result = await openFreshSandbox(bed.options);
      assert.ok(!result.ok);
      assert.equal(result.failure.code, code);
      await bed.cleanup.unwind();
      for (const h of bed.provider.handles) assert.equal((h as FakeHandle).stopped, true);
    });
  }
});

Deno.test("openFreshSandbox() create failures carry { provider, class, tries, message }", async () => {
  const bed = attemptBed({ fake: { failures: ["fatal"] } });
  const result = await openFreshSandbox(bed.options);
  assert.ok(!result.ok);
  assert.deepEqual(result.failure.data, {
    provider: "fake",
    class: "fatal",
    tries: 1,
    message: "fake fatal",
  });
  assert.equal(result.failure.phase, "sandbox.create");
  assert.equal(bed.cleanup.size, 0, "no stop is pushed for a sandbox that never existed");
});

Deno.test("openFreshSandbox() skips the baseline with one sandbox-git-missing info", async () => {
  const bed = attemptBed({
    fake: { exec: (c) => ({ exitCode: "argv" in c && c.argv[0] === "git" ? 127 : 0 }) },
  });
  const result = await openFreshSandbox(bed.options);
  assert.ok(result.ok);
  assert.equal(result.baseline, undefined);
  assert.deepEqual(bed.diagnostics.map((d) => [d.code, d.level]), [[
    "sandbox-git-missing",
    "info",
  ]]);
  await bed.cleanup.unwind();
});

Deno.test("openLeasedSandbox() starts the deadline after the lease and retires the facade on release", async () => {
  const clock = createFakeClock();
  const provider = createFakeProvider({ clock });
  const pool = new Pool({
    id: "p",
    capacity: 1,
    factory: createInstanceFactory({
      provider,
      plan: "plan",
      layers: [],
      owner,
      lifetimeMs: Infinity,
      clock,
      random: createSeededRandom(4),
      hostDir: "/",
    }),
  });
  const run = async (outcome: "reset" | "retire", failingTeardown = false) => {
    const cleanup = new CleanupStack({ clock });
    const calls: string[] = [];
    const result = await openLeasedSandbox({
      pool,
      timeoutMs: 60_000,
      lifetimeMs: Infinity,
      releaseOutcome: () => outcome,
      clock,
      random: createSeededRandom(5),
      signal: new AbortController().signal,
      cleanup,
      layers: [],
      fixtures: [],
      hostDir: "/",
      startDeadline: () => (calls.push(`deadline leased=${pool.stats.leased}`), undefined),
      onEvidence: () => {},
      onDiagnostic: () => {},
      ...(failingTeardown
        ? { agent: { setup: () => Promise.resolve(() => Promise.reject(new Error("x"))) } }
        : {}),
    });
    assert.ok(result.ok);
    assert.deepEqual(calls, ["deadline leased=1"]);
    await cleanup.unwind();
    await assert.rejects(
      () => result.sandbox.runCommand("x"),
      (e) => hasSandboxCode(e, "sandbox-retired"),
    );
    return result.handle;
  };
  const first = await run("reset");
  assert.equal(await run("reset"), first, "a reset instance is leased again");
  assert.equal(await run("reset", true), first);
  const fresh = await run("reset");
  assert.notEqual(fresh, first, "a cleanup failure above the release retired the instance");
  await pool.stop();
});
