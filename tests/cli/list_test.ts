import assert from "node:assert/strict";
import { KEYLESS, localProject } from "./_project.ts";

const LIST = [
  "Discovered 6 evals:",
  "  deliberate-fail/broken",
  "  deliberate-score/scored",
  "  greet/hello              — greeting round-trip",
  "  math/0000                — hello there",
  "  math/0001                — hello again",
  "  tool/weather             — calls get_weather for Brooklyn",
  "",
].join("\n");

const EXP_LIST = [
  "EXPERIMENT    AGENT      MODEL   PROVIDER  ATTEMPTS  EVALS  DESCRIPTION",
  "checks/fail   det-fail   —       direct           1      1  —",
  "checks/score  det-score  —       direct           1      1  —",
  "local         det        det-v1  direct           1      4  deterministic baseline",
  "",
].join("\n");

Deno.test("runList() prints the day-one listing of cli.md §11 (CMD-5)", async () => {
  await using p = await localProject(KEYLESS);
  const r = await p.run(["list"]);
  assert.equal(r.code, 0);
  assert.equal(r.stderr, "");
  assert.equal(r.stdout, LIST);
});

Deno.test("runList() pads to the longest listed ID and says eval for one (CMD-5)", async () => {
  await using p = await localProject(KEYLESS);
  const one = await p.run(["list", "greet"]);
  assert.equal(one.stdout, "Discovered 1 eval:\n  greet/hello  — greeting round-trip\n");
  const two = await p.run(["list", "tool", "math/0001"]);
  assert.equal(
    two.stdout,
    "Discovered 2 evals:\n" +
      "  math/0001     — hello again\n" +
      "  tool/weather  — calls get_weather for Brooklyn\n",
  );
  assert.ok(!/ \n/.test(LIST + one.stdout + two.stdout), "no trailing spaces");
});

Deno.test("runList() keeps evals with any given tag (CMD-5)", async () => {
  await using p = await localProject(KEYLESS);
  const r = await p.run(["list", "--tag", "nope", "--tag", "smoke"]);
  assert.equal(r.stdout, "Discovered 1 eval:\n  greet/hello  — greeting round-trip\n");
});

Deno.test("runList() prints Discovered 0 evals. and exits 0 without a match (CMD-5)", async () => {
  await using p = await localProject(KEYLESS);
  for (const args of [["list", "nothing"], ["list", "--tag", "nope"]]) {
    const r = await p.run(args);
    assert.equal(r.code, 0);
    assert.equal(r.stdout, "Discovered 0 evals.\n");
  }
});

Deno.test("runList() prints the niceeval.evals document with --json (CMD-6)", async () => {
  await using p = await localProject(KEYLESS);
  const r = await p.run(["list", "--json", "math", "greet"]);
  assert.equal(r.code, 0);
  assert.equal(r.stderr, "");
  assert.ok(r.stdout.endsWith("}\n") && r.stdout.split("\n").length === 2);
  assert.deepEqual(JSON.parse(r.stdout), {
    format: "niceeval.evals",
    schemaVersion: 1,
    evals: [
      {
        evalId: "greet/hello",
        kind: "pass",
        description: "greeting round-trip",
        tags: ["smoke"],
        groupId: null,
      },
      { evalId: "math/0000", kind: "pass", description: "hello there", tags: [], groupId: null },
      { evalId: "math/0001", kind: "pass", description: "hello again", tags: [], groupId: null },
    ],
  });
  const score = JSON.parse((await p.run(["list", "--json", "deliberate-score"])).stdout);
  assert.deepEqual(score.evals, [{
    evalId: "deliberate-score/scored",
    kind: "score",
    description: null,
    tags: [],
    groupId: null,
  }]);
});

Deno.test("runList() prints discovery warnings on stderr, not under --json", async () => {
  await using p = await localProject(KEYLESS);
  await p.write("evals/empty.eval.ts", "export default [];\n");
  const human = await p.run(["list", "greet"]);
  assert.equal(human.code, 0);
  assert.equal(
    human.stderr,
    "! evals/empty.eval.ts: the exported dataset is empty; it yields no eval [discovery.empty-dataset]\n",
  );
  const json = await p.run(["list", "--json"]);
  assert.equal(json.stderr, "");
});

Deno.test("runList() reports a broken experiment file too (authoring.md rule 1.2.5)", async () => {
  await using p = await localProject(KEYLESS);
  await p.write("experiments/broken.ts", "export default 42;\n");
  const r = await p.run(["list"]);
  assert.equal(r.code, 2);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /^error: experiments\/broken\.ts: .*\[discovery\.invalid-export\]\n/);
});

Deno.test("issue 18.8: runExpList() prints aligned columns under a header (CMD-7)", async () => {
  await using p = await localProject(KEYLESS);
  const r = await p.run(["exp", "list"]);
  assert.equal(r.code, 0);
  assert.equal(r.stderr, "");
  assert.equal(r.stdout, EXP_LIST);
});

Deno.test("runExpList() selects experiments and counts evals after --tag (CMD-7, FLAG-1)", async () => {
  await using p = await localProject(KEYLESS);
  assert.equal(
    (await p.run(["exp", "list", "checks"])).stdout,
    "EXPERIMENT    AGENT      MODEL  PROVIDER  ATTEMPTS  EVALS  DESCRIPTION\n" +
      "checks/fail   det-fail   —      direct           1      1  —\n" +
      "checks/score  det-score  —      direct           1      1  —\n",
  );
  assert.equal(
    (await p.run(["exp", "list", "local", "--tag", "smoke"])).stdout,
    "EXPERIMENT  AGENT  MODEL   PROVIDER  ATTEMPTS  EVALS  DESCRIPTION\n" +
      "local       det    det-v1  direct           1      1  deterministic baseline\n",
  );
  const empty = await p.run(["exp", "list", "--tag", "none"]);
  assert.equal(empty.code, 0);
  const rows = empty.stdout.trimEnd().split("\n").slice(1);
  assert.deepEqual(rows.map((line) => line.split(/ +/)[5]), ["0", "0", "0"]);
});

Deno.test("runExpList() fails with experiment-not-found for an unknown selector (FLAG-1)", async () => {
  await using p = await localProject(KEYLESS);
  const r = await p.run(["exp", "list", "nope"]);
  assert.equal(r.code, 2);
  assert.equal(r.stdout, "");
  assert.equal(
    r.stderr,
    'error: no experiment matches "nope" [experiment-not-found]\n' +
      "hint: available experiments: checks/fail, checks/score, local\n",
  );
});

Deno.test("issue 18.8: runExpList() says no experiments found when there are none (CMD-7)", async () => {
  await using p = await localProject(null);
  await p.write(
    "niceeval.config.ts",
    'import { defineConfig } from "niceeval";\nexport default defineConfig({});\n',
  );
  const r = await p.run(["exp", "list"]);
  assert.equal(r.code, 0);
  assert.equal(r.stdout, "no experiments found\n");
  const json = await p.run(["exp", "list", "--json"]);
  assert.deepEqual(JSON.parse(json.stdout), {
    format: "niceeval.experiments",
    schemaVersion: 1,
    experiments: [],
  });
});

Deno.test("runExpList() prints the niceeval.experiments document with --json (CMD-8)", async () => {
  await using p = await localProject(KEYLESS);
  const r = await p.run(["exp", "list", "--json"]);
  assert.equal(r.code, 0);
  assert.equal(r.stderr, "");
  assert.deepEqual(JSON.parse(r.stdout), {
    format: "niceeval.experiments",
    schemaVersion: 1,
    experiments: [
      {
        experimentId: "checks/fail",
        description: null,
        agent: "det-fail",
        model: null,
        provider: null,
        attempts: 1,
        maxConcurrency: null,
        earlyExit: false,
        evalIds: ["deliberate-fail/broken"],
      },
      {
        experimentId: "checks/score",
        description: null,
        agent: "det-score",
        model: null,
        provider: null,
        attempts: 1,
        maxConcurrency: null,
        earlyExit: false,
        evalIds: ["deliberate-score/scored"],
      },
      {
        experimentId: "local",
        description: "deterministic baseline",
        agent: "det",
        model: "det-v1",
        provider: null,
        attempts: 1,
        maxConcurrency: null,
        earlyExit: false,
        evalIds: ["greet/hello", "math/0000", "math/0001", "tool/weather"],
      },
    ],
  });
});

Deno.test("runExpList() names the template's provider of a sandbox agent (CMD-7, CMD-8)", async () => {
  await using p = await localProject(null);
  await p.write(
    "niceeval.config.ts",
    'import { defineConfig } from "niceeval";\nexport default defineConfig({});\n',
  );
  await p.write(
    "evals/a.eval.ts",
    'import { defineEval } from "niceeval";\nexport default defineEval({ test() {} });\n',
  );
  await p.write(
    "experiments/boxed.ts",
    `import { defineExperiment } from "niceeval";
import { completeEvidenceCoverage, defineAgent } from "niceeval/adapter";
const layer = { kind: "template", provider: "docker" };
Object.defineProperty(layer, Symbol.for("niceeval.definition"), {
  value: Object.freeze({ kind: "sandbox-layer", version: 1 }),
});
const agent = defineAgent({
  name: "boxed",
  kind: "sandbox",
  evidenceCoverage: completeEvidenceCoverage,
  send: () => Promise.resolve({ status: "completed", events: [] }),
});
export default defineExperiment({ agent, sandbox: Object.freeze(layer) });
`,
  );
  const r = await p.run(["exp", "list"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    r.stdout,
    "EXPERIMENT  AGENT  MODEL  PROVIDER  ATTEMPTS  EVALS  DESCRIPTION\n" +
      "boxed       boxed  —      docker           1      1  —\n",
  );
  const json = JSON.parse((await p.run(["exp", "list", "--json"])).stdout);
  assert.equal(json.experiments[0].provider, "docker");
});
