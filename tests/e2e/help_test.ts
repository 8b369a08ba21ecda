/** Help, version and command routing on the real CLI (cli.md CLI-4, CLI-5, CMD-1, ERR-5). */
import assert from "node:assert/strict";
import { tempProject } from "../_helpers/cli.ts";
import { COMMANDS, helpText } from "../../src/cli/help.ts";

const VERSION = JSON.parse(
  await Deno.readTextFile(new URL("../../deno.json", import.meta.url)),
).version as string;

Deno.test("niceeval --version: prints the bare version exits 0 (CLI-5)", async () => {
  await using p = await tempProject(null);
  for (const flag of ["--version", "-v"]) {
    const r = await p.run([flag]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `${VERSION}\n`);
    assert.equal(r.stderr, "");
  }
});

Deno.test("niceeval: no command prints the root help on stdout exits 0 (CLI-4)", async () => {
  await using p = await tempProject(null);
  const r = await p.run([]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
  assert.match(r.stdout, /^Usage: niceeval <command>/);
  for (const command of ["init", "list", "exp", "exp list"]) {
    assert.match(r.stdout, new RegExp(`^  ${command}  +\\S`, "m"), command);
  }
});

Deno.test("niceeval exp --help: prints the exp help ignoring other arguments exits 0 (CLI-4)", async () => {
  await using p = await tempProject(null);
  const r = await p.run(["exp", "nope", "--attempts", "0", "--bogus", "--help"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
  assert.match(
    r.stdout,
    /^Usage: niceeval exp \[experiment-selector \[eval-prefix\.\.\.\]\] \[flags\]/,
  );
  for (const flag of ["--attempts <n>", "--max-concurrency <n>", "--rerun[=failed|all]", "--dry"]) {
    assert.ok(r.stdout.includes(flag), flag);
  }
  assert.match(r.stdout, /\nExamples:\n {2}niceeval exp local\n {2}niceeval exp \S.*\n$/);
});

Deno.test("niceeval list -h: prints the list help exits 0 (CLI-4)", async () => {
  await using p = await tempProject(null);
  const r = await p.run(["list", "-h"]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^Usage: niceeval list /);
  const sub = await p.run(["exp", "list", "--help"]);
  assert.match(sub.stdout, /^Usage: niceeval exp list /);
});

Deno.test("niceeval run: an unknown command lists the commands exits 2 (CMD-1)", async () => {
  await using p = await tempProject(null);
  const r = await p.run(["run", "greet"]);
  assert.equal(r.code, 2);
  assert.equal(r.stdout, "");
  const [error, hint, end] = r.stderr.split("\n");
  assert.equal(error, 'error: unknown command "run" [usage]');
  assert.match(hint!, /^hint: commands: init, list, exp\b/);
  assert.equal(end, "");
});

Deno.test("niceeval view: outside a project it fails with config-missing and writes nothing (issue 17)", async () => {
  await using p = await tempProject(null);
  const r = await p.run(["view"]);
  assert.equal(r.code, 2);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /\[config-missing\]\nhint: run niceeval init/);
  await assert.rejects(Deno.stat(`${p.dir}/.niceeval`), Deno.errors.NotFound);
});

/** Glossary terms that stay in docs and JSON (issue 18.6, docs/words.md). */
const JARGON_REGEXP =
  /global cap|\bG\b|carry tier|\bcarr(y|ied)\b|ordinal|\bslots?\b|rerun-tier|published|Record root|compensation|scope|\blease\b|\bSeal\b|salvag|undispatched|cache/i;

Deno.test("issue 18.6: no help screen uses glossary terms (global cap, carry tier, ordinal, slot …)", () => {
  for (const name of [undefined, ...Object.keys(COMMANDS)]) {
    const hits = helpText(name).split("\n").filter((line) => JARGON_REGEXP.test(line));
    assert.deepEqual(hits, [], `niceeval ${name ?? ""} --help`);
  }
});

Deno.test("issue 18.6: niceeval exp --help says concurrency limit, reuse earlier results and rerun failed exits 0", async () => {
  await using p = await tempProject(null);
  const r = await p.run(["exp", "--help"]);
  assert.equal(r.code, 0, r.stderr);
  const flat = r.stdout.replace(/\s+/g, " ");
  for (
    const text of [
      "Run the evals of the selected experiments, reusing earlier results;",
      "--attempts <n> how many times each eval runs in each experiment;",
      "--max-concurrency <n> concurrency limit: most Attempts running at once, over all experiments;",
      "--rerun[=failed|all] run again instead of reusing earlier results: bare or =failed reruns failed Attempts, =all reruns everything (default: reuse earlier passed and failed results)",
      "--dry show what would run and which earlier results are reused; run nothing",
    ]
  ) {
    assert.ok(flat.includes(text), `${text}\n---\n${flat}`);
  }
});
