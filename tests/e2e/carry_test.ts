/**
 * Rerun and carry on the real CLI (scheduling.md §22, cli.md §7): which slots an edit re-executes,
 * the `--rerun` tiers, what carried slots never start, and the reasons `--dry` names.
 * `carry_project` has two direct experiments under `direct/` and a sandboxed `boxed` one with
 * hooks; `carry_faults_project` has one eval whose Attempts fail or error on a token the test
 * puts in `$CARRY_FAULTS` (no part of identity).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ndjson, REPO, type TempProject, tempProject } from "../_helpers/cli.ts";
import { tree } from "./_coordination.ts";
import { weatherServer } from "../_fakes/chat_server.ts";

type Json = Record<string, unknown>;

/** What one `exp --json` did. */
interface Exec {
  readonly code: number;
  readonly events: Json[];
  readonly start: Json;
  /** `<experimentId>:<evalId>#<ordinal>` of every dispatched Attempt, sorted. */
  readonly executed: string[];
  /** attempt_start events by slot name. */
  readonly attempts: Map<string, Json>;
  readonly runIds: string[];
}

const slotName = (e: Json) => `${e.experimentId}:${e.evalId}#${e.ordinal}`;

async function exp(p: TempProject, args: string[], env: Record<string, string> = {}) {
  const r = await p.run(["exp", ...args, "--json"], { env });
  const events = ndjson(r.stdout);
  const starts = events.filter((e) => e.type === "attempt_start");
  const receipt = events.find((e) => e.type === "receipt");
  assert.ok(receipt, r.stdout + r.stderr);
  return {
    code: r.code,
    events,
    start: events[0]!,
    executed: starts.map(slotName).sort(),
    attempts: new Map(starts.map((e) => [slotName(e), e])),
    runIds: receipt.runIds as string[],
  } satisfies Exec;
}

/** `exp --json` that must exit `code`. */
async function expect(p: TempProject, args: string[], code = 0, env: Record<string, string> = {}) {
  const r = await exp(p, args, env);
  assert.equal(r.code, code, JSON.stringify(r.events));
  return r;
}

/** The `--dry --json` decisions by slot name: `carry`, or `run:<reason>[:<detail>]`. */
async function dry(p: TempProject, args: string[]): Promise<{ doc: Json; decisions: Json }> {
  const r = await p.run(["exp", ...args, "--dry", "--json"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
  const doc = JSON.parse(r.stdout) as Json;
  const decisions: Json = {};
  for (const row of doc.rows as Json[]) {
    for (const o of row.ordinals as Json[]) {
      decisions[`${row.experimentId}:${row.evalId}#${o.ordinal}`] = o.action === "carry"
        ? "carry"
        : ["run", o.reason, ...(o.detail ? [o.detail] : [])].join(":");
    }
  }
  return { doc, decisions };
}

async function edit(p: TempProject, path: string, from: string, to: string): Promise<void> {
  const text = await p.read(path);
  assert.ok(text.includes(from), `${path} contains ${from}`);
  await p.write(path, text.replace(from, to));
}

const ALL_DIRECT = [
  "direct/base:standalone#0",
  "direct/base:standalone#1",
  "direct/base:uses_helper#0",
  "direct/base:uses_helper#1",
  "direct/other:standalone#0",
  "direct/other:uses_helper#0",
];

Deno.test("niceeval exp: an unchanged rerun carries every slot from the Attempts that executed them and dispatches none exits 0", async () => {
  await using p = await tempProject("carry_project");
  const first = await expect(p, ["direct"]);
  assert.deepEqual(first.executed, ALL_DIRECT);
  const second = await expect(p, ["direct"]);
  assert.deepEqual(second.executed, []);
  assert.deepEqual([second.start.reused, second.start.toRun], [6, 0]);
  for (const runId of second.runIds) {
    const show = await p.run(["show", "--run", runId, "--json"]);
    assert.equal(show.code, 0, show.stderr);
    for (const row of JSON.parse(show.stdout).rows as Json[]) {
      const origin = first.attempts.get(slotName(row))!;
      const attempt = row.attempt as Json;
      assert.deepEqual([row.state, attempt.attemptId, attempt.originRunId], [
        "carried",
        origin.attemptId,
        origin.runId,
      ]);
    }
  }
  const human = await p.run(["exp", "direct"], { env: { CI: "1" } });
  assert.equal(human.code, 0, human.stderr);
  assert.equal(human.stdout.split("\n")[2], "  6 of 6 reused from earlier runs · 0 to run");
});

Deno.test("niceeval exp: carried slots start no sandbox and an all-carried experiment runs no setup or teardown exits 0", async () => {
  await using p = await tempProject("carry_project");
  const marks = join(p.dir, "marks.log");
  const env = { CARRY_MARKS: marks, CI: "1" };
  const read = async () => (await Deno.readTextFile(marks)).split("\n").filter(Boolean);
  const first = await expect(p, ["boxed"], 0, env);
  assert.equal(first.executed.length, 2);
  assert.deepEqual(await read(), ["setup", "sandbox-setup", "sandbox-setup", "teardown"]);
  const carried = await expect(p, ["boxed"], 0, env);
  assert.deepEqual(carried.executed, []);
  assert.ok(!carried.events.some((e) => e.type === "experiment_setup"));
  assert.equal((await read()).length, 4, "nothing ran");
  const more = await expect(p, ["boxed", "--attempts", "3"], 0, env);
  assert.deepEqual(more.executed, ["boxed:standalone#2"]);
  assert.deepEqual((await read()).slice(4), ["setup", "sandbox-setup", "teardown"]);
});

Deno.test("niceeval exp: editing an eval, a helper it imports, the model or the flags re-executes exactly the affected slots exits 0", async (t) => {
  await using p = await tempProject("carry_project");
  assert.deepEqual((await expect(p, ["direct"])).executed, ALL_DIRECT);
  await t.step("the eval file: its slots in every experiment", async () => {
    await edit(p, "evals/standalone.eval.ts", '"Anything else"', '"Anything else?"');
    assert.deepEqual((await expect(p, ["direct"])).executed, [
      "direct/base:standalone#0",
      "direct/base:standalone#1",
      "direct/other:standalone#0",
    ]);
  });
  await t.step("a helper the eval imports: that eval's slots", async () => {
    await edit(p, "evals/_lib/prompts.ts", '"Say hello"', '"Say hello!"');
    assert.deepEqual((await expect(p, ["direct"])).executed, [
      "direct/base:uses_helper#0",
      "direct/base:uses_helper#1",
      "direct/other:uses_helper#0",
    ]);
  });
  await t.step("the model: that experiment's slots", async () => {
    await edit(p, "experiments/direct/base.ts", '"model-a"', '"model-b"');
    assert.deepEqual((await expect(p, ["direct"])).executed, ALL_DIRECT.slice(0, 4));
  });
  await t.step("the flags: that experiment's slots", async () => {
    await edit(p, "experiments/direct/base.ts", "temperature: 0", "temperature: 1");
    assert.deepEqual((await expect(p, ["direct"])).executed, ALL_DIRECT.slice(0, 4));
  });
  await t.step("nothing changed: nothing; --rerun all: everything", async () => {
    assert.deepEqual((await expect(p, ["direct"])).executed, []);
    assert.deepEqual((await expect(p, ["direct", "--rerun", "all"])).executed, ALL_DIRECT);
  });
});

Deno.test("S133 a changed agent flag makes --dry mark every ordinal identity-changed, a changed description carries exits 0", async () => {
  await using p = await tempProject("carry_project");
  await expect(p, ["direct"]);
  await edit(p, "experiments/direct/base.ts", "the base configuration", "a new description");
  const described = await dry(p, ["direct"]);
  assert.deepEqual(Object.values(described.decisions), ALL_DIRECT.map(() => "carry"));
  await edit(p, "experiments/direct/base.ts", "temperature: 0", "temperature: 0.5");
  const flagged = await dry(p, ["direct"]);
  assert.deepEqual(flagged.decisions, {
    "direct/base:standalone#0": "run:identity-changed:config",
    "direct/base:standalone#1": "run:identity-changed:config",
    "direct/base:uses_helper#0": "run:identity-changed:config",
    "direct/base:uses_helper#1": "run:identity-changed:config",
    "direct/other:standalone#0": "carry",
    "direct/other:uses_helper#0": "carry",
  });
});

Deno.test("niceeval exp --dry: every ordinal names its decision, source and reason in text and JSON and nothing is written exits 0", async (t) => {
  await using p = await tempProject("carry_project");
  const first = await expect(p, ["direct"]);
  const locator = (slot: string) => first.attempts.get(slot)!.locator as string;
  await edit(p, "evals/standalone.eval.ts", '"Anything else"', '"Anything else?"');
  await edit(p, "experiments/direct/base.ts", "temperature: 0", "temperature: 1");
  const record = join(p.dir, ".niceeval", "record");
  const before = await tree(record);
  await t.step(
    "human rows: carry with locator and verdict, runs with collapsed reasons",
    async () => {
      const r = await p.run(["exp", "direct", "--attempts", "3", "--dry"]);
      assert.equal(r.code, 0, r.stderr);
      const lines = r.stdout.trimEnd().split("\n");
      assert.equal(lines[0], "PLAN (dry run)");
      assert.equal(lines[2], "  1 of 12 reused from earlier runs · 11 to run");
      assert.deepEqual(lines.slice(3), [
        "direct/base   standalone   #0–1 run: experiment and eval changed · #2 run: new",
        "direct/base   uses_helper  #0–1 run: experiment changed · #2 run: new",
        "direct/other  standalone   #0 run: eval changed · #1–2 run: new",
        `direct/other  uses_helper  #0 reuse ${
          locator("direct/other:uses_helper#0")
        } (passed) · #1–2 run: new`,
      ]);
    },
  );
  await t.step("JSON rows: source Run, locator and verdict of the source Attempt", async () => {
    const { doc, decisions } = await dry(p, ["direct"]);
    assert.deepEqual([doc.total, doc.reused, doc.toRun, doc.rerun], [6, 1, 5, null]);
    assert.deepEqual(decisions, {
      "direct/base:standalone#0": "run:identity-changed:config,input",
      "direct/base:standalone#1": "run:identity-changed:config,input",
      "direct/base:uses_helper#0": "run:identity-changed:config",
      "direct/base:uses_helper#1": "run:identity-changed:config",
      "direct/other:standalone#0": "run:identity-changed:input",
      "direct/other:uses_helper#0": "carry",
    });
    for (const row of doc.rows as Json[]) {
      for (const o of row.ordinals as Json[]) {
        const slot = `${row.experimentId}:${row.evalId}#${o.ordinal}`;
        const origin = first.attempts.get(slot)!;
        assert.equal(row.sourceRunId, origin.runId, slot);
        assert.deepEqual([o.locator, o.verdict], [origin.locator, "passed"], slot);
      }
    }
  });
  await t.step("--rerun all: every ordinal runs by its tier", async () => {
    await edit(p, "evals/standalone.eval.ts", '"Anything else?"', '"Anything else"');
    await edit(p, "experiments/direct/base.ts", "temperature: 1", "temperature: 0");
    const { doc, decisions } = await dry(p, ["direct", "--rerun", "all"]);
    assert.equal(doc.rerun, "all");
    assert.deepEqual(Object.values(decisions), ALL_DIRECT.map(() => "run:rerun-tier"));
  });
  assert.deepEqual(await tree(record), before, "--dry writes nothing");
});

Deno.test("S134 a passed and a failed ordinal: no flag carries both, --rerun the pass only, --rerun all none exits 0", async () => {
  await using p = await tempProject("carry_faults_project");
  const faults = await Deno.makeTempDir({ dir: p.dir, prefix: "faults-" });
  const env = { CARRY_FAULTS: faults };
  await Deno.writeTextFile(join(faults, "fail-1"), "");
  const first = await expect(p, ["--attempts", "2"], 1, env);
  const verdicts = first.events.filter((e) => e.type === "attempt_end").map((e) => e.verdict);
  assert.deepEqual(verdicts.sort(), ["failed", "passed"]);
  const failed = first.events.find((e) => e.type === "attempt_end" && e.verdict === "failed")!;
  const failedSlot = slotName(failed);
  const passedSlot = failedSlot.endsWith("#0") ? "agent:check#1" : "agent:check#0";
  const none = await dry(p, ["--attempts", "2"]);
  assert.deepEqual(none.decisions, { [failedSlot]: "carry", [passedSlot]: "carry" });
  for (const tier of [["--rerun"], ["--rerun", "failed"], ["--rerun=failed"]]) {
    const failedOnly = await dry(p, ["--attempts", "2", ...tier]);
    assert.deepEqual(
      failedOnly.decisions,
      { [failedSlot]: "run:rerun-tier", [passedSlot]: "carry" },
      tier.join(" "),
    );
  }
  const all = await dry(p, ["--attempts", "2", "--rerun", "all"]);
  assert.deepEqual(all.decisions, {
    [failedSlot]: "run:rerun-tier",
    [passedSlot]: "run:rerun-tier",
  });
  const unchanged = await expect(p, ["--attempts", "2"], 1, env);
  assert.deepEqual(unchanged.executed, [], "the carried failure still exits 1 (ERR-2)");
  assert.deepEqual((await expect(p, ["--attempts", "2", "--rerun"], 0, env)).executed, [
    failedSlot,
  ]);
});

Deno.test("S135 3 eligible of 5 ordinals plus one errored: exactly 2 run and 3 are reused exits 0", async () => {
  await using p = await tempProject("carry_faults_project");
  const faults = await Deno.makeTempDir({ dir: p.dir, prefix: "faults-" });
  const env = { CARRY_FAULTS: faults };
  await Deno.writeTextFile(join(faults, "error-1"), "");
  const first = await expect(p, ["--attempts", "4"], 1, env);
  const errored = first.events.filter((e) => e.type === "attempt_end" && e.verdict === "errored");
  assert.equal(errored.length, 1);
  const rerun = await expect(p, ["--attempts", "5"], 0, env);
  assert.deepEqual([rerun.start.reused, rerun.start.toRun], [3, 2]);
  assert.deepEqual(rerun.executed, [slotName(errored[0]!), "agent:check#4"].sort());
  const line = rerun.events.find((e) => e.type === "eval")!;
  assert.deepEqual([line.planned, line.reused, line.passed, line.errored], [5, 3, 5, 0]);
});

Deno.test("S136 a passed ordinal longer than the current timeout runs again with duration-exceeds-timeout exits 0", async () => {
  await using p = await tempProject("carry_faults_project");
  const first = await expect(p, []);
  assert.ok((first.events.find((e) => e.type === "attempt_end")!.durationMs as number) > 100);
  const short = await p.run(["exp", "--dry", "--timeout", "100"]);
  assert.equal(short.code, 0, short.stderr);
  assert.match(
    short.stdout,
    /\nagent {2}check {2}#0 run: earlier result took longer than the timeout\n/,
  );
  assert.deepEqual((await dry(p, ["--timeout", "60000"])).decisions, { "agent:check#0": "carry" });
  const carried = await expect(p, ["--timeout", "60000"]);
  assert.deepEqual(carried.executed, []);
  const run = JSON.parse(await p.read(`.niceeval/record/runs/${carried.runIds[0]}/run.json`));
  assert.equal(run.options.timeoutMs, 60000, "run.json records the deadline in force");
});

Deno.test("S137 the latest Run's errored ordinal runs again; the older pass is not used exits 0", async () => {
  await using p = await tempProject("carry_faults_project");
  const faults = await Deno.makeTempDir({ dir: p.dir, prefix: "faults-" });
  const env = { CARRY_FAULTS: faults };
  await expect(p, [], 0, env);
  await Deno.writeTextFile(join(faults, "error-1"), "");
  const latest = await expect(p, ["--rerun", "all"], 1, env);
  const { doc, decisions } = await dry(p, []);
  assert.deepEqual(decisions, { "agent:check#0": "run:verdict-not-eligible" });
  const row = (doc.rows as Json[])[0]!;
  assert.equal(row.sourceRunId, latest.runIds[0]);
  assert.equal((row.ordinals as Json[])[0]!.verdict, "errored");
  assert.deepEqual((await expect(p, [], 0, env)).executed, ["agent:check#0"]);
});

Deno.test("niceeval exp: other credentials, another API key variable or other header values carry every slot exits 0", async () => {
  await using server = weatherServer();
  await using p = await tempProject("openai_project");
  const env = { OPENAI_FIXTURE_BASE_URL: server.baseUrl };
  const file = "experiments/gateway.ts";
  await edit(p, file, "baseUrl,", 'baseUrl,\n    headers: { "x-trace": "trace-one" },');
  await p.write(".env", "OPENAI_API_KEY=sk-first-secret\n");
  assert.deepEqual((await expect(p, [], 0, env)).executed, ["gateway:weather#0"]);
  const answered = server.requests();
  assert.ok(answered > 0);
  await edit(p, file, '"trace-one"', '"trace-two"');
  await edit(p, file, "baseUrl,", 'baseUrl,\n    apiKeyEnv: "GATEWAY_API_KEY",');
  await p.write(".env", "GATEWAY_API_KEY=sk-second-secret\nOTHER_TOKEN=t-1\n");
  const shell = { ...env, OPENAI_API_KEY: "sk-shell-secret" };
  const r = await p.run(["exp", "--dry", "--json"], { env: shell });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).reused, 1);
  assert.deepEqual((await expect(p, [], 0, shell)).executed, []);
  assert.equal(server.requests(), answered, "nothing was sent again");
  for (const path of await tree(join(p.dir, ".niceeval", "record"))) {
    if (path.endsWith("/")) continue;
    const text = await Deno.readTextFile(join(p.dir, ".niceeval", "record", path));
    assert.ok(!/sk-\w+-secret/.test(text), `${path} holds no credential`);
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
