/** `niceeval list` and `niceeval exp list` on the real CLI (cli.md CMD-5 … CMD-8, §11 check 1). */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO, tempProject } from "../_helpers/cli.ts";

const EXAMPLE = join(REPO, "examples", "keyless");

const LIST = `Discovered 6 evals:
  deliberate-fail/broken
  deliberate-score/scored
  greet/hello              — greeting round-trip
  math/0000                — hello there
  math/0001                — hello again
  tool/weather             — calls get_weather for Brooklyn
`;

const EXP_LIST = `EXPERIMENT    AGENT      MODEL   PROVIDER  ATTEMPTS  EVALS  DESCRIPTION
checks/fail   det-fail   —       direct           1      1  —
checks/score  det-score  —       direct           1      1  —
local         det        det-v1  direct           1      4  deterministic baseline
`;

Deno.test("niceeval list: the day-one example prints the listing of cli.md §11 exits 0", async () => {
  await using p = await tempProject(EXAMPLE);
  const r = await p.run(["list"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
  assert.equal(r.stdout, LIST);
});

Deno.test("issue 18.8: niceeval exp list: the day-one example prints aligned columns under a header exits 0", async () => {
  await using p = await tempProject(EXAMPLE);
  const r = await p.run(["exp", "list"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
  assert.equal(r.stdout, EXP_LIST);
});

Deno.test("niceeval list: the files of init --example list exactly as cli.md §11 exits 0 (§11 check 1)", async () => {
  await using p = await tempProject(null);
  const init = await p.run(["init", "--example"]);
  assert.equal(init.code, 0, init.stderr);
  const list = await p.run(["list"]);
  assert.equal(list.code, 0, list.stderr);
  assert.equal(list.stdout, LIST);
  const exp = await p.run(["exp", "list"]);
  assert.equal(exp.code, 0, exp.stderr);
  assert.equal(exp.stdout, EXP_LIST);
});

Deno.test("niceeval list: --json prints the niceeval.evals document exits 0 (CMD-6)", async () => {
  await using p = await tempProject(EXAMPLE);
  const r = await p.run(["list", "--json"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
  const doc = JSON.parse(r.stdout);
  assert.equal(doc.format, "niceeval.evals");
  assert.equal(doc.schemaVersion, 1);
  assert.deepEqual(doc.evals.map((e: { evalId: string }) => e.evalId), [
    "deliberate-fail/broken",
    "deliberate-score/scored",
    "greet/hello",
    "math/0000",
    "math/0001",
    "tool/weather",
  ]);
  assert.deepEqual(doc.evals[1], {
    evalId: "deliberate-score/scored",
    kind: "score",
    description: null,
    tags: [],
    groupId: null,
  });
  assert.deepEqual(doc.evals[2], {
    evalId: "greet/hello",
    kind: "pass",
    description: "greeting round-trip",
    tags: ["smoke"],
    groupId: null,
  });
});

Deno.test("niceeval exp list: --json prints the niceeval.experiments document exits 0 (CMD-8)", async () => {
  await using p = await tempProject(EXAMPLE);
  const r = await p.run(["exp", "list", "--json", "--tag", "smoke"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
  const doc = JSON.parse(r.stdout);
  assert.equal(doc.format, "niceeval.experiments");
  assert.equal(doc.schemaVersion, 1);
  assert.deepEqual(doc.experiments.at(-1), {
    experimentId: "local",
    description: "deterministic baseline",
    agent: "det",
    model: "det-v1",
    provider: null,
    attempts: 1,
    maxConcurrency: null,
    earlyExit: false,
    evalIds: ["greet/hello"],
  });
  assert.deepEqual(doc.experiments.map((e: { evalIds: string[] }) => e.evalIds.length), [0, 0, 1]);
});

Deno.test("niceeval list: no match prints Discovered 0 evals. exits 0 (CMD-5)", async () => {
  await using p = await tempProject(EXAMPLE);
  const r = await p.run(["list", "nothing-here", "--tag", "smoke"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "Discovered 0 evals.\n");
});

Deno.test("niceeval list: a project with broken files lists every problem exits 2 (rule 1.6)", async () => {
  await using p = await tempProject("broken_discovery_project");
  const r = await p.run(["list"]);
  assert.equal(r.code, 2);
  assert.equal(r.stdout, "");
  const lines = r.stderr.trimEnd().split("\n");
  assert.equal(lines.filter((l) => l.startsWith("error: ")).length, 19);
  assert.equal(lines.filter((l) => l.startsWith("hint: ")).length, 1);
  assert.equal(lines.at(-1), "hint: fix the files listed above, then run the command again");
  const files = lines.slice(0, -1).map((l) => l.slice("error: ".length, l.indexOf(": ", 7)));
  assert.deepEqual(files, [...files].sort());
  assert.ok(lines.every((l) => /^(error|hint): /.test(l)), r.stderr);
  assert.ok(!r.stderr.includes(p.dir), "paths are project-relative");
});
