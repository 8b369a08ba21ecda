/** The ramp's control file and live files (RAMP-9, RAMP-11) with real files and flocks. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { realClock } from "../../src/_shared/mod.ts";
import {
  listLiveRamps,
  openLiveRamp,
  rampDirOf,
  readRampControl,
  updateRampControl,
} from "../../src/coordination/mod.ts";

async function withProject(fn: (root: string) => Promise<void>): Promise<void> {
  const root = await Deno.makeTempDir({ prefix: "niceeval-ramp-files-" });
  try {
    await fn(root);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

const HOLD = { reason: "quota", since: "2026-12-01T00:00:00.000Z", by: "pid 1@h" };

Deno.test("RAMP-9: no control file reads as no hold and no range", async () => {
  await withProject((root) => {
    const read = readRampControl(root);
    assert.deepEqual(read, { schema: "niceeval.ramp-control/v1", seq: 0, hold: null, range: null });
    return Promise.resolve();
  });
});

Deno.test("RAMP-9: every write increments seq and keeps what it does not change", async () => {
  await withProject(async (root) => {
    await updateRampControl(root, (c) => ({ hold: HOLD, range: c.range }), { clock: realClock });
    const set = await updateRampControl(
      root,
      (c) => ({ hold: c.hold, range: { from: 2, to: 5 } }),
      {
        clock: realClock,
      },
    );
    assert.deepEqual(set, {
      schema: "niceeval.ramp-control/v1",
      seq: 2,
      hold: HOLD,
      range: { from: 2, to: 5 },
    });
    assert.deepEqual(readRampControl(root), set);
    const names = (await Array.fromAsync(Deno.readDir(rampDirOf(root)))).map((e) => e.name).sort();
    assert.deepEqual(names, ["control.json", "control.lock"]); // no temporary file is left
  });
});

Deno.test("S150 RAMP-9: invalid JSON or fields read as invalid with a reason", async () => {
  await withProject(async (root) => {
    const path = join(rampDirOf(root), "control.json");
    await Deno.mkdir(rampDirOf(root), { recursive: true });
    for (
      const text of [
        "{not json",
        "[]",
        JSON.stringify({ schema: "other", seq: 1, hold: null, range: null }),
        JSON.stringify({
          schema: "niceeval.ramp-control/v1",
          seq: 1,
          hold: null,
          range: { from: 5, to: 2 },
        }),
        JSON.stringify({
          schema: "niceeval.ramp-control/v1",
          seq: 1,
          hold: { reason: "" },
          range: null,
        }),
      ]
    ) {
      await Deno.writeTextFile(path, text);
      const read = readRampControl(root);
      assert.ok("invalid" in read, text);
    }
  });
});

Deno.test("RAMP-11: a live ramp is listed while its lock is held and leaves nothing when closed", async () => {
  await withProject(async (root) => {
    const live = await openLiveRamp(root, { invocationId: "inv-live", pid: 4242 });
    live.publish({
      cap: 4,
      from: 2,
      to: 8,
      state: "climbing",
      heldReason: null,
      updatedAt: "2026-12-01T00:00:00.000Z",
    });
    const [entry, ...rest] = await listLiveRamps(root);
    assert.deepEqual(rest, []);
    assert.deepEqual([entry!.invocationId, entry!.pid, entry!.cap, entry!.state], [
      "inv-live",
      4242,
      4,
      "climbing",
    ]);
    await live.close();
    assert.deepEqual(await listLiveRamps(root), []);
    assert.deepEqual(await Array.fromAsync(Deno.readDir(join(rampDirOf(root), "live"))), []);
  });
});

Deno.test("S153 RAMP-11: an entry whose lock is free is not listed and is deleted", async () => {
  await withProject(async (root) => {
    await using live = await openLiveRamp(root, { invocationId: "inv-live", pid: 1 });
    live.publish({ cap: 2, from: 2, to: 8, state: "steady", heldReason: null, updatedAt: "x" });
    // A dead run's leftovers: its files, no lock holder.
    const dir = join(rampDirOf(root), "live");
    await Deno.writeTextFile(
      join(dir, "inv-dead.json"),
      JSON.stringify({ invocationId: "inv-dead", pid: 2, cap: 4, from: 2, to: 8, state: "steady" }),
    );
    await Deno.writeTextFile(join(dir, "inv-dead.lock"), "");
    const listed = await listLiveRamps(root);
    assert.deepEqual(listed.map((e) => e.invocationId), ["inv-live"]);
    const names = (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name).sort();
    assert.deepEqual(names, ["inv-live.json", "inv-live.lock"]);
  });
});
