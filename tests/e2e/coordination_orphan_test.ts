/** Section J of scenarios.md with real processes: teardown registrations and orphan recovery. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ndjson } from "../_helpers/cli.ts";
import { type CoordProject, coordProject, type Mark, marksOf, tree } from "./_coordination.ts";

const TEARDOWNS = ".niceeval/coordination/teardowns";

/** Runs `exp <args>` as `tag` until the fixture holds at `phase`, then SIGKILLs it. */
async function killDuring(
  p: CoordProject,
  args: readonly string[],
  tag: string,
  phase: "setup" | "attempt" | "teardown",
): Promise<void> {
  await p.set(`hold-${phase}`);
  const child = p.start(["exp", ...args, "--json"], tag);
  await p.waitForMark((m) => m.tag === tag && m.event === `${phase}-held`, `${tag} holds ${phase}`);
  child.child.kill("SIGKILL");
  await child.finished();
  await p.clear(`hold-${phase}`);
}

function teardownsFor(marks: readonly Mark[], evals: readonly string[], tag?: string): Mark[] {
  return marksOf(marks, "teardown-start", tag).filter((m) =>
    JSON.stringify(m.detail?.evals) === JSON.stringify(evals)
  );
}

function notices(stdout: string, code: string): Record<string, unknown>[] {
  return ndjson(stdout).filter((e) => e.code === code);
}

for (const phase of ["setup", "attempt", "teardown"] as const) {
  Deno.test(`S64 after a SIGKILL during ${phase}, the next run recovers the orphan once before its own setup exits 0`, async () => {
    await using p = await coordProject();
    await killDuring(p, ["hooks", "steps/0001"], "A", phase);
    assert.equal((await tree(join(p.dir, TEARDOWNS))).length, 1, "A left its registration");
    const b = await p.exec(["exp", "hooks", "steps/0002", "--json"], "B");
    assert.equal(b.code, 0, b.stderr);
    const marks = await p.marks();
    const recovered = teardownsFor(marks, ["steps/0001"], "B");
    assert.equal(recovered.length, 1);
    const setupB = marks.findIndex((m) => m.tag === "B" && m.event === "setup-start");
    assert.ok(marks.indexOf(recovered[0]!) < setupB, "the orphan teardown ran before setup");
    const ran = notices(b.stdout, "orphan-teardown-ran");
    assert.equal(ran.length, 1);
    assert.equal(ran[0]!.experimentId, "hooks");
    assert.deepEqual(await tree(join(p.dir, TEARDOWNS)), []);
    const c = await p.exec(["exp", "hooks", "steps/0002", "--rerun", "all", "--json"], "C");
    assert.equal(c.code, 0, c.stderr);
    assert.equal(
      teardownsFor(await p.marks(), ["steps/0001"]).length - (phase === "teardown" ? 1 : 0),
      1,
    );
    assert.deepEqual(notices(c.stdout, "orphan-teardown-ran"), []);
  });
}

Deno.test("S65 a live registration of another process is left alone exits 0", async () => {
  await using p = await coordProject();
  await p.set("hold-attempt-A");
  await using a = p.start(["exp", "hooks", "steps/0000", "--json"], "A");
  await p.waitForMark((m) => m.tag === "A" && m.event === "attempt-held", "A runs");
  const [registration] = await tree(join(p.dir, TEARDOWNS));
  const b = await p.exec(["exp", "hooks", "steps/0001", "--record", "r2", "--json"], "B");
  assert.equal(b.code, 0, b.stderr);
  assert.deepEqual(notices(b.stdout, "orphan-teardown-ran"), []);
  assert.deepEqual(teardownsFor(await p.marks(), ["steps/0000"]), []);
  assert.deepEqual(await tree(join(p.dir, TEARDOWNS)), [registration]);
  await p.clear("hold-attempt-A");
  assert.equal((await a.finished()).code, 0);
  assert.deepEqual(await tree(join(p.dir, TEARDOWNS)), []);
});

Deno.test("S68 an orphan is recovered before the receipt even when every ordinal is carried exits 0", async () => {
  await using p = await coordProject();
  assert.equal((await p.exec(["exp", "hooks", "steps/0000"], "A")).code, 0);
  // B records on another root: on this one, C would salvage B's Run (docs/record.md "Salvage") and
  // carry from it, where steps/0000 is interrupted, so the ordinal would run again.
  await killDuring(p, ["hooks", "steps/0000", "--rerun", "all", "--record", "r2"], "B", "attempt");
  const c = await p.exec(["exp", "hooks", "steps/0000", "--json"], "C");
  assert.equal(c.code, 0, c.stderr);
  const events = ndjson(c.stdout);
  assert.deepEqual([events[0]!.reused, events[0]!.toRun], [1, 0]);
  const ran = events.findIndex((e) => e.code === "orphan-teardown-ran");
  assert.ok(ran > 0 && ran < events.length - 1, "the notice comes before the receipt");
  assert.equal(events.at(-1)!.type, "receipt");
  const marks = await p.marks();
  assert.equal(teardownsFor(marks, ["steps/0000"], "C").length, 1);
  assert.deepEqual(marksOf(marks, "setup-start", "C"), [], "no setup for a carried run");
});

Deno.test("S69 of two processes starting at once, exactly one recovers the orphan exits 0", async () => {
  await using p = await coordProject();
  await killDuring(p, ["hooks", "steps/0000"], "A", "attempt");
  await using b = p.start(["exp", "hooks", "steps/0001", "--record", "rb", "--json"], "B");
  await using c = p.start(["exp", "hooks", "steps/0001", "--record", "rc", "--json"], "C");
  const [doneB, doneC] = [await b.finished(), await c.finished()];
  assert.equal(doneB.code, 0, doneB.stderr);
  assert.equal(doneC.code, 0, doneC.stderr);
  assert.equal(teardownsFor(await p.marks(), ["steps/0000"]).length, 1);
  const ran = [
    ...notices(doneB.stdout, "orphan-teardown-ran"),
    ...notices(doneC.stdout, "orphan-teardown-ran"),
  ];
  assert.equal(ran.length, 1);
  assert.deepEqual(await tree(join(p.dir, TEARDOWNS)), []);
});

Deno.test("S70 orphans of an unselected Experiment get one reminder naming its --teardown command exits 0", async () => {
  await using p = await coordProject();
  await p.set("hold-attempt");
  const a = p.start(["exp", "other", "--json"], "A");
  const b = p.start(["exp", "other", "--record", "rb", "--json"], "B");
  // Both register while the other runs, so neither recovers the other's registration.
  for (const tag of ["A", "B"]) {
    await p.waitForMark((m) => m.tag === tag && m.event === "attempt-held", `${tag} runs`);
  }
  for (const child of [a, b]) {
    child.child.kill("SIGKILL");
    await child.finished();
  }
  await p.clear("hold-attempt");
  assert.equal((await tree(join(p.dir, TEARDOWNS))).length, 2);
  const c = await p.exec(["exp", "plain", "--json"], "C");
  assert.equal(c.code, 0, c.stderr);
  const pending = notices(c.stdout, "orphan-teardown-pending");
  assert.equal(pending.length, 1);
  assert.equal(pending[0]!.type, "notice");
  assert.match(String(pending[0]!.message), /niceeval exp other --teardown/);
  assert.equal(marksOf(await p.marks(), "other-teardown").length, 0);
  assert.equal((await tree(join(p.dir, TEARDOWNS))).length, 2, "reminders touch nothing");
});
