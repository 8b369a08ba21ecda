/** Section L of scenarios.md with real processes: Record-root exclusivity (ROOT-1 … ROOT-5). */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ndjson } from "../_helpers/cli.ts";
import { readRunFiles } from "../_helpers/record_files.ts";
import { sha256Hex } from "../../src/_shared/mod.ts";
import { coordProject, flockFree, marksOf, pollUntil, tree } from "./_coordination.ts";

const RECORD = ".niceeval/record";

async function runIds(root: string): Promise<string[]> {
  return (await tree(join(root, "runs"))).filter((p) => /^[^/]+\/$/.test(p)).map((p) =>
    p.slice(0, -1)
  );
}

Deno.test("S92 a second exp on a busy root exits 2 while the first still holds it, writes nothing, and the first completes exits 0", async () => {
  await using p = await coordProject();
  await p.set("hold-attempt");
  await using a = p.start(["exp", "plain", "--json"], "A");
  await p.waitForMark((m) => m.event === "attempt-held", "A is blocked in an Attempt");
  const root = await Deno.realPath(join(p.dir, RECORD));
  // A keeps writing its own Run while B runs, so compare what only B could add: Run directories
  // and the root's own files.
  const topLevel = async () =>
    (await tree(root)).filter((path) => !path.includes("/") || /^runs\/[^/]+\/$/.test(path));
  const before = await topLevel();
  const b = await p.exec(["exp", "plain", "--json"], "B");
  // "At once, no wait" (ROOT-2) as causality, not speed: A cannot release the root before the
  // test clears its barrier, so a B that waited for the lock would never have returned here.
  assert.equal(a.exited, false, "B returned while A still runs");
  const rootLock = join(p.stateDir, "roots", `${sha256Hex(root)}.lock`);
  assert.equal(await flockFree(rootLock), false, "A still holds the root lock");
  assert.deepEqual(marksOf(await p.marks(), "attempt-end", "A"), [], "A is still blocked");
  assert.equal(b.code, 2);
  // No receipt and no run event: with --json only the error itself (issue 18.8).
  const bEvents = b.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(bEvents.map((e) => [e.type, e.code]), [["error", "record-root-busy"]]);
  assert.deepEqual(b.stderr.trimEnd().split("\n"), [
    `error: record root ${root} is in use by another niceeval process (pid ${a.pid}) [record-root-busy]`,
    `hint: wait for it, or use another root: --record ${join(p.dir, RECORD)}-2`,
  ]);
  assert.deepEqual(await topLevel(), before, "nothing written under the root");
  assert.deepEqual(marksOf(await p.marks(), "attempt-start", "B"), []);
  await p.clear("hold-attempt");
  const done = await a.finished();
  assert.equal(done.code, 0, done.stderr);
  const events = ndjson(done.stdout);
  assert.deepEqual(
    events.filter((e) => e.type === "attempt_end").map((e) => [e.evalId, e.verdict]).sort(),
    [["steps/0000", "passed"], ["steps/0001", "passed"], ["steps/0002", "passed"]],
    "A ran its whole plan undisturbed",
  );
  assert.deepEqual(events.filter((e) => e.type === "warning" || e.type === "error"), []);
  assert.equal(events.at(-1)!.completion, "completed");
});

Deno.test("S92 a busy root is refused before discovery: B reads no project file of A's exits 2", async () => {
  await using p = await coordProject();
  await p.set("hold-attempt");
  await using a = p.start(["exp", "plain", "--json"], "A");
  await p.waitForMark((m) => m.event === "attempt-held", "A is blocked in an Attempt");
  // A imported its files long ago; B would fail on this one if it discovered anything (ROOT-1).
  await p.write("experiments/broken.ts", "export default { agent: 'none' };\n");
  const b = await p.exec(["exp", "plain", "--json"], "B");
  assert.equal(b.code, 2);
  assert.match(b.stderr, /^error: record root .* \[record-root-busy\]$/m);
  assert.doesNotMatch(b.stderr, /broken/);
  await Deno.remove(join(p.dir, "experiments/broken.ts"));
  await p.clear("hold-attempt");
  assert.equal((await a.finished()).code, 0);
});

Deno.test("S93 Invocations on two roots run concurrently and each root holds its own Run exits 0", async () => {
  await using p = await coordProject();
  await p.set("hold-attempt");
  await using a = p.start(["exp", "plain", "--record", "r1", "--json"], "A");
  await using b = p.start(["exp", "plain", "--record", "r2", "--json"], "B");
  for (const tag of ["A", "B"]) {
    await p.waitForMark((m) => m.tag === tag && m.event === "attempt-held", `${tag} runs`);
  }
  await p.clear("hold-attempt");
  for (const [name, child] of [["A", a], ["B", b]] as const) {
    const done = await child.finished();
    assert.equal(done.code, 0, `${name}: ${done.stderr}`);
  }
  const [r1, r2] = [await runIds(join(p.dir, "r1")), await runIds(join(p.dir, "r2"))];
  assert.equal(r1.length, 1);
  assert.equal(r2.length, 1);
  assert.notEqual(r1[0], r2[0]);
  assert.ok((await tree(join(p.dir, "r1"))).includes(`runs/${r1[0]}/complete`));
  assert.ok((await tree(join(p.dir, "r2"))).includes(`runs/${r2[0]}/complete`));
});

Deno.test("S94 a symlink to a busy root is the same root exits 2", async () => {
  await using p = await coordProject();
  await p.set("hold-attempt");
  await using a = p.start(["exp", "plain", "--json"], "A");
  await p.waitForMark((m) => m.event === "attempt-held", "A runs");
  await Deno.symlink(join(p.dir, RECORD), join(p.dir, "alias"));
  const b = await p.exec(["exp", "plain", "--record", "alias"], "B");
  assert.equal(b.code, 2);
  assert.match(b.stderr, /\[record-root-busy\]/);
  await p.clear("hold-attempt");
  assert.equal((await a.finished()).code, 0);
});

Deno.test("S95 after a SIGKILLed holder the next run starts at once, salvages its unpublished Run, and clean finds nothing left exits 0", async () => {
  await using p = await coordProject();
  await p.set("hold-attempt");
  const a = p.start(["exp", "plain", "--json"], "A");
  await p.waitForMark((m) => m.event === "attempt-held", "A runs");
  a.child.kill("SIGKILL");
  await a.finished();
  await p.clear("hold-attempt");
  const root = join(p.dir, RECORD);
  const [killed] = await runIds(root);
  assert.ok(killed, "A left a Run directory");
  // Salvage keeps what A settled before it died (docs/record.md "Salvage").
  const kept = (await readRunFiles(root, killed)).attempts.size;
  const b = await p.exec(["exp", "plain", "--json"], "B");
  assert.equal(b.code, 0, b.stderr);
  const events = ndjson(b.stdout);
  assert.deepEqual([events[0]!.reused, events[0]!.toRun], [kept, 3 - kept]);
  const warnings = events.filter((e) => e.type === "warning").map((e) => e.code);
  assert.deepEqual(warnings, ["record-salvaged"]);
  const sealed = await readRunFiles(root, killed);
  assert.deepEqual([sealed.published, sealed.end?.completion], [true, "crashed"]);
  const clean = await p.run(["clean"]);
  assert.equal(clean.code, 0, clean.stderr);
  assert.match(clean.stdout, /^nothing to clean in /);
  assert.ok((await runIds(root)).includes(killed), "the salvaged Run is published and kept");
});

Deno.test("S96 while a run holds the root, clean exits 2 but show and exp --dry read published Runs exits 0", async () => {
  await using p = await coordProject();
  const first = await p.exec(["exp", "plain", "steps/0000"], "A");
  assert.equal(first.code, 0, first.stderr);
  await p.set("hold-attempt");
  await using b = p.start(["exp", "plain", "--rerun", "all", "--json"], "B");
  await p.waitForMark((m) => m.tag === "B" && m.event === "attempt-held", "B runs");
  const clean = await p.run(["clean"]);
  assert.equal(clean.code, 2);
  assert.match(clean.stderr, /\[record-root-busy\]/);
  const show = await p.run(["show", "--json"]);
  assert.equal(show.code, 0, show.stderr);
  const rows = JSON.parse(show.stdout).rows as { evalId: string; attempt: unknown }[];
  assert.deepEqual(rows.filter((r) => r.attempt !== null).map((r) => r.evalId), ["steps/0000"]);
  const dry = await p.run(["exp", "plain", "--dry", "--json"]);
  assert.equal(dry.code, 0, dry.stderr);
  assert.equal(JSON.parse(dry.stdout).reused, 1);
  assert.equal(b.exited, false);
  await p.clear("hold-attempt");
  assert.equal((await b.finished()).code, 0);
  await pollUntil(() => b.exited, "B exited");
});
