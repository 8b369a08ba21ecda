/**
 * Section U of scenarios.md, in process: the machine sandbox budget over real slot files and
 * flocks in a temporary state directory (MSB-1 … MSB-8, WAIT-4), with sandbox Attempts on the
 * fake provider and fake time.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  machineSlotLimits,
  machineSlotPath,
  tryAcquireMachineSlot,
} from "../../src/coordination/mod.ts";
import { fileMachineSlots, type MachineSlotSource } from "../../src/scheduler/mod.ts";
import { defineSandbox } from "../../src/sandbox/mod.ts";
import { createFakeClock } from "../_fakes/clock.ts";
import { createFakeProvider } from "../_fakes/provider.ts";
import { type SandboxRun, startSandboxRun } from "./_sandbox_harness.ts";

const OWNER = { pid: 1, host: "test-host" };

async function withStateDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "niceeval-msb-test-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * Moves fake time and lets real slot-file I/O settle, until `check` holds; fails after 2 minutes
 * of real time, a bound that only turns a hang into a failure.
 */
async function until(
  run: SandboxRun,
  check: () => boolean,
  what: string,
  tickMs = 0,
): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!check()) {
    if (Date.now() > deadline) {
      const slots = JSON.stringify(run.scheduler.snapshot().machineSlots);
      throw new Error(`Timed out waiting until ${what}; machine slots: ${slots}`);
    }
    await run.clock.tickAsync(tickMs);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

async function slotFiles(stateDir: string): Promise<string[]> {
  const out: string[] = [];
  try {
    for await (const provider of Deno.readDir(join(stateDir, "slots"))) {
      for await (const f of Deno.readDir(join(stateDir, "slots", provider.name))) {
        out.push(`${provider.name}/${f.name}`);
      }
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return out.sort();
}

Deno.test("tryAcquireMachineSlot() takes the lowest free index and stamps its owner (MSB-2)", async () => {
  await withStateDir(async (stateDir) => {
    const o = { stateDir, provider: "fake", limit: 2, owner: OWNER, since: "2026-11-29T10:00:00Z" };
    const first = await tryAcquireMachineSlot(o);
    const second = await tryAcquireMachineSlot(o);
    assert.deepEqual([first?.index, second?.index], [0, 1]);
    assert.equal(await tryAcquireMachineSlot(o), null);
    const stamp = JSON.parse(await Deno.readTextFile(machineSlotPath(stateDir, "fake", 0)));
    assert.deepEqual(stamp, { pid: 1, host: "test-host", since: "2026-11-29T10:00:00Z" });
    first!.release();
    const again = await tryAcquireMachineSlot(o);
    assert.equal(again?.index, 0);
    again!.release();
    second!.release();
  });
});

Deno.test("fileMachineSlots() stamps the slot file with the Run of the acquiring Experiment (rule 55)", async () => {
  await withStateDir(async (stateDir) => {
    const slots = fileMachineSlots({
      stateDir,
      limits: { fake: 2 },
      owner: OWNER,
      runIdOf: (experimentId) => experimentId === "e1" ? "run-1" : undefined,
      clock: createFakeClock(),
    });
    const known = await slots.tryAcquire("fake", "e1");
    const unknown = await slots.tryAcquire("fake", "elsewhere");
    const read = async (index: number) =>
      JSON.parse(await Deno.readTextFile(machineSlotPath(stateDir, "fake", index)));
    assert.equal((await read(0)).runId, "run-1");
    assert.equal("runId" in await read(1), false);
    known!.release();
    unknown!.release();
  });
});

Deno.test("S157 a budget held elsewhere makes the Attempt wait without a global slot while others run", async () => {
  await withStateDir(async (stateDir) => {
    const clock = createFakeClock();
    // Another holder of the only slot (a second open file description conflicts like a process).
    const elsewhere = await tryAcquireMachineSlot({
      stateDir,
      provider: "fake",
      limit: 1,
      owner: { pid: 2, host: "test-host" },
      since: "now",
    });
    assert.ok(elsewhere);
    const other = createFakeProvider({ clock, name: "other" });
    const run = await startSandboxRun({
      cap: 2,
      evals: [{ id: "a" }, { id: "b" }],
      experiments: [
        { id: "f", evals: ["a"] },
        {
          id: "o",
          evals: ["b"],
          sandbox: defineSandbox({ name: "other", create: (ctx) => other.create("p", ctx) }),
        },
      ],
      machineSlots: fileMachineSlots({
        stateDir,
        limits: { fake: 1 },
        owner: OWNER,
        runIdOf: (experimentId) => `run-${experimentId}`,
        clock,
      }),
    });
    await until(run, () => run.holding().includes("o:b"), "o:b runs");
    await until(
      run,
      () => run.scheduler.snapshot().machineSlots.fake?.waiting === 1,
      "f:a waits for the fake slot held elsewhere",
    );
    const s = run.scheduler.snapshot();
    assert.deepEqual(s.machineSlots.fake, { capacity: 1, held: 0, waiting: 1 });
    assert.deepEqual([s.heldSlots, s.running, s.globalWaiters], [1, 1, 0]);
    assert.equal(run.provider.tries.length, 0);
    elsewhere.release();
    // MSB-4: the slot files are retried every MACHINE_SLOT_POLL_MS.
    await until(
      run,
      () => run.holding().includes("f:a"),
      "f:a takes the slot released elsewhere (never released?)",
      1000,
    );
    // Rule 55: the slot file names the Run of the Attempt that waited for it.
    const stamp = JSON.parse(await Deno.readTextFile(machineSlotPath(stateDir, "fake", 0)));
    assert.equal(stamp.runId, "run-f");
    await run.finish();
    assert.deepEqual(run.log.allViolations(), []);
    assert.equal(run.log.diagnostics("sandbox-budget-waiting").length, 1);
  });
});

Deno.test("S159 the docker budget defaults to 2 × logical CPUs; unbudgeted providers take no slot files", async () => {
  const real = Object.getOwnPropertyDescriptor(navigator, "hardwareConcurrency");
  Object.defineProperty(navigator, "hardwareConcurrency", { value: 3, configurable: true });
  try {
    assert.deepEqual(machineSlotLimits({}, { cpus: navigator.hardwareConcurrency }), { docker: 6 });
    assert.deepEqual(machineSlotLimits({ docker: 2, fake: 1 }, { cpus: 3 }), {
      docker: 2,
      fake: 1,
    });
  } finally {
    if (real) Object.defineProperty(navigator, "hardwareConcurrency", real);
    else delete (navigator as { hardwareConcurrency?: number }).hardwareConcurrency;
  }
  await withStateDir(async (stateDir) => {
    const clock = createFakeClock();
    const run = await startSandboxRun({
      cap: 2,
      evals: [{ id: "a", durationMs: 5 }, { id: "b", durationMs: 5 }],
      experiments: [{ id: "x" }],
      machineSlots: fileMachineSlots({
        stateDir,
        limits: machineSlotLimits({}, { cpus: 3 }),
        owner: OWNER,
        clock,
      }),
    });
    await run.finish();
    assert.equal(run.provider.handles.length, 2);
    assert.deepEqual(await slotFiles(stateDir), []);
  });
});

/** A slot source that records when slots are taken and released. */
function recording(source: MachineSlotSource, events: string[]): MachineSlotSource {
  return {
    limitOf: (p) => source.limitOf(p),
    tryAcquire: async (p) => {
      const slot = await source.tryAcquire(p);
      if (!slot) return null;
      events.push("acquire");
      return { release: () => (events.push("release"), slot.release()) };
    },
  };
}

Deno.test("S161 a reuse pool of capacity 2 takes exactly 2 slots, each for its sandbox's whole life", async () => {
  await withStateDir(async (stateDir) => {
    const clock = createFakeClock();
    const events: string[] = [];
    let run: SandboxRun | undefined = undefined;
    const source = recording(
      fileMachineSlots({ stateDir, limits: { fake: 5 }, owner: OWNER, clock }),
      events,
    );
    const ended = () => run?.log.ofType("attempt_end").length ?? -1;
    const tracked: MachineSlotSource = {
      limitOf: source.limitOf,
      tryAcquire: async (p) => {
        const slot = await source.tryAcquire(p);
        return slot && { release: () => (events.push(`after ${ended()} ends`), slot.release()) };
      },
    };
    run = await startSandboxRun({
      cap: 10,
      evals: ["a", "b", "c", "d", "e", "f"].map((id, i) => ({ id, durationMs: 10 + 3 * i })),
      experiments: [{ id: "x", sandboxReuse: true, maxConcurrency: 2 }],
      machineSlots: tracked,
    });
    await run.finish();
    assert.equal(run.provider.handles.length, 2);
    assert.deepEqual(events, [
      "acquire",
      "acquire",
      "after 6 ends",
      "release",
      "after 6 ends",
      "release",
    ]);
    assert.deepEqual(await slotFiles(stateDir), ["fake/slot-0.lock", "fake/slot-1.lock"]);
  });
});

Deno.test("S162 a budget below G leaves G alone and reports one sandbox-budget-waiting", async () => {
  await withStateDir(async (stateDir) => {
    const clock = createFakeClock();
    const run = await startSandboxRun({
      cap: 10,
      evals: [{ id: "a" }, { id: "b" }, { id: "c" }],
      experiments: [{ id: "x" }],
      machineSlots: fileMachineSlots({ stateDir, limits: { fake: 1 }, owner: OWNER, clock }),
    });
    await until(run, () => run.holding().length === 1, "one Attempt holds the only slot");
    await until(
      run,
      () => run.scheduler.snapshot().machineSlots.fake?.waiting === 2,
      "two Attempts wait for the slot",
    );
    const s = run.scheduler.snapshot();
    assert.equal(s.cap, 10);
    assert.equal(s.heldSlots, 1);
    const waiting = run.log.diagnostics("sandbox-budget-waiting");
    assert.equal(waiting.length, 1);
    assert.equal(waiting[0]!.level, "info");
    assert.equal(waiting[0]!.message, "waiting for machine sandbox budget · fake 1/1");
    assert.deepEqual(waiting[0]!.data, { provider: "fake", held: 1, limit: 1 });
    const rows = () => run.log.ofType("wait").map((w) => [w.scope, w.key, w.state, w.detail]);
    assert.deepEqual(rows(), [["machine-slot", "fake", "started", "1/1"]], "the MSB-7 panel row");
    await run.finish();
    assert.equal(run.log.diagnostics("sandbox-budget-waiting").length, 1);
    assert.deepEqual(rows().at(-1)?.slice(0, 3), ["machine-slot", "fake", "ended"]);
    assert.equal(run.log.replay.peakRunning, 1);
    assert.deepEqual(run.log.allViolations(), []);
  });
});
