/** `niceeval exp <sel> --teardown` with real processes (ORPH-7, CMD-9, CMD-10; S71 … S73). */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type CoordProject, coordProject, marksOf, tree } from "./_coordination.ts";

const TEARDOWNS = ".niceeval/coordination/teardowns";
const ALL_EVALS = [
  "many/0000",
  "many/0001",
  "many/0002",
  "many/0003",
  "many/0004",
  "many/0005",
  "many/0006",
  "steps/0000",
  "steps/0001",
  "steps/0002",
];

/** Leaves an orphan of `hooks` selecting `steps/0001` (SIGKILL during an Attempt). */
async function orphanOfHooks(p: CoordProject): Promise<void> {
  await p.set("hold-attempt");
  const a = p.start(["exp", "hooks", "steps/0001", "--json"], "A");
  await p.waitForMark((m) => m.tag === "A" && m.event === "attempt-held", "A runs");
  a.child.kill("SIGKILL");
  await a.finished();
  await p.clear("hold-attempt");
}

Deno.test("S71 --teardown without a registration runs teardown once while another process holds the root exits 0", async () => {
  await using p = await coordProject();
  await p.set("hold-attempt-A");
  await using a = p.start(["exp", "plain", "--json"], "A");
  await p.waitForMark((m) => m.tag === "A" && m.event === "attempt-held", "A holds the root");
  const runDirs = async () =>
    (await tree(join(p.dir, ".niceeval/record/runs"))).filter((path) => /^[^/]+\/$/.test(path));
  const runsBefore = await runDirs();
  const t = await p.exec(["exp", "hooks", "--teardown"], "T");
  assert.equal(t.code, 0, t.stderr);
  assert.match(t.stdout, /^hooks {2}ran \(no registration\) · \d+\.\ds\n$/);
  const marks = (await p.marks()).filter((m) => m.tag === "T");
  assert.deepEqual(marks.map((m) => m.event), ["teardown-start", "teardown-end"]);
  assert.deepEqual(marks[0]!.detail?.evals, ALL_EVALS);
  assert.deepEqual(await runDirs(), runsBefore, "no Run");
  await p.clear("hold-attempt-A");
  assert.equal((await a.finished()).code, 0);
});

Deno.test("S72 --teardown rejects eval prefixes and every other exp flag exits 2", async (t) => {
  await using p = await coordProject();
  const cases: [string, string[], RegExp][] = [
    ["an eval prefix", ["exp", "hooks", "steps/0000", "--teardown"], /no eval prefixes/],
    ["--json", ["exp", "hooks", "--teardown", "--json"], /--json cannot be combined/],
    ["--dry", ["exp", "hooks", "--teardown", "--dry"], /cannot be combined/],
    ["--record", ["exp", "hooks", "--teardown", "--record", "r"], /--record cannot be combined/],
    ["no selector", ["exp", "--teardown"], /requires an experiment selector/],
    [
      "--owner-token alone",
      ["exp", "hooks", "--teardown", "--owner-token", "a4f5c2de-0000-4000-8000-000000000000"],
      /requires --recover-shared-state/,
    ],
    [
      "a confirmation without --recover-shared-state",
      ["exp", "hooks", "--teardown", "--confirm-owner-terminated"],
      /requires --recover-shared-state/,
    ],
  ];
  for (const [name, args, message] of cases) {
    await t.step(name, async () => {
      const r = await p.exec(args, "T");
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, message);
      assert.match(r.stderr, /\[usage\]\nhint: /);
    });
  }
  assert.deepEqual(await p.marks(), [], "no hook ran");
  assert.deepEqual(await tree(join(p.dir, ".niceeval")), []);
});

Deno.test("S73 --teardown leaves a live registration alone and runs no teardown exits 0", async () => {
  await using p = await coordProject();
  await p.set("hold-attempt-A");
  await using a = p.start(["exp", "hooks", "steps/0000", "--json"], "A");
  await p.waitForMark((m) => m.tag === "A" && m.event === "attempt-held", "A runs");
  const registrations = await tree(join(p.dir, TEARDOWNS));
  assert.equal(registrations.length, 1);
  const t = await p.exec(["exp", "hooks", "--teardown"], "T");
  assert.equal(t.code, 0, t.stderr);
  assert.equal(t.stdout, "hooks  left 1 live registration(s) alone\n");
  assert.deepEqual(marksOf(await p.marks(), "teardown-start", "T"), []);
  assert.deepEqual(await tree(join(p.dir, TEARDOWNS)), registrations);
  await p.clear("hold-attempt-A");
  assert.equal((await a.finished()).code, 0);
});

Deno.test("niceeval exp: --teardown runs the teardown once per orphan with its selected evals, then never again exits 0", async () => {
  await using p = await coordProject();
  await orphanOfHooks(p);
  const t = await p.exec(["exp", "hooks", "--teardown"], "T");
  assert.equal(t.code, 0, t.stderr);
  assert.equal(t.stdout, "hooks  ran for 1 orphaned registration(s)\n");
  const runs = marksOf(await p.marks(), "teardown-start", "T");
  assert.deepEqual(runs.map((m) => m.detail?.evals), [["steps/0001"]]);
  assert.deepEqual(await tree(join(p.dir, TEARDOWNS)), []);
  const next = await p.exec(["exp", "hooks", "steps/0000", "--json"], "B");
  assert.equal(next.code, 0, next.stderr);
  assert.ok(!next.stdout.includes("orphan-teardown-ran"));
});

Deno.test("niceeval exp: --teardown reports not-configured and a failing teardown on its line exits 1", async () => {
  await using p = await coordProject();
  const plain = await p.exec(["exp", "plain", "--teardown"], "T");
  assert.deepEqual([plain.code, plain.stdout], [0, "plain  not-configured\n"]);
  await p.set("fail-teardown");
  const failed = await p.exec(["exp", "hooks", "--teardown"], "T");
  assert.equal(failed.code, 1);
  assert.equal(failed.stdout, "hooks  failed: injected teardown failure\n");
});
