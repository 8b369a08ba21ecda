/**
 * Issue 18.6, 18.9 and 18.11 on the real CLI with the keyless example: PLAN, `--dry` and the end
 * panels in the user's words, true counts, NEXT lines that work as printed.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO, tempProject } from "../_helpers/cli.ts";

const EXAMPLE = join(REPO, "examples", "keyless");
const PLAIN = { env: { CI: "1" } };

Deno.test("issue 18.6: exp --dry of three experiments with their own evals says 6 attempts (6 evals across 3 experiments) exits 0", async () => {
  await using p = await tempProject(EXAMPLE);
  const r = await p.run(["exp", "--dry"], PLAIN);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.split("\n");
  assert.deepEqual(lines.slice(0, 2), [
    "PLAN (dry run)",
    "  6 attempts (6 evals across 3 experiments) · concurrency 4 (from config)",
  ]);
  assert.ok(lines.includes("local         greet/hello              #0 run: new"), r.stdout);
});

Deno.test("issue 18.11: exp --dry keeps the experiment-no-evals notice, in text and in the JSON document (FLAG-3) exits 0", async () => {
  await using p = await tempProject(EXAMPLE);
  const r = await p.run(["exp", "checks", "deliberate-fail", "--dry"], PLAIN);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.stdout.split("\n"), [
    "PLAN (dry run)",
    "  1 attempt (1 eval × 1 experiment) · concurrency 4 (from config)",
    "i experiment checks/score has no selected evals; left out",
    "checks/fail  deliberate-fail/broken  #0 run: new",
    "",
  ]);
  const json = await p.run(["exp", "checks", "deliberate-fail", "--dry", "--json"], PLAIN);
  assert.equal(json.code, 0, json.stderr);
  assert.deepEqual(JSON.parse(json.stdout).notices, [
    {
      code: "experiment-no-evals",
      message: "experiment checks/score has no selected evals; left out",
      experimentId: "checks/score",
    },
  ]);
});

Deno.test("issue 18.11: NEXT after exp --record <root> --attempts 2 carries both flags, and its show line works exits 1", async () => {
  await using p = await tempProject(EXAMPLE);
  const r = await p.run(["exp", "checks/fail", "--record", "my root", "--attempts", "2"], PLAIN);
  assert.equal(r.code, 1, r.stderr);
  const next = r.stdout.slice(r.stdout.indexOf("\nNEXT\n") + 1).trimEnd().split("\n");
  const runId = /--run (\S+)$/.exec(next[1]!)?.[1] ?? "";
  assert.deepEqual(next, [
    "NEXT",
    `  niceeval show --record 'my root' --run ${runId}`,
    "  niceeval exp checks/fail --attempts 2 --record 'my root' --rerun",
  ]);
  // The printed lines run as printed: show finds the Run in that root.
  const show = await p.run(["show", "--record", "my root", "--run", runId], PLAIN);
  assert.equal(show.code, 0, show.stderr);
  assert.match(show.stdout, new RegExp(`^Run ${runId} · checks/fail · `));
  const dry = await p.run(
    ["exp", "checks/fail", "--attempts", "2", "--record", "my root", "--rerun", "--dry"],
    PLAIN,
  );
  assert.equal(dry.code, 0, dry.stderr);
  assert.equal(
    dry.stdout.split("\n")[2],
    "checks/fail  deliberate-fail/broken  #0–1 run: rerun (was failed)",
  );
});

Deno.test("issue 18.9: RESULTS of the example lists one line per experiment and only the failing eval exits 1", async () => {
  await using p = await tempProject(EXAMPLE);
  const r = await p.run(["exp"], PLAIN);
  assert.equal(r.code, 1, r.stderr);
  const lines = r.stdout.split("\n");
  const results = lines.slice(
    lines.indexOf("RESULTS  3 experiments"),
    lines.findIndex((l) => l.startsWith("FAILURES")),
  ).map((l) => l.replace(/ · \d+(\.\d)?s · \d+ new tok/, " · DURATION · TOKENS"));
  assert.deepEqual(results, [
    "RESULTS  3 experiments",
    "  checks/fail   0/1 passed (0%) · 1 failed · DURATION · TOKENS",
    "    deliberate-fail/broken  0/1 passed · 1 failed",
    "  checks/score  score 2 · 1/1 complete · DURATION · TOKENS",
    "  local         4/4 passed (100%) · DURATION · TOKENS",
  ]);
});

Deno.test("issue 18.11: show with a locator without @ fails with malformed-locator and says how to write it (REC-12) exits 2", async () => {
  await using p = await tempProject(EXAMPLE);
  const r = await p.run(["show", "17QK3M9XT2HC4"]);
  assert.equal(r.code, 2);
  assert.equal(r.stdout, "");
  assert.equal(
    r.stderr,
    'error: "17QK3M9XT2HC4" is not an Attempt locator: locators start with @ [malformed-locator]\n' +
      "hint: did you mean @17QK3M9XT2HC4? (e.g. niceeval show @17QK3M9XT2HC4)\n",
  );
});
