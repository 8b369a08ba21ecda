/**
 * Section T of scenarios.md with the real CLI ([P]): live `niceeval ramp` commands steering
 * running ramped `exp` runs through the control file and the live files (RAMP-8 … RAMP-12). The
 * fixture's evals block while the test holds its gate file; windows are 1 s of real time, and
 * every wait is for an event, a line or a file, never for time.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type AuditEvent, ConcurrencyReplay } from "../_fakes/attempt.ts";
import { ndjson, type TempProject, tempProject } from "../_helpers/cli.ts";

type Line = Record<string, unknown>;

/** Turns a hang into a failure; never used to let something happen. */
const HANG_MS = 90_000;

/** Collects a child's stdout lines as they come and lets the test wait for one. */
class Lines {
  readonly all: string[] = [];
  /** Resolves once stdout and stderr are read to their ends. */
  readonly done: Promise<void>;
  stderr = "";
  #waiters: { test: (line: string) => boolean; resolve: (line: string) => void }[] = [];

  constructor(child: Deno.ChildProcess) {
    this.done = Promise.all([
      this.#read(child),
      child.stderr.pipeThrough(new TextDecoderStream()).pipeTo(
        new WritableStream({ write: (chunk) => void (this.stderr += chunk) }),
      ),
    ]).then(() => undefined);
  }

  /** The first line, already read or still to come, for which `test` is true. */
  waitFor(test: (line: string) => boolean, what: string): Promise<string> {
    const seen = this.all.find(test);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no line: ${what}`)), HANG_MS);
      this.#waiters.push({
        test,
        resolve: (line) => {
          clearTimeout(timer);
          resolve(line);
        },
      });
    });
  }

  /** The NDJSON line of `type` for which `test` is true. */
  async waitForJson(type: string, test: (line: Line) => boolean, what: string): Promise<Line> {
    const text = await this.waitFor((l) => {
      if (!l.startsWith("{")) return false;
      const o = JSON.parse(l) as Line;
      return o.type === type && test(o);
    }, what);
    return JSON.parse(text) as Line;
  }

  async #read(child: Deno.ChildProcess): Promise<void> {
    let buffer = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      buffer += chunk;
      let nl: number;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        this.all.push(line);
        this.#waiters = this.#waiters.filter((w) => {
          if (!w.test(line)) return true;
          w.resolve(line);
          return false;
        });
      }
    }
  }
}

/** The project with its gate closed: every Attempt blocks until {@link open}. */
async function gatedProject(): Promise<{ p: TempProject; env: Record<string, string> }> {
  const p = await tempProject("ramp_project");
  const gate = join(p.dir, "gate");
  await Deno.mkdir(gate);
  await Deno.writeTextFile(join(gate, "hold"), "");
  return { p, env: { RAMP_DIR: gate } };
}

function open(p: TempProject): Promise<void> {
  return Deno.remove(join(p.dir, "gate", "hold"));
}

async function ramp(p: TempProject, ...args: string[]): Promise<string> {
  const r = await p.run(["ramp", ...args]);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
}

/** Waits until the live file of the run changed `n` times (one publish per window end). */
async function windows(p: TempProject, n: number): Promise<void> {
  const dir = join(p.dir, ".niceeval", "coordination", "ramp", "live");
  let last = "";
  let seen = 0;
  const deadline = Date.now() + HANG_MS;
  while (seen < n) {
    if (Date.now() > deadline) throw new Error("the live file stopped changing");
    const names = (await Array.fromAsync(Deno.readDir(dir))).filter((e) =>
      e.name.endsWith(".json")
    );
    const text = names.length === 1
      ? await Deno.readTextFile(join(dir, names[0]!.name)).catch(() => last)
      : last;
    if (text !== last) {
      if (last !== "") seen++;
      last = text;
    }
    await new Promise((resolve) => setTimeout(resolve, 50)); // polling a file, not waiting for time
  }
}

/** OUT-J6 with cap(t): the replay follows `start.concurrency`, then every `ramp.cap`. */
function audit(lines: readonly Line[]): ConcurrencyReplay {
  const replay = new ConcurrencyReplay({ cap: lines[0]!.concurrency as number });
  for (const line of lines) replay.apply(line as unknown as AuditEvent);
  assert.deepEqual(replay.violations, []);
  return replay;
}

Deno.test("S146 S147 S148 RAMP-8 RAMP-10 RAMP-12: hold, resume and set steer a live --json run", async () => {
  const { p, env } = await gatedProject();
  await using _p = p;
  const child = p.spawn(["exp", "--json"], { env });
  const out = new Lines(child);
  const start = await out.waitForJson("start", () => true, "start");
  assert.deepEqual(start.ramp, { from: 2, to: 8, step: 2, windowMs: 1000, held: null });
  assert.equal(start.concurrencySource, "ramp-config");
  await out.waitForJson("ramp", (r) => r.cap === 4, "climb to 4");

  // S146: hold. From the next window the cap stops rising and the event says held.
  assert.match(
    await ramp(p, "hold", "--reason", "quota"),
    /^control {2}seq 1 · held: quota · configured range\n1 live ramped run\(s\) will apply this at their next window\n$/,
  );
  const held = await out.waitForJson("ramp", (r) => r.state === "held", "held");
  assert.deepEqual([held.reason, held.cause], ["quota", "hold"]);
  await windows(p, 2);
  const rampsWhileHeld = ndjson(out.all.join("\n")).filter((l) => l.type === "ramp");
  assert.deepEqual(rampsWhileHeld.at(-1), held);

  // S147: resume. The cap rises at the next window.
  assert.match(await ramp(p, "resume"), /· not held ·/);
  await out.waitForJson("ramp", (r) => (r.cap as number) > (held.cap as number), "rise");
  await out.waitForJson("ramp", (r) => r.cap === 8, "climb to 8");

  // S148: set 2:5 at cap 8 with 8 running: the cap drops to 5, nothing is aborted.
  assert.match(await ramp(p, "set", "2:5"), /range 2–5/);
  const cut = await out.waitForJson("ramp", (r) => r.cap === 5, "cut to 5");
  assert.deepEqual([cut.previousCap, cut.from, cut.to, cut.cause], [8, 2, 5, "range"]);
  const status = await ramp(p, "status");
  assert.match(status, /cap 5 {2}range 2–5/);

  await open(p);
  const { code } = await child.status;
  await out.done;
  assert.equal(code, 0);
  const lines = ndjson(out.all.join("\n"));
  const replay = audit(lines); // no start while held ≥ cap(t), before and after the cut
  assert.equal(replay.peakHeld, 8);
  const ends = lines.filter((l) => l.type === "attempt_end");
  assert.equal(ends.length, 40);
  assert.ok(ends.every((e) => e.verdict === "passed"));
  // The run removed its live file when it ended.
  assert.match(await ramp(p, "status"), /^control {2}seq 3 · not held · range 2–5\n$/);
});

Deno.test("S146 OUT-5: plain output prints ramp: held: quota", async () => {
  const { p, env } = await gatedProject();
  await using _p = p;
  const child = p.spawn(["exp"], { env });
  const out = new Lines(child);
  await out.waitFor((l) => l.includes("concurrency 2→8 (ramp from config)"), "PLAN");
  await out.waitFor((l) => l === "ramp: cap 2 → 4 (climbing)", "climb line");
  await ramp(p, "hold", "--reason", "quota");
  await out.waitFor((l) => l === "ramp: held: quota", "held line");
  await open(p);
  assert.equal((await child.status).code, 0);
  await out.done;
});

Deno.test("S153 RAMP-11: ramp status lists the live run only and deletes a killed run's entry", async () => {
  const { p, env } = await gatedProject();
  await using _p = p;
  const live = p.spawn(["exp", "--json"], { env });
  const liveOut = new Lines(live);
  const killed = p.spawn(["exp", "--json", "--record", ".niceeval/record-2"], { env });
  const killedOut = new Lines(killed);
  const liveStart = await liveOut.waitForJson("start", () => true, "live start");
  const killedStart = await killedOut.waitForJson("start", () => true, "killed start");
  // Both published their live files once they started dispatching.
  await liveOut.waitForJson("ramp", () => true, "live window");
  await killedOut.waitForJson("ramp", () => true, "killed window");
  killed.kill("SIGKILL");
  await killed.status;
  await killedOut.done;
  const status = await ramp(p, "status");
  const rows = status.trim().split("\n");
  assert.equal(rows.length, 2, status);
  assert.ok(rows[1]!.startsWith(`${(liveStart.invocationId as string).slice(0, 8)}  pid `));
  const dir = join(p.dir, ".niceeval", "coordination", "ramp", "live");
  const names = (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name);
  assert.ok(names.every((n) => !n.startsWith(killedStart.invocationId as string)), names.join());
  await open(p);
  assert.equal((await live.status).code, 0);
  await liveOut.done;
});

Deno.test("S145 RAMP-2: --max-concurrency 3 with a config ramp: ramp-disabled, fixed cap 3, no ramp events", async () => {
  await using p = await tempProject("ramp_project");
  const r = await p.run(["exp", "--json", "--max-concurrency", "3"]);
  assert.equal(r.code, 0, r.stderr);
  const lines = ndjson(r.stdout);
  assert.deepEqual([lines[0]!.concurrency, lines[0]!.concurrencySource, lines[0]!.ramp], [
    3,
    "flag",
    null,
  ]);
  assert.ok(lines.some((l) => l.type === "notice" && l.code === "ramp-disabled"));
  assert.ok(lines.every((l) => l.type !== "ramp"));
});

Deno.test("RAMP-2 RAMP-10: invalid ramp input is a usage error, exit 2, one clear line", async () => {
  await using p = await tempProject("ramp_project");
  const flag = await p.run(["exp", "--ramp", "5:2"]);
  assert.equal(flag.code, 2);
  assert.match(flag.stderr, /--ramp must be <from>:<to>.*\[ramp-invalid\]/);
  const set = await p.run(["ramp", "set", "x"]);
  assert.equal(set.code, 2);
  assert.match(set.stderr, /\[ramp-invalid\]/);
  const hold = await p.run(["ramp", "hold"]);
  assert.equal(hold.code, 2);
  assert.match(hold.stderr, /needs --reason/);
  const long = await p.run(["ramp", "hold", "--reason", "x".repeat(201)]);
  assert.equal(long.code, 2);
  const none = await p.run(["ramp"]);
  assert.equal(none.code, 2);
  assert.match(
    none.stderr,
    /subcommands: ramp hold, ramp resume, ramp set, ramp reset, ramp status/,
  );
  await p.write(
    "niceeval.config.ts",
    `import { defineConfig } from "niceeval";
export default defineConfig({ ramp: { from: 4, to: 2 } });
`,
  );
  const config = await p.run(["exp"]);
  assert.equal(config.code, 2);
  assert.match(config.stderr, /ramp\.to/);
  // Nothing was written by the failed commands.
  assert.match((await p.run(["ramp", "status"])).stdout, /^control {2}seq 0 /);
});
