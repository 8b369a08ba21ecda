/** Rerun and carry on the real CLI (issue: Record durability, rerun and carry; CARRY rules). */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ndjson, REPO, tempProject } from "../_helpers/cli.ts";

type Project = Awaited<ReturnType<typeof tempProject>>;

async function executed(p: Project, args: string[] = []): Promise<string[]> {
  const r = await p.run(["exp", ...args, "--json"]);
  assert.equal(r.code, 0, r.stderr + r.stdout);
  return ndjson(r.stdout)
    .filter((e) => e.type === "attempt_start")
    .map((e) => `${e.evalId}#${e.ordinal}`)
    .sort();
}

Deno.test("niceeval exp: an unchanged rerun carries every slot and dispatches no Attempt exits 0", async () => {
  await using p = await tempProject("carry_project");
  assert.equal((await executed(p)).length, 4);
  assert.deepEqual(await executed(p), []);
});

Deno.test("niceeval exp: editing a helper an eval imports re-executes exactly that eval's slots exits 0", async () => {
  await using p = await tempProject("carry_project");
  await executed(p);
  await p.write("evals/_lib/prompts.ts", 'export const GREETING = "Say hello!";\n');
  assert.deepEqual(await executed(p), ["uses_helper#0", "uses_helper#1"]);
  assert.deepEqual(await executed(p), []);
});

Deno.test("niceeval exp: changing the experiment's flags re-executes every slot, --rerun all too exits 0", async () => {
  await using p = await tempProject("carry_project");
  await executed(p);
  await p.write(
    "experiments/base.ts",
    (await p.read("experiments/base.ts")).replace("temperature: 0", "temperature: 1"),
  );
  assert.equal((await executed(p)).length, 4);
  assert.deepEqual(await executed(p), []);
  assert.equal((await executed(p, ["--rerun", "all"])).length, 4);
});

Deno.test("niceeval exp --dry: --rerun tiers and timeouts name their reasons exits 0", async () => {
  await using p = await tempProject("carry_project");
  await executed(p);
  const dry = async (args: string[]) => {
    const r = await p.run(["exp", "--dry", ...args]);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout;
  };
  assert.match(await dry(["--rerun", "all"]), /base {2}standalone {3}#0–1 run: rerun-tier\n/);
  assert.match(
    await dry(["--rerun"]),
    /base {2}standalone {3}#0 carry @1[0-9A-Z]{12} \(passed\) · #1 carry @1[0-9A-Z]{12} \(passed\)\n/,
  );
  assert.match(await dry(["--attempts", "3"]), /#2 run: new\n/);
});

Deno.test("niceeval show and exp: a corrupt file in a published Run exits 2 naming the file", async () => {
  await using p = await tempProject("carry_project");
  await executed(p);
  const runs: string[] = [];
  for await (const e of Deno.readDir(join(p.dir, ".niceeval", "record", "runs"))) runs.push(e.name);
  const runDir = join(p.dir, ".niceeval", "record", "runs", runs[0]!);
  const members: string[] = [];
  for await (const e of Deno.readDir(join(runDir, "members"))) members.push(e.name);
  const member = join(runDir, "members", members[0]!);
  await Deno.writeTextFile(member, (await Deno.readTextFile(member)).slice(0, 20));
  for (const args of [["show"], ["exp"], ["exp", "--dry"]]) {
    const r = await p.run(args);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stdout}${r.stderr}`);
    assert.equal(r.stdout, "");
    const lines = r.stderr.trimEnd().split("\n");
    assert.equal(lines.length, 2, r.stderr);
    assert.ok(lines[0]!.startsWith(`error: ${member}: invalid JSON`), lines[0]);
    assert.ok(lines[0]!.endsWith("[record-invalid]"), lines[0]);
    assert.match(lines[1]!, /^hint: move runs\/[0-9a-f-]+ out of /);
  }
});

Deno.test("niceeval exp --dry: editing a sandbox fixture or layer changes the configuration identity exits 0", async (t) => {
  await using p = await tempProject(join(REPO, "examples", "sandbox-local"));
  const reasons = async () => {
    const r = await p.run(["exp", "--dry", "--json"]);
    assert.equal(r.code, 0, r.stderr);
    const doc = JSON.parse(r.stdout) as {
      rows: { ordinals: { action: string; detail: string | null }[] }[];
    };
    return [
      ...new Set(doc.rows.flatMap((row) => row.ordinals.map((o) => `${o.action}:${o.detail}`))),
    ];
  };
  const run = await p.run(["exp", "--json"], { env: { CI: "1" } });
  assert.equal(run.code, 0, run.stdout + run.stderr);
  await t.step("unchanged: everything carries", async () => {
    assert.deepEqual(await reasons(), ["carry:null"]);
  });
  await t.step("a fixture file changes: config identity changes", async () => {
    await p.write("workspace/notes.md", (await p.read("workspace/notes.md")) + "\nmore\n");
    assert.deepEqual(await reasons(), ["run:config"]);
  });
  await t.step("a prepare step on the layer changes: config identity changes", async () => {
    await p.run(["exp", "--json"], { env: { CI: "1" } });
    assert.deepEqual(await reasons(), ["carry:null"]);
    const file = "experiments/local.ts";
    await p.write(
      file,
      (await p.read(file)).replace(
        'fixture: "../workspace" })',
        'fixture: "../workspace" }).prepare("true")',
      ),
    );
    assert.deepEqual(await reasons(), ["run:config"]);
  });
});
