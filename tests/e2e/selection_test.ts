/**
 * Selection by name on the real CLI (issue 18.2, docs/selection.md): `-t, --grep`, the
 * did-you-mean of an eval prefix that matches nothing, and `--last-failed`. `selection_project`
 * has an `openai` experiment over four evals and an `other` one over `greet`; an eval fails or
 * errors when the test lists its ID in `$SELECTION_FAIL` or `$SELECTION_ERROR` (no part of identity).
 */
import assert from "node:assert/strict";
import { ndjson, type TempProject, tempProject } from "../_helpers/cli.ts";

type Json = Record<string, unknown>;

/** `<experimentId>:<evalId>` of every row of `exp <args> --dry --json`. */
async function dryPairs(p: TempProject, args: readonly string[]): Promise<string[]> {
  const r = await p.run(["exp", ...args, "--dry", "--json"]);
  assert.equal(r.code, 0, r.stderr);
  const doc = JSON.parse(r.stdout) as Json;
  return (doc.rows as Json[]).map((row) => `${row.experimentId}:${row.evalId}`);
}

/** Runs `exp <args> --json` with faults; returns the exit code and the executed pairs. */
async function exp(
  p: TempProject,
  args: readonly string[],
  faults: { fail?: string[]; error?: string[] } = {},
): Promise<{ code: number; executed: string[]; stderr: string }> {
  const r = await p.run(["exp", ...args, "--json"], {
    env: {
      SELECTION_FAIL: (faults.fail ?? []).join(","),
      SELECTION_ERROR: (faults.error ?? []).join(","),
    },
  });
  const executed = ndjson(r.stdout).filter((e) => e.type === "attempt_start")
    .map((e) => `${e.experimentId}:${e.evalId}`).sort();
  return { code: r.code, executed, stderr: r.stderr };
}

/** Asserts that no Run was written (the Record root itself may exist: the lock creates it). */
async function assertNoRecord(p: TempProject): Promise<void> {
  assert.deepEqual(await runsOf(p), []);
}

Deno.test("issue 18.2: an eval prefix that matches nothing suggests the eval and -t, exits 2", async () => {
  await using p = await tempProject("selection_project");
  const r = await p.run(["exp", "openai", "capital"]);
  assert.equal(r.code, 2);
  assert.equal(r.stdout, "");
  assert.equal(
    r.stderr,
    'error: no eval of the selected experiments starts with "capital" [eval-not-found]\n' +
      'hint: did you mean "geo/capital"? eval IDs match by prefix; use -t capital to match by name\n',
  );
  const typo = await p.run(["exp", "openai", "geo/captial"]);
  assert.equal(typo.code, 2);
  assert.equal(
    typo.stderr,
    'error: no eval of the selected experiments starts with "geo/captial" [eval-not-found]\n' +
      'hint: did you mean "geo/capital"? eval IDs match by prefix\n',
  );
  const nothing = await p.run(["exp", "openai", "zebra"]);
  assert.equal(
    nothing.stderr,
    'error: no eval of the selected experiments starts with "zebra" [eval-not-found]\n' +
      "hint: eval IDs match by prefix; run niceeval exp list --json to see each experiment's evals\n",
  );
  await assertNoRecord(p);
});

Deno.test("issue 18.2: -t and --grep select by eval ID or description, case-insensitive, OR-ed", async () => {
  await using p = await tempProject("selection_project");
  assert.deepEqual(await dryPairs(p, ["openai", "-t", "capital"]), ["openai:geo/capital"]);
  // The description, in any case.
  assert.deepEqual(await dryPairs(p, ["openai", "--grep", "LONGEST"]), ["openai:geo/rivers"]);
  assert.deepEqual(await dryPairs(p, ["openai", "-t=river"]), ["openai:geo/rivers"]);
  // A regular expression; repeated flags are OR-ed.
  assert.deepEqual(await dryPairs(p, ["openai", "-t", "2\\+2", "-t", "^greet/"]), [
    "openai:greet/hello",
    "openai:math/add",
  ]);
  // Every experiment without a selector; AND with prefixes and tags.
  assert.deepEqual(await dryPairs(p, ["-t", "hello"]), ["openai:greet/hello", "other:greet/hello"]);
  assert.deepEqual(await dryPairs(p, ["openai", "geo", "-t", "what"]), ["openai:geo/capital"]);
  assert.deepEqual(await dryPairs(p, ["openai", "--tag", "smoke", "-t", "round"]), [
    "openai:greet/hello",
  ]);
  // `-t` may come before the selector: its value is no positional (`exp -t list` is no `exp list`).
  assert.deepEqual(await dryPairs(p, ["-t", "capital", "openai"]), ["openai:geo/capital"]);
  await assertNoRecord(p);
});

Deno.test("issue 18.2: --dry prints the selected evals", async () => {
  await using p = await tempProject("selection_project");
  const r = await p.run(["exp", "openai", "-t", "capital|river", "--dry"]);
  assert.equal(r.code, 0, r.stderr);
  const rows = r.stdout.split("\n").filter((line) => line.startsWith("openai "));
  assert.deepEqual(rows.map((line) => line.split(/ +/)[1]), ["geo/capital", "geo/rivers"]);
});

Deno.test("issue 18.2: a --grep that matches nothing or is no regular expression exits 2", async () => {
  await using p = await tempProject("selection_project");
  const none = await p.run(["exp", "-t", "capitol"]);
  assert.equal(none.code, 2);
  assert.equal(
    none.stderr,
    'error: no eval of the selected experiments matches --grep "capitol" [eval-not-found]\n' +
      "hint: -t/--grep searches eval IDs and descriptions, ignoring case; run niceeval list to see them\n",
  );
  const bad = await p.run(["exp", "--grep", "what(", "--dry"]);
  assert.equal(bad.code, 2);
  assert.equal(bad.stdout, "");
  assert.equal(
    bad.stderr,
    'error: --grep requires a regular expression, got "what(" (unterminated group) [usage]\n' +
      "hint: escape special characters with a backslash, for example -t '2\\+2' or -t 'what\\?'\n",
  );
  const empty = await p.run(["exp", "-t", ""]);
  assert.equal(
    empty.stderr,
    "error: --grep requires a non-empty pattern [usage]\n" +
      "hint: pass a word of the eval ID or description, for example -t capital\n",
  );
  const missing = await p.run(["exp", "openai", "-t"]);
  assert.equal(
    missing.stderr,
    "error: -t requires a value <regex|text> [usage]\nhint: see niceeval exp --help\n",
  );
  // Declared on `exp` only: elsewhere -t stays an unknown flag.
  const list = await p.run(["list", "-t", "capital"]);
  assert.equal(list.code, 2);
  assert.match(list.stderr, /^error: unknown flag -t \[usage\]\n/);
  await assertNoRecord(p);
});

Deno.test("issue 18.2: --last-failed reruns the evals whose latest result failed or errored", async () => {
  await using p = await tempProject("selection_project");
  // No results yet: nothing failed, nothing runs, exit 0.
  const before = await p.run(["exp", "--last-failed"]);
  assert.equal(before.code, 0, before.stderr);
  assert.equal(
    before.stdout,
    "--last-failed: no selected eval failed or errored in its latest result; nothing to run\n",
  );
  await assertNoRecord(p);

  const first = await exp(p, [], { fail: ["geo/capital"], error: ["math/add"] });
  assert.equal(first.code, 1, first.stderr);
  assert.equal(first.executed.length, 5);

  assert.deepEqual(await dryPairs(p, ["--last-failed"]), ["openai:geo/capital", "openai:math/add"]);
  // AND with prefixes, -t and the experiment selector.
  assert.deepEqual(await dryPairs(p, ["--last-failed", "-t", "capital"]), ["openai:geo/capital"]);
  assert.deepEqual(await dryPairs(p, ["openai", "math", "--last-failed"]), ["openai:math/add"]);
  const otherOnly = await p.run(["exp", "other", "--last-failed", "--dry"]);
  assert.equal(otherOnly.code, 0, otherOnly.stderr);
  assert.equal(
    otherOnly.stdout,
    "--last-failed: no selected eval failed or errored in its latest result; nothing to run\n",
  );

  // An eval edited since it failed (its result no longer current) still counts as last failed.
  const capital = await p.read("evals/geo/capital.eval.ts");
  await p.write("evals/geo/capital.eval.ts", `${capital}// edited\n`);
  assert.deepEqual(await dryPairs(p, ["--last-failed"]), ["openai:geo/capital", "openai:math/add"]);

  // Fixed: only the two failed evals run again (the failed one is not reused), and pass.
  const second = await exp(p, ["--last-failed"]);
  assert.equal(second.code, 0, second.stderr);
  assert.deepEqual(second.executed, ["openai:geo/capital", "openai:math/add"]);

  const after = await p.run(["exp", "--last-failed", "--json"]);
  assert.equal(after.code, 0, after.stderr);
  assert.equal(after.stdout, "");
  assert.equal(
    after.stderr,
    "--last-failed: no selected eval failed or errored in its latest result; nothing to run\n",
  );
});

Deno.test("issue 18.2: exp --help lists -t, --grep and --last-failed", async () => {
  await using p = await tempProject(null);
  const r = await p.run(["exp", "--help"]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    /^ {2}-t, --grep <regex\|text> +keep only evals whose ID or description contains/m,
  );
  assert.match(r.stdout, /^ {2}--last-failed +keep only evals whose latest result failed/m);
});

async function runsOf(p: TempProject): Promise<string[]> {
  try {
    const names: string[] = [];
    for await (const entry of Deno.readDir(`${p.dir}/.niceeval/record/runs`)) {
      names.push(entry.name);
    }
    return names;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
}
