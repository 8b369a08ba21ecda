/** Help, version and command routing on the real CLI (cli.md CLI-4, CLI-5, CMD-1, ERR-5). */
import assert from "node:assert/strict";
import { tempProject } from "../_helpers/cli.ts";

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
