/** The day-one example end to end (cli.md §11 acceptance checks 2–7), on the real CLI. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ndjson, REPO, tempProject } from "../_helpers/cli.ts";
import { readRunFiles } from "../_helpers/record_files.ts";

const EXAMPLE = join(REPO, "examples", "keyless");

async function runDirs(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(join(dir, ".niceeval", "record", "runs"))) out.push(e.name);
  return out.sort();
}

async function names(dir: string): Promise<string[]> {
  const out: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) out.push(e.name);
  } catch {
    return [];
  }
  return out.sort();
}

async function readJson(path: string): Promise<Record<string, unknown>> {
  return JSON.parse(await Deno.readTextFile(path));
}

Deno.test("niceeval exp: the keyless example runs, carries and reports exits 0", async (t) => {
  await using p = await tempProject(EXAMPLE);
  let firstRun = "";
  await t.step("exp local passes and writes one published Run", async () => {
    const r = await p.run(["exp", "local"], { env: { CI: "1" } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      // A slow machine may print progress lines (issue 18.4) before the headline.
      /^PLAN\n {2}4 attempts \(4 evals × 1 experiment\) · concurrency 4 \(from config\)\n(\d+\/4 · .*\n)*PASSED /,
    );
    assert.match(
      r.stdout,
      /\n {2}4 passed · 0 failed · 0 errored {2}\(0 reused\)\n {2}21 new tok\n/,
    );
    const runs = await runDirs(p.dir);
    assert.equal(runs.length, 1);
    firstRun = runs[0]!;
    const root = join(p.dir, ".niceeval", "record");
    const runDir = join(root, "runs", firstRun);
    assert.deepEqual(await names(runDir), ["complete", "records.log", "run.json"]);
    assert.equal((await Deno.stat(join(runDir, "complete"))).size, 0);
    const record = await readJson(join(root, "record.json"));
    assert.equal(record.format, "niceeval.record");
    assert.equal(record.schemaVersion, 2);
    const run = await readRunFiles(root, firstRun);
    assert.equal(run.published, true);
    assert.equal(run.tornBytes, 0);
    assert.equal(run.members.size, 4);
    for (const member of run.members.values()) assert.equal(member.action, "executed");
    assert.equal(run.attempts.size, 4);
    for (const { attempt, assertions, events } of run.attempts.values()) {
      assert.equal(assertions.format, "niceeval.assertions");
      assert.equal(events.format, "niceeval.events");
      assert.equal(attempt.outcome, "completed");
      assert.equal(typeof attempt.startedAt, "string");
      assert.equal(typeof attempt.endedAt, "string");
    }
    assert.equal(run.end?.completion, "completed");
    assert.equal(run.records.at(-1), run.end, "the end record closes the log");
    assert.equal(run.header.completion, undefined, "the header is written once, at start");
    assert.equal((run.header.expectedSlots as unknown[]).length, 4);
  });
  await t.step("a second exp local carries every slot and executes nothing", async () => {
    const r = await p.run(["exp", "local", "--json"]);
    assert.equal(r.code, 0, r.stderr);
    const events = ndjson(r.stdout);
    assert.equal(events.filter((e) => e.type === "attempt_start").length, 0);
    assert.equal(events.at(-1)?.type, "receipt");
    assert.equal(events.filter((e) => e.type === "receipt").length, 1);
    const start = events[0]!;
    assert.equal(start.reused, 4);
    assert.equal(start.toRun, 0);
    const second = (await runDirs(p.dir)).find((id) => id !== firstRun)!;
    const run = await readRunFiles(join(p.dir, ".niceeval", "record"), second);
    assert.equal(run.attempts.size, 0);
    assert.equal(run.members.size, 4);
    for (const member of run.members.values()) {
      assert.equal(member.action, "carried");
      assert.equal((member.attempt as Record<string, string>).originRunId, firstRun);
    }
  });
  await t.step("exp local greet runs only greet/hello", async () => {
    const r = await p.run(["exp", "local", "greet", "--rerun", "all", "--json"]);
    assert.equal(r.code, 0, r.stderr);
    const starts = ndjson(r.stdout).filter((e) => e.type === "attempt_start");
    assert.deepEqual(starts.map((e) => e.evalId), ["greet/hello"]);
  });
  await t.step("checks/fail exits 1 and its JUnit has a failure", async () => {
    await Deno.mkdir(join(p.dir, "out"));
    const r = await p.run(["exp", "checks/fail", "--junit", "out/junit.xml"], { env: { CI: "1" } });
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stdout,
      /\n✗ deliberate-fail\/broken {2}checks\/fail#0 {2}failed {2}@1[0-9A-Z]{12}\n {4}turn succeeded · expected completed · received failed · deterministic failure\n/,
    );
    const xml = await p.read("out/junit.xml");
    assert.match(
      xml,
      /<failure type="assertion" message="turn succeeded · expected completed · received failed">/,
    );
    assert.match(xml, /<testsuites name="niceeval" tests="1" failures="1" errors="0" skipped="0"/);
  });
  await t.step("the carried failure still exits 1 without executing", async () => {
    const r = await p.run(["exp", "checks/fail", "--json"]);
    assert.equal(r.code, 1);
    const events = ndjson(r.stdout);
    assert.equal(events.filter((e) => e.type === "attempt_start").length, 0);
    assert.equal(events.find((e) => e.type === "eval")?.verdict, "failed");
  });
  await t.step("checks/score exits 0 with a SCORED headline", async () => {
    const r = await p.run(["exp", "checks/score"], { env: { CI: "1" } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /\nSCORED {2}[0-9.]+s\n {2}1 scored · 0 skipped · 0 errored {2}\(0 reused\)\n/,
    );
    // Issue 18.9: RESULTS is one line per experiment; a scored eval needs no line of its own.
    assert.match(
      r.stdout,
      /\n {2}checks\/score {2}score 2 · 1\/1 complete · [0-9.]+s · 0 new tok\n/,
    );
  });
  await t.step("show renders the project-current results", async () => {
    const r = await p.run(["show"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^checks\/fail {3}0\/1 passed \(0%\)\n/);
    assert.match(r.stdout, /\nlocal {9}4\/4 passed \(100%\)\n/);
  });
});

Deno.test("niceeval exp --dry: edits name the identity part that changed exits 0", async (t) => {
  await using p = await tempProject(EXAMPLE);
  assert.equal((await p.run(["exp", "local"])).code, 0);
  const dry = async () => {
    const r = await p.run(["exp", "local", "--dry", "--json"]);
    assert.equal(r.code, 0, r.stderr);
    const doc = JSON.parse(r.stdout) as {
      rows: {
        evalId: string;
        ordinals: { action: string; reason: string | null; detail: string | null }[];
      }[];
    };
    return Object.fromEntries(doc.rows.map((row) => [row.evalId, row.ordinals[0]!]));
  };
  await t.step("an unchanged project carries every row", async () => {
    const rows = await dry();
    assert.deepEqual(Object.values(rows).map((o) => o.action), [
      "carry",
      "carry",
      "carry",
      "carry",
    ]);
  });
  await t.step("editing an eval file changes that row's input only", async () => {
    await p.write(
      "evals/greet/hello.eval.ts",
      (await p.read("evals/greet/hello.eval.ts")) + "// edited\n",
    );
    const rows = await dry();
    assert.equal(rows["greet/hello"]!.action, "run");
    assert.equal(rows["greet/hello"]!.reason, "identity-changed");
    assert.equal(rows["greet/hello"]!.detail, "input");
    assert.equal(rows["math/0000"]!.action, "carry");
  });
  await t.step("changing the model changes every row's config", async () => {
    await p.write(
      "experiments/local.ts",
      (await p.read("experiments/local.ts")).replace("det-v1", "det-v2"),
    );
    const rows = await dry();
    assert.equal(rows["math/0000"]!.detail, "config");
    assert.equal(rows["greet/hello"]!.detail, "config,input");
  });
  await t.step("changing only the description carries", async () => {
    await p.write(
      "experiments/local.ts",
      (await p.read("experiments/local.ts")).replace("det-v2", "det-v1").replace(
        "deterministic baseline",
        "another text",
      ),
    );
    const rows = await dry();
    assert.equal(rows["math/0000"]!.action, "carry");
    assert.equal(rows["tool/weather"]!.action, "carry");
  });
  await t.step("human dry output names the reason per row", async () => {
    const r = await p.run(["exp", "local", "--dry"]);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^PLAN \(dry run\)\n/);
    assert.match(r.stdout, /\nlocal {2}greet\/hello {3}#0 run: eval changed\n/);
    assert.match(r.stdout, /\nlocal {2}math\/0000 {5}#0 reuse @1[0-9A-Z]{12} \(passed\)\n/);
  });
});
