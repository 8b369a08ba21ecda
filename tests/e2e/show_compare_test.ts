/**
 * `show --compare` (issue 17, item 2) on Records the real CLI wrote. `compare_project` has two
 * experiments whose evals read `t.flags.phase`: `before` (all evals but `arrived`) and `after`
 * (all but `left`), so that comparing them yields every per-eval state: `broke` regressed,
 * `mended` fixed, `broken` still failing, `steady` and the score eval `graded` (its score drops)
 * still passing, `arrived` new and `left` gone.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { main } from "../../src/cli/main.ts";
import { createFakeIo } from "../_fakes/io.ts";
import { ndjson, type TempProject, tempProject } from "../_helpers/cli.ts";

type Json = Record<string, unknown>;

const ISO_REGEXP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** Runs `exp <experiment>` on the real CLI; returns the RunId it published. */
async function exp(p: TempProject, experiment: string): Promise<string> {
  const r = await p.run(["exp", experiment, "--json"]);
  const receipt = ndjson(r.stdout).find((e) => e.type === "receipt");
  assert.ok(receipt, r.stdout + r.stderr);
  const runIds = receipt.runIds as string[];
  assert.equal(runIds.length, 1);
  return runIds[0]!;
}

/** Runs `niceeval <args>` in-process in the project. */
async function niceeval(p: TempProject, args: string[]) {
  const io = createFakeIo({ cwd: p.dir });
  const code = await main(args, io);
  return { code, stdout: io.stdout.text(), stderr: io.stderr.text() };
}

/** A project with one published Run of `before`, then one of `after`. */
async function twoRuns(): Promise<{ p: TempProject; before: string; after: string }> {
  const p = await tempProject("compare_project");
  const before = await exp(p, "before");
  const after = await exp(p, "after");
  return { p, before, after };
}

const EVAL_LINES = [
  "  regressed      broke    2/2 passed            →  0/2 passed",
  "  fixed          mended   0/2 passed            →  2/2 passed",
  "  still failing  broken   0/2 passed            →  0/2 passed",
  "  still passing  graded   2/2 passed · score 2  →  2/2 passed · score 1",
  "  new            arrived  —                     →  2/2 passed",
  "  gone           left     2/2 passed            →  —",
];

const pass = (passed: number) => ({ passed, total: 2, meanScore: null });

const EVALS = [
  { evalId: "broke", state: "regressed", a: pass(2), b: pass(0) },
  { evalId: "broken", state: "still-failing", a: pass(0), b: pass(0) },
  {
    evalId: "graded",
    state: "still-passing",
    a: { passed: 2, total: 2, meanScore: 2 },
    b: { passed: 2, total: 2, meanScore: 1 },
  },
  { evalId: "left", state: "gone", a: pass(2), b: null },
  { evalId: "mended", state: "fixed", a: pass(0), b: pass(2) },
  { evalId: "steady", state: "still-passing", a: pass(2), b: pass(2) },
  { evalId: "arrived", state: "new", a: null, b: pass(2) },
];

Deno.test("niceeval show --compare: two experiments print regressed, fixed, still failing, new and gone exits 0", async () => {
  const { p, before, after } = await twoRuns();
  await using _ = p;
  const r = await niceeval(p, ["show", "--compare", "before", "after"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
  const lines = r.stdout.split("\n");
  assert.match(lines[0]!, new RegExp(`^before  run ${before} · before · \\S+$`));
  assert.match(lines[1]!, new RegExp(`^after   run ${after} · after · \\S+$`));
  assert.deepEqual(lines.slice(2), [
    "fixed 1 · regressed 1 · still failing 1 · still passing 2 · new 1 · gone 1",
    ...EVAL_LINES,
    "",
  ]);
});

Deno.test("niceeval show --compare --json: RunId and RunId prefix give the niceeval.compare document exits 0", async () => {
  const { p, before, after } = await twoRuns();
  await using _ = p;
  const r = await niceeval(p, ["show", "--compare", before.slice(0, 8), after, "--json"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
  const doc = JSON.parse(r.stdout) as Json;
  const a = doc.a as Json;
  const b = doc.b as Json;
  assert.match(a.startedAt as string, ISO_REGEXP);
  assert.match(b.startedAt as string, ISO_REGEXP);
  assert.deepEqual(doc, {
    format: "niceeval.compare",
    schemaVersion: 1,
    a: { runId: before, experimentId: "before", startedAt: a.startedAt },
    b: { runId: after, experimentId: "after", startedAt: b.startedAt },
    counts: {
      fixed: 1,
      regressed: 1,
      "still-failing": 1,
      "still-passing": 2,
      new: 1,
      gone: 1,
    },
    evals: EVALS,
    recordRoot: join(p.dir, ".niceeval", "record"),
    problems: [],
  });
});

Deno.test("niceeval show --compare --fail-on-regression: a regressed eval exits 1", async () => {
  const { p } = await twoRuns();
  await using _ = p;
  const r = await niceeval(p, ["show", "--compare", "before", "after", "--fail-on-regression"]);
  assert.equal(r.code, 1, r.stderr);
  assert.deepEqual(r.stdout.split("\n").slice(3, -1), EVAL_LINES);
  const json = await niceeval(p, [
    "show",
    "--compare",
    "before",
    "after",
    "--json",
    "--fail-on-regression",
  ]);
  assert.equal(json.code, 1, json.stderr);
  assert.equal((JSON.parse(json.stdout).counts as Json).regressed, 1);
});

Deno.test("niceeval show --compare --fail-on-regression: no regressed eval exits 0", async () => {
  const { p } = await twoRuns();
  await using _ = p;
  // From after to before, `mended` regressed and `broke` is fixed; before to before has neither.
  const back = await niceeval(p, ["show", "--compare", "after", "before", "--json"]);
  assert.equal(back.code, 0, back.stderr);
  assert.deepEqual(
    (JSON.parse(back.stdout).evals as Json[]).map((e) => `${e.evalId}:${e.state}`),
    [
      "arrived:gone",
      "broke:fixed",
      "broken:still-failing",
      "graded:still-passing",
      "mended:regressed",
      "steady:still-passing",
      "left:new",
    ],
  );
  const same = await niceeval(p, ["show", "--compare", "before", "before", "--fail-on-regression"]);
  assert.equal(same.code, 0, same.stderr);
  assert.deepEqual(same.stdout.split("\n").slice(2), [
    "fixed 0 · regressed 0 · still failing 2 · still passing 4 · new 0 · gone 0",
    "  still failing  broken  0/2 passed  →  0/2 passed",
    "  still failing  mended  0/2 passed  →  0/2 passed",
    "",
  ]);
});

Deno.test("niceeval show --compare: an experiment ID names its latest published Run, carried slots included exits 0", async () => {
  const { p, before } = await twoRuns();
  await using _ = p;
  const again = await exp(p, "before");
  assert.notEqual(again, before);
  const r = await niceeval(p, ["show", "--compare", before, "before", "--json"]);
  assert.equal(r.code, 0, r.stderr);
  const doc = JSON.parse(r.stdout) as Json;
  assert.deepEqual([(doc.a as Json).runId, (doc.b as Json).runId], [before, again]);
  // Every slot of the second Run is carried from the first, so nothing changed.
  assert.deepEqual(doc.counts, {
    fixed: 0,
    regressed: 0,
    "still-failing": 2,
    "still-passing": 4,
    new: 0,
    gone: 0,
  });
});

Deno.test("niceeval show --compare: a side that names no Run or experiment exits 2", async () => {
  const { p } = await twoRuns();
  await using _ = p;
  for (const side of ["nothing", "0123456789abcdef", "bef"]) {
    const r = await niceeval(p, ["show", "--compare", "before", side]);
    assert.equal(r.code, 2);
    assert.equal(r.stdout, "");
    assert.deepEqual(r.stderr.split("\n"), [
      `error: no published run or experiment "${side}" [run-not-found]`,
      "hint: give a full RunId, a unique RunId prefix of at least 8 characters, or an experiment ID with a published Run",
      "",
    ]);
  }
});

Deno.test("niceeval show --compare: not exactly two sides, a locator, or --run exits 2", async () => {
  await using p = await tempProject("compare_project");
  const hint = "hint: niceeval show --compare <runA|experiment> <runB|experiment>";
  const cases: [string[], string][] = [
    [["before"], "error: --compare takes exactly two Runs or experiments, got 1 [usage]"],
    [
      ["a", "b", "c"],
      "error: --compare takes exactly two Runs or experiments, got 3 [usage]",
    ],
    [
      ["@17QK3M9XT2HC4", "after"],
      "error: --compare compares Runs or experiments, not the Attempt @17QK3M9XT2HC4 [usage]",
    ],
    [
      ["before", "after", "--run", "0123456789"],
      "error: show --compare takes two Runs or experiments as arguments, not --run, --experiment or --runs [usage]",
    ],
  ];
  for (const [args, error] of cases) {
    const r = await niceeval(p, ["show", "--compare", ...args]);
    assert.equal(r.code, 2, args.join(" "));
    assert.equal(r.stdout, "");
    assert.deepEqual(r.stderr.split("\n"), [error, hint, ""]);
  }
});

Deno.test("niceeval show --fail-on-regression without --compare exits 2", async () => {
  await using p = await tempProject("compare_project");
  const r = await niceeval(p, ["show", "--fail-on-regression"]);
  assert.equal(r.code, 2);
  assert.equal(r.stdout, "");
  assert.deepEqual(r.stderr.split("\n"), [
    "error: --fail-on-regression applies to show --compare only [usage]",
    "hint: niceeval show --compare <runA|experiment> <runB|experiment> --fail-on-regression",
    "",
  ]);
});
