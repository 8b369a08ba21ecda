/** Interrupts and kills of a real `niceeval exp` (INT-1, INT-5, REC-10, cli.md §11 checks 7–8). */
import assert from "node:assert/strict";
import { join } from "node:path";
import { drain, ndjson, readUntil, tempProject } from "../_helpers/cli.ts";

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
  const run = JSON.parse(await p.read(`.niceeval/record/runs/${runId}/run.json`));
  assert.equal(run.completion, "interrupted");
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

Deno.test("niceeval exp: a SIGKILLed run stays unpublished, show warns, the rerun carries only published results, clean removes it exits 0", async () => {
  await using p = await tempProject("slow_project");
  assert.equal((await p.run(["exp", "slow", "steps/0000"])).code, 0);
  const [first] = await runNames(p.dir);
  const child = p.spawn(["exp", "--json"]);
  const { rest } = await readUntil(child, (line) => line.includes('"attempt_end"'));
  child.kill("SIGKILL");
  await child.status;
  await rest.cancel();
  await child.stderr.cancel();
  const killed = (await runNames(p.dir)).find((id) => id !== first)!;
  assert.equal(await published(p.dir, killed), false);
  await t_show(p);
  const rerun = await p.run(["exp", "--json"]);
  assert.equal(rerun.code, 0, rerun.stderr);
  const events = ndjson(rerun.stdout);
  assert.deepEqual([events[0]!.reused, events[0]!.toRun], [1, 5]);
  assert.ok(events.some((e) => e.type === "warning" && e.code === "record-unpublished-runs"));
  const clean = await p.run(["clean"]);
  assert.equal(clean.code, 0, clean.stderr);
  assert.match(clean.stdout, /^removed 1 unpublished run\(s\) from /);
  assert.ok(!(await runNames(p.dir)).includes(killed));
  assert.equal((await p.run(["clean"])).stdout.startsWith("nothing to clean in "), true);
});

async function t_show(p: Awaited<ReturnType<typeof tempProject>>): Promise<void> {
  const show = await p.run(["show"]);
  assert.equal(show.code, 0, show.stderr);
  assert.match(
    show.stderr,
    /^! 1 unpublished run\(s\) in .* ignored \(in progress, or left by a killed process; niceeval clean removes leftovers\)\n$/,
  );
  assert.match(show.stdout, /steps\/0000 +1\/1 passed/);
}

Deno.test("niceeval exp: SIGKILL at any point keeps published Runs readable and the next run carries from them exits 0", async (t) => {
  await using p = await tempProject("slow_project");
  assert.equal((await p.run(["exp"])).code, 0);
  const stops: [string, (line: string) => boolean][] = [
    ["right after start", (line) => line.includes('"start"')],
    ["after the first attempt_start", (line) => line.includes('"attempt_start"')],
    ["after the last eval line", (line) => line.includes('"eval"') && line.includes("steps/0005")],
  ];
  for (const [name, until] of stops) {
    await t.step(`killed ${name}`, async () => {
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
      const rerun = await p.run(["exp", "--json"]);
      assert.equal(rerun.code, 0, rerun.stderr);
      assert.equal(ndjson(rerun.stdout)[0]!.reused, 6);
    });
  }
});
