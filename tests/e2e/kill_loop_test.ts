/**
 * The kill loop (issue 10): a real `niceeval exp --rerun all --json` of `kill_loop_project` (two
 * Experiments with `setup`/`teardown`, one holding a sharedState key) is SIGKILLed right after its
 * k-th NDJSON line, k drawn from a seeded random source, again and again. Moments are causal, never
 * timed: the kill follows an output line the run has written. After each kill the test checks what
 * `cli.md` and `scheduling.md` promise about the state left behind:
 *
 * - `show --run <every published Run> --json` exits 0 (no published Run is unreadable, REC-10/11);
 * - `exp --dry --json` exits 0 and carries every slot from published Runs only (DRY-1, ROOT-4);
 * - a setup that never reached its teardown left a registration (ORPH-1), and in the leased
 *   Experiment a retained key (LEASE-9); explicit recovery (LEASE-10) then exits 0 and runs the
 *   teardown exactly once; the free Experiment's registration is recovered by a rerun, whose
 *   startup recovery (ORPH-3) runs the teardown exactly once and exits 0;
 * - `clean` exits 0, salvages each killed Run that has its header (published `crashed`, its
 *   settled Attempts kept, one member per slot, no torn record) and removes the other unpublished
 *   Runs (CMD-17, ROOT-5, docs/record.md);
 * - the next run carries the salvaged Attempts and runs only the slots salvage interrupted.
 *
 * The seed is fixed in CI; `NICEEVAL_FUZZ_SEED=<n>` explores others. A failing step names its
 * iteration and k, which with the seed reproduce the kill point (up to scheduling).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { sha256Hex } from "../../src/_shared/mod.ts";
import { leaseDirOf, teardownsDirOf } from "../../src/coordination/mod.ts";
import { createSeededRandom } from "../_fakes/random.ts";
import { type CliResult, ndjson, type TempProject, tempProject } from "../_helpers/cli.ts";
import { fuzzSeed } from "../_helpers/fuzz.ts";
import { leftoverTemps, tempLines } from "../_helpers/leftover_temps.ts";
import { readRunFiles } from "../_helpers/record_files.ts";

type Json = Record<string, unknown>;

/**
 * Kills per run of the suite: each one also salvages, reruns and cleans. A seed explores other
 * kill points (`fuzzSeed`).
 */
const ITERATIONS = 12;
const KEY = "loop/db";
const EXPERIMENTS = ["free", "leased"] as const;
const SLOTS_PER_RUN = 2;
const BOTH_CONFIRMATIONS = ["--confirm-owner-terminated", "--confirm-remote-quiesced"];

/** One line of `$LOOP_DIR/hooks.log`. */
interface HookLine {
  readonly tag: string;
  readonly event: string;
  readonly experimentId: string;
}

/** The fixture project with its hook log and the tag every CLI child gets. */
class LoopProject {
  readonly p: TempProject;
  readonly logDir: string;
  /** The Record root as the CLI names it (`recordRoot` of the NDJSON `start` event). */
  root = "";
  constructor(p: TempProject, logDir: string) {
    this.p = p;
    this.logDir = logDir;
  }

  env(tag: string): Record<string, string> {
    return { LOOP_DIR: this.logDir, LOOP_TAG: tag };
  }

  run(args: readonly string[], tag: string): Promise<CliResult> {
    return this.p.run(args, { env: this.env(tag) });
  }

  async hookLines(tag: string): Promise<HookLine[]> {
    const text = await Deno.readTextFile(join(this.logDir, "hooks.log")).catch(() => "");
    return text.split("\n").filter(Boolean).map((line) => {
      const [lineTag, , event, experimentId] = line.split(" ");
      return { tag: lineTag!, event: event!, experimentId: experimentId! };
    }).filter((l) => l.tag === tag);
  }

  async runIds(): Promise<string[]> {
    return (await names(join(this.root, "runs"))).sort();
  }

  async published(runId: string): Promise<boolean> {
    const info = await Deno.lstat(join(this.root, "runs", runId, "complete")).catch(() => null);
    return info !== null && info.isFile && info.size === 0;
  }

  /** Teardown registrations by Experiment (ORPH-1 names start with 16 hex of its id). */
  async registrations(): Promise<Record<string, string[]>> {
    const all = await names(teardownsDirOf(this.p.dir));
    return Object.fromEntries(
      EXPERIMENTS.map((id) => [id, all.filter((n) => n.startsWith(sha256Hex(id).slice(0, 16)))]),
    );
  }

  /** The key's state from its files (LEASE-4): the latest owner record and whether it was released. */
  async lease(): Promise<{ generation: number; owner: Json | null; released: boolean }> {
    const dir = leaseDirOf(this.p.dir, KEY);
    const files = await names(dir);
    const generations = files.filter((n) => /^owner-\d{10}\.json$/.test(n)).map((n) =>
      Number(n.slice(6, 16))
    );
    if (generations.length === 0) return { generation: 0, owner: null, released: true };
    const g = Math.max(...generations);
    const padded = String(g).padStart(10, "0");
    const text = await Deno.readTextFile(join(dir, `owner-${padded}.json`));
    let owner: Json;
    try {
      owner = JSON.parse(text);
    } catch (error) {
      throw new Error(`owner-${padded}.json is unreadable: ${JSON.stringify(text)}`, {
        cause: error,
      });
    }
    return { generation: g, owner, released: files.includes(`released-${padded}.json`) };
  }
}

/** Awaits both checks to their end (no child outlives the step), then throws the first failure. */
async function both(a: Promise<void>, b: Promise<void>): Promise<void> {
  for (const result of await Promise.allSettled([a, b])) {
    if (result.status === "rejected") throw result.reason;
  }
}

async function names(dir: string): Promise<string[]> {
  try {
    return (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
}

/**
 * Runs `exp --rerun all --json` and SIGKILLs it as soon as its k-th stdout line was read (the
 * chunk holding it, so the kill always follows that line); returns its pid. A run with fewer
 * lines ends by itself.
 */
async function killAfterLine(
  loop: LoopProject,
  k: number,
  tag: string,
): Promise<number> {
  const child = loop.p.spawn(["exp", "--rerun", "all", "--json"], { env: loop.env(tag) });
  const stderr = new Response(child.stderr).text();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  try {
    while (text.split("\n").length - 1 < k) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    if (text.split("\n").length - 1 >= k) {
      try {
        child.kill("SIGKILL");
      } catch {
        // It exited meanwhile: the kill landed after the end.
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  const status = await child.status;
  const err = await stderr;
  assert.ok(
    status.signal === "SIGKILL" || status.code === 0,
    `the killed run ended with ${JSON.stringify(status)}:\n${text}\n${err}`,
  );
  return child.pid;
}

/** What a kill left behind, checked against ORPH-1, LEASE-8 and LEASE-9. */
async function checkLeftovers(loop: LoopProject, tag: string, pid: number) {
  const hooks = await loop.hookLines(tag);
  const did = (event: string, id: string) =>
    hooks.some((l) => l.event === event && l.experimentId === id);
  const orphanedSetup = (id: string) => did("setup-start", id) && !did("teardown-end", id);
  const registrations = await loop.registrations();
  const lease = await loop.lease();
  const retained = lease.owner !== null && !lease.released;
  for (const id of EXPERIMENTS) {
    // Its own lifecycle at most once each, and no recovery teardown: nothing was left to recover.
    for (const event of ["setup-start", "teardown-start"]) {
      const count = hooks.filter((l) => l.event === event && l.experimentId === id).length;
      assert.ok(count <= 1, `${tag} ran ${event} of ${id} ${count} times`);
    }
    assert.ok(registrations[id]!.length <= 1, `registrations of ${id}: ${registrations[id]}`);
    assert.ok(!registrations[id]!.some((n) => n.endsWith(".claimed")), "nothing was claimed");
    if (orphanedSetup(id)) {
      assert.equal(registrations[id]!.length, 1, `${id}'s setup ran and its teardown did not`);
    }
  }
  if (retained) assert.equal(lease.owner!.pid, pid, "only the killed run can own the key");
  // The registration lives inside the lease window (LIFE-2, LIFE-6): it cannot outlive the key.
  if (registrations.leased!.length > 0) assert.ok(retained, "a leased registration without lease");
  return { retained, lease, freeOrphans: registrations.free!.length };
}

/** What an unpublished Run holds: salvageable (a header), empty (nothing), or neither. */
async function leftKind(root: string, runId: string): Promise<"salvageable" | "empty" | "other"> {
  const dir = join(root, "runs", runId);
  try {
    await readRunFiles(root, runId);
    return "salvageable";
  } catch {
    const entries = await Array.fromAsync(Deno.readDir(dir)).catch(() => []);
    const onlyEmptyLog = await Promise.all(
      entries.map(async (e) =>
        e.name === "records.log" && e.isFile && (await Deno.lstat(join(dir, e.name))).size === 0
      ),
    );
    return onlyEmptyLog.every(Boolean) ? "empty" : "other";
  }
}

/** `show` over every published Run and `exp --dry`, both readers of published Runs only. */
async function checkReaders(loop: LoopProject, tag: string): Promise<void> {
  const ids = await loop.runIds();
  const published: string[] = [];
  for (const id of ids) if (await loop.published(id)) published.push(id);
  const unpublished = ids.filter((id) => !published.includes(id));
  const kinds = await Promise.all(unpublished.map((id) => leftKind(loop.root, id)));
  const [show, dry] = await Promise.all([
    loop.run(["show", ...published.flatMap((id) => ["--run", id]), "--json"], tag),
    loop.run(["exp", "--dry", "--json"], tag),
  ]);
  assert.equal(show.code, 0, show.stderr);
  const rows = JSON.parse(show.stdout).rows as Json[];
  assert.equal(rows.length, SLOTS_PER_RUN * published.length, "every published Run is readable");
  // Only a salvaged (crashed) Run has interrupted slots; every other slot holds a passed Attempt.
  assert.ok(
    rows.every((r) =>
      r.state === "interrupted"
        ? r.attempt === null
        : r.attempt !== null && (r.attempt as Json).verdict === "passed"
    ),
  );
  assert.equal(dry.code, 0, dry.stderr);
  const plan = JSON.parse(dry.stdout);
  assert.deepEqual([plan.reused, plan.toRun], [EXPERIMENTS.length * SLOTS_PER_RUN, 0]);
  for (const row of plan.rows as Json[]) assert.ok(published.includes(row.sourceRunId as string));
  assert.deepEqual(
    (plan.problems as Json[]).map((x) => x.code),
    [
      ...(kinds.includes("salvageable") ? ["record-salvage-pending"] : []),
      ...(unpublished.length > 0 ? ["record-unpublished-runs"] : []),
    ],
  );
  assert.deepEqual(await loop.runIds(), ids, "exp --dry salvaged or removed nothing");
}

/** LEASE-10 recovery of a retained key: exits 0 and runs the teardown exactly once. */
async function recoverKey(loop: LoopProject, owner: Json, tag: string): Promise<void> {
  const r = await loop.run([
    "exp",
    "leased",
    "--teardown",
    "--recover-shared-state",
    KEY,
    "--owner-token",
    String(owner.ownerToken),
    ...BOTH_CONFIRMATIONS,
  ], tag);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal(r.stdout, `recovered sharedState key ${KEY} for leased\n`);
  const ran = (await loop.hookLines(tag)).map((l) => `${l.event} ${l.experimentId}`);
  assert.deepEqual(ran, ["teardown-start leased", "teardown-end leased"], "one teardown");
  assert.deepEqual((await loop.registrations()).leased, [], "the owner's registration is gone");
  const lease = await loop.lease();
  assert.equal(lease.released, true);
}

/** What salvage kept of one killed Run: AttemptIds by EvalId, and the slots it interrupted. */
interface Salvaged {
  readonly runId: string;
  readonly kept: ReadonlyMap<string, string>;
  readonly interrupted: number;
}

/**
 * `clean` exits 0, salvages the killed Runs that have a header (published `crashed` with their
 * settled Attempts) and removes the other unpublished Runs; published ones stay.
 */
async function checkClean(loop: LoopProject, tag: string): Promise<Salvaged[]> {
  const ids = await loop.runIds();
  const published: string[] = [];
  for (const id of ids) if (await loop.published(id)) published.push(id);
  const salvageable: string[] = [];
  const removedIds: string[] = [];
  for (const id of ids.filter((id) => !published.includes(id))) {
    const kind = await leftKind(loop.root, id);
    if (kind === "salvageable") salvageable.push(id);
    else if (kind === "other") removedIds.push(id);
  }
  const removed = removedIds.length;
  const temps = await leftoverTemps(loop.root, removedIds);
  const salvaged: Salvaged[] = [];
  for (const runId of salvageable) {
    const files = await readRunFiles(loop.root, runId);
    const kept = new Map<string, string>();
    for (const { attempt } of files.attempts.values()) {
      kept.set(attempt.evalId as string, attempt.attemptId as string);
    }
    const slots = (files.header.expectedSlots as Json[]).length;
    salvaged.push({ runId, kept, interrupted: slots - kept.size });
  }
  const r = await loop.run(["clean"], tag);
  assert.equal(r.code, 0, r.stderr);
  const kept = salvaged.reduce((n, x) => n + x.kept.size, 0);
  const lines = [
    ...(salvaged.length > 0
      ? [
        `salvaged ${salvaged.length} run(s) left by a killed process in ${loop.root}: ${kept} finished Attempt(s) kept, published as crashed`,
      ]
      : []),
    ...(removed > 0 ? [`removed ${removed} unpublished run(s) from ${loop.root}`] : []),
    ...tempLines(temps, loop.root), // issue 18.11: removed temp files are said
  ];
  assert.equal(
    r.stdout,
    `${lines.length > 0 ? lines.join("\n") : `nothing to clean in ${loop.root}`}\n`,
  );
  assert.deepEqual(await loop.runIds(), [...published, ...salvageable].sort());
  for (const { runId, kept } of salvaged) {
    const files = await readRunFiles(loop.root, runId);
    assert.ok(files.published, `${runId} is published`);
    assert.equal(files.tornBytes, 0);
    assert.ok(["crashed", "completed"].includes(files.end?.completion as string));
    const members = files.records.filter((x) => x.record === "member");
    assert.equal(members.length, (files.header.expectedSlots as Json[]).length, "one per slot");
    const show = await loop.run(["show", "--run", runId, "--json"], tag);
    assert.equal(show.code, 0, show.stderr);
    for (const row of JSON.parse(show.stdout).rows as Json[]) {
      const attemptId = kept.get(row.evalId as string);
      assert.deepEqual(
        [row.state, (row.attempt as Json | null)?.attemptId ?? null],
        attemptId ? ["executed", attemptId] : ["interrupted", null],
      );
    }
  }
  return salvaged;
}

/**
 * A rerun recovers the free Experiment's orphans once at startup, carries every slot but the ones
 * salvage interrupted (the salvaged Attempts among them), runs those, and exits 0.
 */
async function rerunRecovers(
  loop: LoopProject,
  orphans: number,
  salvaged: readonly Salvaged[],
  tag: string,
): Promise<void> {
  const r = await loop.run(["exp", "--json"], tag);
  assert.equal(r.code, 0, r.stderr);
  const events = ndjson(r.stdout);
  const toRun = salvaged.reduce((n, x) => n + x.interrupted, 0);
  assert.deepEqual(
    [events[0]!.reused, events[0]!.toRun],
    [EXPERIMENTS.length * SLOTS_PER_RUN - toRun, toRun],
  );
  const ran = events.filter((e) => e.code === "orphan-teardown-ran");
  assert.equal(ran.length, orphans, JSON.stringify(events));
  const hooks = (await loop.hookLines(tag)).map((l) => `${l.event} ${l.experimentId}`);
  const running = new Set(
    events.filter((e) => e.type === "attempt_start").map((e) => e.experimentId as string),
  );
  assert.deepEqual(
    hooks.sort(),
    [
      ...Array.from({ length: orphans }, () => ["teardown-start free", "teardown-end free"]).flat(),
      ...[...running].flatMap((id) =>
        ["setup-start", "setup-end", "teardown-start", "teardown-end"].map((e) => `${e} ${id}`)
      ),
    ].sort(),
    "each orphan's teardown ran exactly once, and only Experiments with slots to run set up",
  );
  assert.deepEqual(await loop.registrations(), { free: [], leased: [] });
  // The salvaged Attempts are carried into the new Runs.
  const runIds = events.at(-1)!.runIds as string[];
  const show = await loop.run(["show", ...runIds.flatMap((id) => ["--run", id]), "--json"], tag);
  assert.equal(show.code, 0, show.stderr);
  const rows = JSON.parse(show.stdout).rows as Json[];
  for (const { runId, kept } of salvaged) {
    for (const [evalId, attemptId] of kept) {
      const row = rows.find((x) =>
        x.evalId === evalId && (x.attempt as Json | null)?.attemptId === attemptId
      );
      assert.ok(row !== undefined && row.state === "carried", `${runId} ${evalId} carried`);
    }
  }
}

Deno.test("niceeval exp: SIGKILL at seeded output lines leaves state that show, --dry, recovery, a rerun and clean handle as specified exits 0", async (t) => {
  const seed = fuzzSeed(Deno.env.get("NICEEVAL_FUZZ_SEED"));
  const random = createSeededRandom(seed);
  await using p = await tempProject("kill_loop_project");
  const logDir = await Deno.makeTempDir({ prefix: "niceeval-kill-loop-" });
  const loop = new LoopProject(p, logDir);
  let recoveries = 0;
  let rerunRecoveries = 0;
  let salvages = 0;
  try {
    const first = await loop.run(["exp", "--rerun", "all", "--json"], "B");
    assert.equal(first.code, 0, first.stderr);
    loop.root = ndjson(first.stdout)[0]!.recordRoot as string;
    const lineCount = first.stdout.split("\n").length - 1;
    for (let i = 0; i < ITERATIONS; i++) {
      const k = 1 + Math.floor(random.next() * lineCount);
      await t.step(`seed ${seed}, kill ${i} after line ${k} of ${lineCount}`, async () => {
        const pid = await killAfterLine(loop, k, `K${i}`);
        const left = await checkLeftovers(loop, `K${i}`, pid);
        // Readers and recovery touch disjoint state (published Runs; the lease directory), so
        // they run side by side; clean and the rerun each take the Record root in turn.
        await both(
          checkReaders(loop, `D${i}`),
          left.retained ? recoverKey(loop, left.lease.owner!, `R${i}`) : Promise.resolve(),
        );
        if (left.retained) recoveries++;
        const salvaged = await checkClean(loop, `C${i}`);
        salvages += salvaged.length;
        if (left.freeOrphans > 0 || salvaged.some((x) => x.interrupted > 0)) {
          await rerunRecovers(loop, left.freeOrphans, salvaged, `N${i}`);
          if (left.freeOrphans > 0) rerunRecoveries++;
        }
      });
    }
    const tally =
      `${recoveries} key recoveries, ${rerunRecoveries} startup recoveries, ${salvages} salvaged Runs`;
    await t.step(
      `after ${ITERATIONS} kills (${tally}) a full run takes the key and leaves nothing behind`,
      async () => {
        const r = await loop.run(["exp", "--rerun", "all", "--json"], "Z");
        assert.equal(r.code, 0, r.stderr);
        assert.equal(ndjson(r.stdout).filter((e) => e.code === "orphan-teardown-ran").length, 0);
        const hooks = (await loop.hookLines("Z")).map((l) => `${l.event} ${l.experimentId}`);
        assert.deepEqual(hooks.sort(), [
          "setup-end free",
          "setup-end leased",
          "setup-start free",
          "setup-start leased",
          "teardown-end free",
          "teardown-end leased",
          "teardown-start free",
          "teardown-start leased",
        ]);
        assert.deepEqual(await loop.registrations(), { free: [], leased: [] });
        const lease = await loop.lease();
        assert.ok(lease.owner !== null && lease.released, "the key was taken and released");
        const inspect = await loop.run(
          ["exp", "leased", "--teardown", "--recover-shared-state", KEY],
          "Z",
        );
        assert.equal(inspect.code, 0, inspect.stdout + inspect.stderr);
      },
    );
  } finally {
    await Deno.remove(logDir, { recursive: true });
  }
});
