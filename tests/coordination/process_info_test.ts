/** `src/coordination/process_info.ts`: identity, liveness and start time (sandboxes.md rule 92). */
import assert from "node:assert/strict";
import {
  createProcessProbe,
  isoSeconds,
  readProcessIdentity,
  sameProcessStart,
} from "../../src/coordination/mod.ts";

/** A `/proc/<pid>/stat` line whose command has spaces and parentheses; starttime in ticks. */
function statLine(pid: number, state: string, startTicks: number): string {
  const middle = Array.from({ length: 18 }, (_, i) => String(i + 1)).join(" ");
  return `${pid} (my (odd) prog) ${state} ${middle} ${startTicks} 999 888`;
}

function fakeFs(files: Record<string, string | Error>): (path: string) => Promise<string> {
  return (path) => {
    const entry = files[path];
    if (entry === undefined) return Promise.reject(new Deno.errors.NotFound(path));
    return entry instanceof Error ? Promise.reject(entry) : Promise.resolve(entry);
  };
}

const BTIME = 1_795_000_000;
const PROC = { "/proc/self/stat": statLine(1, "R", 1), "/proc/stat": `cpu 1 2\nbtime ${BTIME}\n` };

Deno.test("readProcessIdentity() describes the current process with its real start time", async () => {
  const me = await readProcessIdentity();
  assert.equal(me.pid, Deno.pid);
  assert.equal(me.host, Deno.hostname());
  const started = Date.parse(me.processStartedAt);
  assert.ok(!Number.isNaN(started), `start time ${me.processStartedAt} parses`);
  assert.match(me.processStartedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.ok(started <= Date.now(), "the process started in the past");
  const again = await createProcessProbe().startTimeOf(Deno.pid);
  assert.equal(sameProcessStart(me.processStartedAt, again), true);
});

Deno.test("createProcessProbe() sees this process alive and a reaped child dead", async () => {
  const probe = createProcessProbe();
  assert.equal(await probe.isAlive(Deno.pid), true);
  const child = new Deno.Command("true", { stdout: "null", stderr: "null" }).spawn();
  await child.status;
  assert.equal(await probe.isAlive(child.pid), false);
  assert.equal(await probe.startTimeOf(child.pid), "unknown");
});

Deno.test("createProcessProbe() reads /proc state and field 22 plus btime", async () => {
  const probe = createProcessProbe({
    readTextFile: fakeFs({
      ...PROC,
      "/proc/10/stat": statLine(10, "S", 12_345),
      "/proc/11/stat": statLine(11, "Z", 1),
      "/proc/12/stat": statLine(12, "X", 1),
      "/proc/13/stat": new Deno.errors.PermissionDenied("hidden"),
    }),
    kill: () => assert.fail("kill is not needed where /proc exists"),
  });
  assert.equal(await probe.isAlive(10), true);
  assert.equal(await probe.isAlive(11), false, "a zombie counts as dead");
  assert.equal(await probe.isAlive(12), false);
  assert.equal(await probe.isAlive(13), true, "a permission error means it exists");
  assert.equal(await probe.isAlive(14), false);
  assert.equal(await probe.startTimeOf(10), isoSeconds((BTIME + 123.45) * 1000));
  assert.equal(await probe.startTimeOf(10), "2026-11-18T11:08:43Z");
  assert.equal(await probe.startTimeOf(14), "unknown", "no ps fallback where /proc exists");
});

Deno.test("createProcessProbe() falls back to kill(pid, 0) and ps without /proc", async () => {
  const signals: Array<[number, number]> = [];
  const probe = createProcessProbe({
    readTextFile: fakeFs({}),
    kill: (pid, signal) => {
      signals.push([pid, signal]);
      if (pid === 20) return;
      if (pid === 21) throw new Deno.errors.NotFound("ESRCH");
      if (pid === 22) throw new Deno.errors.PermissionDenied("EPERM");
      throw new TypeError("Invalid signal: 0");
    },
    ps: (args) => Promise.resolve(args.at(-1) === "20" ? "Sun Nov 29 09:00:00 2026" : undefined),
  });
  assert.equal(await probe.isAlive(20), true);
  assert.equal(await probe.isAlive(21), false);
  assert.equal(await probe.isAlive(22), true);
  assert.equal(await probe.isAlive(23), undefined, "unsupported signal 0: cannot tell");
  assert.deepEqual(signals.map(([, s]) => s), [0, 0, 0, 0]);
  assert.match(await probe.startTimeOf(20), /^2026-11-29T\d\d:00:00Z$/);
  assert.equal(await probe.startTimeOf(21), "unknown");
});

Deno.test("createProcessProbe() counts a zombie as dead without /proc when ps reports state Z", async () => {
  const probe = createProcessProbe({
    readTextFile: fakeFs({}),
    kill: () => {},
    ps: (args) => Promise.resolve(args.includes("stat=") && args.at(-1) === "30" ? "Z" : "S"),
  });
  assert.equal(await probe.isAlive(30), false);
  assert.equal(await probe.isAlive(31), true);
});

Deno.test("createProcessProbe() never signals pid 0 or a negative pid (process groups)", async () => {
  const probe = createProcessProbe({
    readTextFile: fakeFs({}),
    kill: () => assert.fail("must not signal"),
  });
  assert.equal(await probe.isAlive(0), undefined);
  assert.equal(await probe.isAlive(-1), undefined);
  assert.equal(await probe.isAlive(1.5), undefined);
  assert.equal(await probe.startTimeOf(0), "unknown");
});

Deno.test("sameProcessStart() allows 2 s and is undefined for unknown times", () => {
  assert.equal(sameProcessStart("2026-11-29T10:00:00Z", "2026-11-29T10:00:02Z"), true);
  assert.equal(sameProcessStart("2026-11-29T10:00:00Z", "2026-11-29T10:00:03Z"), false);
  assert.equal(sameProcessStart("2026-11-29T10:00:03Z", "2026-11-29T10:00:00Z"), false);
  assert.equal(sameProcessStart("unknown", "2026-11-29T10:00:00Z"), undefined);
  assert.equal(sameProcessStart("2026-11-29T10:00:00Z", "unknown"), undefined);
});
