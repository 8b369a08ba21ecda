/**
 * Interrupts and kills of a real `niceeval exp` (INT-1, INT-5, REC-10, cli.md §11 checks 7–8), and
 * the salvage of a killed Run by the next `exp` or by `clean` (docs/record.md "Salvage").
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { drain, ndjson, readUntil, tempProject } from "../_helpers/cli.ts";
import { readRunFiles } from "../_helpers/record_files.ts";

type Project = Awaited<ReturnType<typeof tempProject>>;

const recordOf = (p: Project) => join(p.dir, ".niceeval", "record");

async function runNames(dir: string): Promise<string[]> {
  const out: string[] = [];
  try {
    for await (const e of Deno.readDir(join(dir, ".niceeval", "record", "runs"))) out.push(e.name);
  } catch {
    return [];
  }
  return out.sort();
}

async function published(dir: string, runId: string): Promise<boolean> {
  try {
    return (await Deno.stat(join(dir, ".niceeval", "record", "runs", runId, "complete"))).isFile;
  } catch {
    return false;
  }
}

Deno.test("niceeval exp: SIGINT while Attempts run publishes interrupted Runs and ends with one receipt exits 130", async () => {
  await using p = await tempProject("slow_project");
  const child = p.spawn(["exp", "--json"]);
  const { lines, rest } = await readUntil(child, (line) => line.includes('"attempt_start"'));
  child.kill("SIGINT");
  const tail = await drain(rest);
  const status = await child.status;
  await child.stderr.cancel();
  assert.equal(status.code, 130);
  const events = ndjson([...lines, tail].join("\n"));
  assert.equal(events[0]!.type, "start");
  assert.equal(events.filter((e) => e.type === "receipt").length, 1);
  const receipt = events.at(-1)!;
  assert.deepEqual([receipt.type, receipt.completion, receipt.headline, receipt.exitCode], [
    "receipt",
    "interrupted",
    "INTERRUPTED",
    130,
  ]);
  assert.equal(events.filter((e) => e.type === "interrupted").length, 1);
  const ends = events.filter((e) => e.type === "attempt_end");
  assert.ok(
    ends.length >= 1 && ends.every((e) => e.outcome === "interrupted" || e.outcome === "completed"),
    JSON.stringify(ends),
  );
  assert.ok(events.some((e) => e.type === "not_dispatched" && e.reason === "interrupted"));
  const [runId] = receipt.runIds as string[];
  assert.ok(runId && await published(p.dir, runId));
  const run = await readRunFiles(recordOf(p), runId);
  assert.equal(run.end?.completion, "interrupted");
  assert.equal(run.records.at(-1), run.end, "the end record closes the log");
  assert.equal(run.header.completion, undefined, "the header is written once, at start");
  assert.equal(run.members.size, 6, "every slot has its member");
});

Deno.test("niceeval exp: SIGHUP takes the SIGTERM path: the Run is published interrupted, exits 130", async () => {
  await using p = await tempProject("slow_project");
  const child = p.spawn(["exp", "--json"]);
  const { lines, rest } = await readUntil(child, (line) => line.includes('"attempt_start"'));
  child.kill("SIGHUP");
  const tail = await drain(rest);
  const status = await child.status;
  await child.stderr.cancel();
  assert.equal(status.code, 130);
  const receipt = ndjson([...lines, tail].join("\n")).at(-1)!;
  assert.deepEqual([receipt.type, receipt.completion], ["receipt", "interrupted"]);
  const [runId] = receipt.runIds as string[];
  assert.ok(runId && await published(p.dir, runId));
});

/** Kills `exp --json` (with `args`) after its first `attempt_end`; returns the killed RunId. */
async function killAfterFirstEnd(p: Project, args: string[]): Promise<string> {
  const before = await runNames(p.dir);
  const child = p.spawn(["exp", "--json", ...args]);
  const { rest } = await readUntil(child, (line) => line.includes('"attempt_end"'));
  child.kill("SIGKILL");
  await child.status;
  await rest.cancel();
  await child.stderr.cancel();
  const killed = (await runNames(p.dir)).filter((id) => !before.includes(id));
  assert.equal(killed.length, 1, "the killed process began one Run");
  assert.equal(await published(p.dir, killed[0]!), false);
  return killed[0]!;
}

Deno.test("niceeval exp: a SIGKILLed run stays unpublished, show warns, --dry counts it, the rerun salvages its finished Attempts and carries them exits 0", async () => {
  await using p = await tempProject("slow_project");
  assert.equal((await p.run(["exp", "slow", "steps/0000"])).code, 0);
  const killed = await killAfterFirstEnd(p, []);
  await t_show(p);
  // What the killed process wrote before it died is what salvage keeps (whole records only).
  const left = await readRunFiles(recordOf(p), killed);
  const kept = left.attempts.size;
  assert.equal(left.end, undefined);
  const counts = `${kept} finished Attempt(s) kept, ${5 - kept} slot(s) interrupted`;
  const dry = await p.run(["exp", "--dry", "--json"]);
  assert.equal(dry.code, 0, dry.stderr);
  const root = join(await Deno.realPath(p.dir), ".niceeval", "record");
  assert.deepEqual(
    (JSON.parse(dry.stdout).problems as { code: string; message: string }[])
      .filter((problem) => problem.code === "record-salvage-pending")
      .map((problem) => problem.message),
    [`1 run(s) left unpublished by a killed process in ${root} would be salvaged by the next run: ${counts}`],
  );
  assert.equal(await published(p.dir, killed), false, "--dry writes nothing");
  const rerun = await p.run(["exp", "--json"]);
  assert.equal(rerun.code, 0, rerun.stderr);
  const events = ndjson(rerun.stdout);
  assert.deepEqual([events[0]!.reused, events[0]!.toRun], [1 + kept, 5 - kept]);
  assert.equal(events[0]!.recordRoot, root);
  const warnings = events.filter((e) => e.type === "warning");
  assert.deepEqual(warnings.map((e) => [e.code, e.message]), [[
    "record-salvaged",
    `salvaged 1 run(s) left unpublished by a killed process in ${root}: ${counts}; published as crashed`,
  ]]);
  const sealed = await readRunFiles(recordOf(p), killed);
  assert.equal(sealed.published, true);
  assert.equal(sealed.tornBytes, 0);
  assert.equal(sealed.end?.completion, "crashed");
  assert.deepEqual([...sealed.attempts.keys()], [...left.attempts.keys()], "no Attempt is lost");
  const actions = [...sealed.members.values()].map((m) => m.action as string).sort();
  assert.deepEqual(actions, [
    "carried",
    ...Array<string>(kept).fill("executed"),
    ...Array<string>(5 - kept).fill("interrupted"),
  ]);
  const clean = await p.run(["clean"]);
  assert.equal(clean.code, 0, clean.stderr);
  assert.equal(clean.stdout, `nothing to clean in ${root}\n`);
});

Deno.test("niceeval clean: salvages a SIGKILLed run's finished Attempts, and --discard removes one exits 0", async (t) => {
  await using p = await tempProject("slow_project");
  const root = join(await Deno.realPath(p.dir), ".niceeval", "record");
  await t.step("clean publishes the killed Run as crashed with its finished Attempts", async () => {
    const killed = await killAfterFirstEnd(p, []);
    const kept = (await readRunFiles(recordOf(p), killed)).attempts.size;
    const clean = await p.run(["clean"]);
    assert.equal(clean.code, 0, clean.stderr);
    assert.equal(
      clean.stdout,
      `salvaged 1 run(s) left by a killed process in ${root}: ${kept} finished Attempt(s) kept, published as crashed\n`,
    );
    const sealed = await readRunFiles(recordOf(p), killed);
    assert.deepEqual([sealed.published, sealed.end?.completion], [true, "crashed"]);
    assert.equal(sealed.attempts.size, kept);
    const show = await p.run(["show"]);
    assert.deepEqual([show.code, show.stderr], [0, ""], "nothing is left unpublished");
    assert.equal((await p.run(["clean"])).stdout, `nothing to clean in ${root}\n`);
  });
  await t.step("clean --discard deletes the killed Run", async () => {
    const killed = await killAfterFirstEnd(p, ["--rerun", "all"]);
    const clean = await p.run(["clean", "--discard"]);
    assert.equal(clean.code, 0, clean.stderr);
    assert.equal(clean.stdout, `removed 1 unpublished run(s) from ${root}\n`);
    assert.ok(!(await runNames(p.dir)).includes(killed));
    assert.equal((await p.run(["clean"])).stdout, `nothing to clean in ${root}\n`);
  });
});

async function t_show(p: Project): Promise<void> {
  const show = await p.run(["show"]);
  assert.equal(show.code, 0, show.stderr);
  assert.match(
    show.stderr,
    /^! 1 unpublished run\(s\) in .* ignored \(in progress, or left by a killed process; niceeval clean removes leftovers\)\n$/,
  );
  assert.match(show.stdout, /steps\/0000 +1\/1 passed/);
}

Deno.test("niceeval exp: SIGKILL at any point keeps published Runs readable and the next run salvages the killed one and carries exits 0", async (t) => {
  await using p = await tempProject("slow_project");
  assert.equal((await p.run(["exp"])).code, 0);
  const stops: [string, (line: string) => boolean][] = [
    ["right after start", (line) => line.includes('"start"')],
    ["after the first attempt_start", (line) => line.includes('"attempt_start"')],
    ["after the last eval line", (line) => line.includes('"eval"') && line.includes("steps/0005")],
  ];
  for (const [name, until] of stops) {
    await t.step(`killed ${name}`, async () => {
      const before = await runNames(p.dir);
      const child = p.spawn(["exp", "--rerun", "all", "--json"]);
      const { rest } = await readUntil(child, until);
      child.kill("SIGKILL");
      await child.status;
      await rest.cancel();
      await child.stderr.cancel();
      const show = await p.run(["show", "--json"]);
      assert.equal(show.code, 0, show.stderr);
      const doc = JSON.parse(show.stdout);
      assert.equal(doc.rows.length, 6);
      assert.ok(doc.rows.every((r: { attempt: unknown }) => r.attempt !== null));
      const carry = await carriedAfterKill(p, before);
      const rerun = await p.run(["exp", "--json"]);
      assert.equal(rerun.code, 0, rerun.stderr);
      const events = ndjson(rerun.stdout);
      assert.equal(events[0]!.reused, carry.reused);
      const salvaged = events.filter((e) => e.code === "record-salvaged").length;
      assert.equal(salvaged, carry.salvaged ? 1 : 0);
      const unpublished = events.filter((e) => e.code === "record-unpublished-runs").length;
      assert.equal(unpublished, carry.unpublished ? 1 : 0);
    });
  }
});

/**
 * What the next `exp` does after a kill, from what the killed process left: a Run that got its
 * header is salvaged (or was already published) and becomes the source of its slots, carrying its
 * settled Attempts. A Run without a header leaves the earlier Run the source; it is removed when
 * it holds at most an empty log, else (a header's temp file) it stays unpublished for `clean`.
 */
async function carriedAfterKill(
  p: Project,
  before: readonly string[],
): Promise<{ reused: number; salvaged: boolean; unpublished: boolean }> {
  const killed = (await runNames(p.dir)).filter((id) => !before.includes(id));
  assert.ok(killed.length <= 1, "the killed process began at most one Run");
  if (killed.length === 0) return { reused: 6, salvaged: false, unpublished: false };
  const dir = join(recordOf(p), "runs", killed[0]!);
  const entries = await Array.fromAsync(Deno.readDir(dir));
  if (!entries.some((e) => e.name === "run.json")) {
    const log = entries.some((e) => e.name === "records.log") &&
      (await Deno.lstat(join(dir, "records.log"))).size > 0;
    const other = entries.some((e) => e.name !== "records.log");
    return { reused: 6, salvaged: false, unpublished: log || other };
  }
  const left = await readRunFiles(recordOf(p), killed[0]!);
  return { reused: left.attempts.size, salvaged: !left.published, unpublished: false };
}
