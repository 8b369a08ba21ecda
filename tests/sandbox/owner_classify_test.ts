/** Owner stamps and their classification (sandboxes.md §7.1–§7.2, rule 92). */
import assert from "node:assert/strict";
import {
  createProcessProbe,
  isoSeconds,
  type ProcessProbe,
  readProcessIdentity,
} from "../../src/coordination/mod.ts";
import {
  classifyOwner,
  ownerIdentityOf,
  type OwnerStamp,
  type OwnerStatus,
} from "../../src/sandbox/mod.ts";

const START = "2026-11-29T10:00:00Z";
const stamp: OwnerStamp = {
  host: "box",
  pid: 4242,
  processStart: START,
  runId: "run-1",
  provisionToken: "f".repeat(32),
};

function probe(state: "running" | "zombie" | "gone", start = START): ProcessProbe {
  return {
    isAlive: () => Promise.resolve(state === "running"),
    startTimeOf: () => Promise.resolve(start),
  };
}

Deno.test("classifyOwner() follows the §7.2 table in order", async () => {
  const rows: [string, Partial<OwnerStamp>, ProcessProbe, OwnerStatus][] = [
    ["incomplete stamp", { host: "box", pid: 4242 }, probe("running"), "unverified"],
    ["other host", { ...stamp, host: "elsewhere" }, probe("gone"), "unverified"],
    ["pid not running", stamp, probe("gone"), "orphan"],
    ["pid is a zombie", stamp, probe("zombie"), "orphan"],
    [
      "recorded start unknown",
      { ...stamp, processStart: "unknown" },
      probe("running"),
      "unverified",
    ],
    ["start unreadable now", stamp, probe("running", "unknown"), "unverified"],
    [
      "start differs by 3 s (pid reused)",
      stamp,
      probe("running", "2026-11-29T10:00:03Z"),
      "orphan",
    ],
    ["start differs by 2 s", stamp, probe("running", "2026-11-29T10:00:02Z"), "alive"],
    ["same process", stamp, probe("running"), "alive"],
  ];
  for (const [name, s, p, expected] of rows) {
    assert.equal(await classifyOwner(s, { host: "box", probe: p }), expected, name);
  }
});

Deno.test("classifyOwner() is unverified when the probe cannot tell whether the pid runs", async () => {
  const unsure: ProcessProbe = {
    isAlive: () => Promise.resolve(undefined),
    startTimeOf: () => Promise.resolve(START),
  };
  assert.equal(await classifyOwner(stamp, { host: "box", probe: unsure }), "unverified");
});

Deno.test("createProcessProbe() reads state and start time from /proc/<pid>/stat and btime", async () => {
  // Field 22 (starttime) is 12345 ticks; the command name holds spaces and parentheses.
  const fields = ["S", ...Array.from({ length: 18 }, (_, i) => String(i + 4)), "12345", "0"];
  const files: Record<string, string> = {
    "/proc/self/stat": "1 (deno) R 0",
    "/proc/77/stat": `77 (my (odd) name) ${fields.join(" ")}`,
    "/proc/78/stat": `78 (z) Z ${fields.slice(1).join(" ")}`,
    "/proc/stat": "cpu  1 2 3\nbtime 1790000000\nprocesses 9\n",
  };
  const read = (p: string) =>
    p in files ? Promise.resolve(files[p]!) : Promise.reject(new Deno.errors.NotFound(p));
  const p = createProcessProbe({ readTextFile: read });
  assert.equal(await p.isAlive(77), true, "running");
  assert.equal(await p.isAlive(78), false, "a zombie is not running");
  assert.equal(await p.isAlive(79), false, "gone");
  assert.equal(await p.startTimeOf(77), isoSeconds((1790000000 + 123.45) * 1000));
  assert.equal(await p.startTimeOf(77), "2026-09-21T14:15:23Z");
});

Deno.test("ownerIdentityOf() stamps this process's start time in whole seconds", async () => {
  const identity = ownerIdentityOf(await readProcessIdentity({ host: "box", pid: Deno.pid }));
  assert.equal(identity.host, "box");
  assert.equal(identity.pid, Deno.pid);
  assert.match(identity.processStart, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  // Order, not age (the suite may have run for any time): this process started after its parent,
  // no later than a child it spawns now, and not in the future.
  const child = new Deno.Command("sleep", { args: ["60"], stdout: "null", stderr: "null" }).spawn();
  try {
    const probe = createProcessProbe();
    const startOf = async (pid: number) => Date.parse(await probe.startTimeOf(pid));
    const [parent, own, spawned] = [
      await startOf(Deno.ppid),
      await startOf(Deno.pid),
      await startOf(child.pid),
    ];
    assert.ok(parent <= own, `started ${identity.processStart}, before its parent`);
    assert.ok(own <= spawned, `started ${identity.processStart}, after a child spawned now`);
    assert.ok(own <= Date.now(), `started ${identity.processStart}, in the future`);
    assert.equal(Date.parse(identity.processStart), own);
  } finally {
    child.kill("SIGKILL");
    await child.status;
  }
  assert.equal(
    await classifyOwner({ ...identity, runId: "r", provisionToken: "t" }, {
      host: "box",
      probe: createProcessProbe(),
    }),
    "alive",
  );
});
