/**
 * Section U of scenarios.md with real processes ([P]): machine slot files shared by several
 * processes of one user (MSB-2, MSB-4, MSB-5, INT-5), each process waiting through its own
 * `MachineBudget` on the real clock.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { realClock } from "../../src/_shared/clock.ts";
import { tryAcquireMachineSlot } from "../../src/coordination/mod.ts";
import { fileMachineSlots } from "../../src/scheduler/mod.ts";
import { MachineBudget } from "../../src/scheduler/machine_budget.ts";

const SRC = new URL("../../src/", import.meta.url).href;

/**
 * A child process that takes `count` slots of provider `fake` (budget `limit`) through a
 * `MachineBudget`, prints `<time> acquire <index>` / `<time> release <index>` lines, holds each
 * slot `holdMs`, and prints `done` at the end. With `holdMs` < 0 it holds forever.
 */
function slotChild(
  stateDir: string,
  o: { limit: number; count: number; holdMs: number },
): Deno.ChildProcess {
  const code = `
    import { realClock } from "${SRC}_shared/clock.ts";
    import { tryAcquireMachineSlot } from "${SRC}coordination/mod.ts";
    import { MachineBudget } from "${SRC}scheduler/machine_budget.ts";
    const indices = new Map();
    const source = {
      limitOf: () => ${o.limit},
      tryAcquire: async (provider) => {
        const slot = await tryAcquireMachineSlot({ stateDir: ${JSON.stringify(stateDir)},
          provider, limit: ${o.limit}, owner: { pid: Deno.pid, host: "h" }, since: "now" });
        if (slot) console.log(Date.now(), "acquire", slot.index);
        return slot && { release: () => { console.log(Date.now(), "release", slot.index);
          slot.release(); } };
      },
    };
    const budget = new MachineBudget(source, { clock: realClock });
    await Promise.all(Array.from({ length: ${o.count} }, async (_, i) => {
      const permit = await budget.acquire("fake", [0, 0, i]);
      // A pending timer keeps the process (and its flocks) alive until it is killed.
      if (${o.holdMs} < 0) return new Promise((r) => setTimeout(r, 3_600_000));
      await new Promise((r) => setTimeout(r, ${o.holdMs}));
      permit.release();
    }));
    console.log("done");
  `;
  return new Deno.Command(Deno.execPath(), {
    args: ["eval", "--no-check", code],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
}

/** Reads a child's stdout lines until `until(lines)` holds; returns all lines read. */
async function readLines(
  child: Deno.ChildProcess,
  until: (lines: readonly string[]) => boolean,
): Promise<string[]> {
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const lines: string[] = [];
  let buffer = "";
  try {
    while (!until(lines)) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      const parts = buffer.split("\n");
      buffer = parts.pop()!;
      lines.push(...parts);
    }
    return lines;
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

async function withStateDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "niceeval-msb-proc-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("S158 a SIGKILLed holder's slots free at once: the waiter's first poll after the death takes one", async () => {
  await withStateDir(async (stateDir) => {
    const holder = slotChild(stateDir, { limit: 2, count: 2, holdMs: -1 });
    await readLines(holder, (lines) => lines.filter((l) => / acquire /.test(l)).length === 2);
    const slots = fileMachineSlots({
      stateDir,
      limits: { fake: 2 },
      owner: { pid: Deno.pid, host: "h" },
      clock: realClock,
    });
    // Polls are counted, not timed (S158's "within 3 × MACHINE_SLOT_POLL_MS"): a loaded machine
    // may delay any poll, but the kernel frees the flocks when the holder dies, so no poll that
    // starts after its death may still find the slots taken.
    let dead = false;
    const pollsAfterDeath: boolean[] = [];
    const budget = new MachineBudget({
      limitOf: (provider) => slots.limitOf(provider),
      tryAcquire: async (provider) => {
        const started = dead;
        const slot = await slots.tryAcquire(provider);
        if (started) pollsAfterDeath.push(slot !== null);
        return slot;
      },
    }, { clock: realClock });
    assert.equal(await budget.tryAcquire("fake"), null);
    const waiting = budget.acquire("fake", [0]);
    holder.kill("SIGKILL");
    await holder.status;
    dead = true;
    const permit = await waiting;
    permit.release();
    assert.ok(pollsAfterDeath.length <= 1, `polls after the death: ${pollsAfterDeath}`);
    assert.ok(pollsAfterDeath.every(Boolean), `polls after the death: ${pollsAfterDeath}`);
  });
});

Deno.test("S160 a process with budget 1 only uses index 0 and the host total stays within 3", async () => {
  await withStateDir(async (stateDir) => {
    const a = slotChild(stateDir, { limit: 1, count: 1, holdMs: -1 });
    try {
      const lines = await readLines(a, (read) => read.some((l) => / acquire /.test(l)));
      assert.match(lines.find((l) => / acquire /.test(l))!, / acquire 0$/);
      const b = { stateDir, provider: "fake", limit: 3, owner: { pid: 2, host: "h" }, since: "x" };
      const first = await tryAcquireMachineSlot(b);
      const second = await tryAcquireMachineSlot(b);
      assert.deepEqual([first?.index, second?.index], [1, 2]);
      assert.equal(await tryAcquireMachineSlot(b), null, "the host total exceeded 3");
      first!.release();
      second!.release();
      const files = await Array.fromAsync(Deno.readDir(join(stateDir, "slots", "fake")));
      assert.deepEqual(files.map((f) => f.name).sort(), [
        "slot-0.lock",
        "slot-1.lock",
        "slot-2.lock",
      ]);
    } finally {
      a.kill("SIGKILL");
      await a.status;
    }
  });
});

Deno.test("S156 two processes wanting 2 sandboxes each under a budget of 2 never exceed it and both finish", async () => {
  await withStateDir(async (stateDir) => {
    const children = [0, 1].map(() => slotChild(stateDir, { limit: 2, count: 2, holdMs: 150 }));
    const outputs = await Promise.all(children.map(async (c) => {
      const out = await c.output();
      return new TextDecoder().decode(out.stdout);
    }));
    assert.ok(outputs.every((o) => o.trimEnd().endsWith("done")), outputs.join("\n---\n"));
    const events = outputs.flatMap((o) => o.split("\n"))
      .map((l) => l.split(" "))
      .filter((p) => p[1] === "acquire" || p[1] === "release")
      .map(([at, what]) => ({ at: Number(at), delta: what === "acquire" ? 1 : -1 }))
      // At equal times a release happens before the acquire that follows it.
      .sort((x, y) => x.at - y.at || x.delta - y.delta);
    assert.equal(events.filter((e) => e.delta === 1).length, 4);
    let held = 0;
    for (const e of events) {
      held += e.delta;
      assert.ok(held <= 2, `${held} slots held at once`);
    }
  });
});
