/**
 * `niceeval exp` failures before an Invocation exists (cli.md §3, §4, ERR-3): each exits 2 with the
 * two-line error format, an empty stdout, and no Record, coordination or state file written.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type CliResult, REPO, type TempProject, tempProject } from "../_helpers/cli.ts";

const EXAMPLE = join(REPO, "examples", "keyless");

async function entries(dir: string): Promise<string[]> {
  const out: string[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) out.push(entry.name);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return out.sort();
}

/**
 * ERR-3: no receipt, Run or Record file, and nothing in the coordination or state directory, the
 * Record root directory itself and its lock file excepted (ROOT-1). `strict` also forbids those:
 * flag errors happen before the lock is taken (S8).
 */
async function assertNothingWritten(p: TempProject, strict = false): Promise<void> {
  const niceeval = await entries(join(p.dir, ".niceeval"));
  const state = await entries(p.stateDir);
  if (strict) {
    assert.deepEqual(niceeval, [], ".niceeval/ is not created");
    assert.deepEqual(state, [], "the state directory stays empty");
    return;
  }
  assert.deepEqual(niceeval.filter((name) => name !== "record"), [], "only the Record root");
  assert.deepEqual(await entries(join(p.dir, ".niceeval", "record")), [], "the root stays empty");
  assert.deepEqual(state.filter((name) => name !== "roots"), [], "only the root locks");
  const locks = await entries(join(p.stateDir, "roots"));
  assert.ok(locks.every((name) => name.endsWith(".lock")), locks.join(", "));
}

/**
 * ERR-5: exactly `error: …` and `hint: …`, exit 2, stdout empty or, with `--json`, one `error`
 * line with the same code and message (issue 18.8).
 */
function assertTwoLines(
  r: CliResult,
  error: string | RegExp,
  hint: string | RegExp,
  json = false,
): void {
  assert.equal(r.code, 2, r.stderr);
  if (json) {
    const lines = r.stdout.split("\n");
    assert.equal(lines.length, 2, r.stdout);
    const line = JSON.parse(lines[0]!);
    assert.equal(line.type, "error");
    const text = `${line.message} [${line.code}]`;
    if (typeof error === "string") assert.equal(text, error);
    else assert.match(`error: ${text}`, error);
  } else assert.equal(r.stdout, "");
  const lines = r.stderr.split("\n");
  assert.equal(lines.length, 3, r.stderr);
  if (typeof error === "string") assert.equal(lines[0], `error: ${error}`);
  else assert.match(lines[0]!, error);
  if (typeof hint === "string") assert.equal(lines[1], `hint: ${hint}`);
  else assert.match(lines[1]!, hint);
  assert.equal(lines[2], "");
}

Deno.test("niceeval exp: an unknown experiment prints the two lines of cli.md §11 exits 2", async () => {
  await using p = await tempProject(EXAMPLE);
  for (const args of [["exp", "nope"], ["exp", "nope", "--json"]]) {
    const r = await p.run(args);
    assertTwoLines(
      r,
      'no experiment matches "nope" [experiment-not-found]',
      "available experiments: checks/fail, checks/score, local",
      args.includes("--json"),
    );
  }
  await assertNothingWritten(p);
});

Deno.test("niceeval exp: an unknown flag suggests the nearest flag exits 2 (ERR-6)", async () => {
  await using p = await tempProject(EXAMPLE);
  assertTwoLines(
    await p.run(["exp", "local", "--atempts", "2"]),
    "unknown flag --atempts [usage]",
    "did you mean --attempts?",
  );
  assertTwoLines(
    await p.run(["exp", "--frobnicate"]),
    "unknown flag --frobnicate [usage]",
    "see niceeval exp --help",
  );
  await assertNothingWritten(p, true);
});

Deno.test("S8 niceeval exp: --max-concurrency 0 and 2.5 write nothing exits 2", async () => {
  await using p = await tempProject(EXAMPLE);
  for (const value of ["0", "2.5"]) {
    const r = await p.run(["exp", "local", "--max-concurrency", value, "--json"]);
    assertTwoLines(
      r,
      `--max-concurrency requires an integer ≥ 1, got "${value}" [usage]`,
      /^hint: /,
      true,
    );
  }
  assertTwoLines(
    await p.run(["exp", "--attempts", "0"]),
    '--attempts requires an integer ≥ 1, got "0" [usage]',
    "pass a whole number, for example --attempts 1",
  );
  await assertNothingWritten(p, true);
});

Deno.test("niceeval exp: forbidden flag combinations exit 2 (FLAG-4)", async () => {
  await using p = await tempProject(EXAMPLE);
  assertTwoLines(
    await p.run(["exp", "local", "--early-exit", "--no-early-exit"]),
    "--early-exit cannot be combined with --no-early-exit [usage]",
    /^hint: /,
  );
  assertTwoLines(
    await p.run(["exp", "local", "--dry", "--junit", "x.xml"]),
    "--dry cannot be combined with --junit [usage]",
    /^hint: /,
  );
  assertTwoLines(
    await p.run(["exp", "list", "--attempts", "2"]),
    "unknown flag --attempts [usage]",
    "see niceeval exp list --help",
  );
  await assert.rejects(Deno.stat(join(p.dir, "x.xml")), Deno.errors.NotFound);
  await assertNothingWritten(p, true);
});

Deno.test("niceeval exp: rejected flags print the exact lines of cli.md §3.3 exits 2", async () => {
  await using p = await tempProject(EXAMPLE);
  const cases: [string[], string, string][] = [
    [
      ["--agent", "det"],
      "--agent is not an exp option; the agent is part of the experiment file [flag-rejected]",
      "add a file under experiments/ that calls defineExperiment({ agent })",
    ],
    [
      ["--model=gpt-5"],
      "--model is not an exp option; the model is part of the experiment file [flag-rejected]",
      'add a file under experiments/ with defineExperiment({ agent, model: "<name>" })',
    ],
    [
      ["--force"],
      "--force is not an exp option [flag-rejected]",
      "use --rerun all to execute every Attempt again",
    ],
    [
      ["--keep-sandbox=1"],
      "--keep-sandbox is not available yet [flag-rejected]",
      "inspect a failed Attempt with niceeval show @<locator>",
    ],
  ];
  for (const [flags, error, hint] of cases) {
    assertTwoLines(await p.run(["exp", "local", ...flags]), error, hint);
  }
  await assertNothingWritten(p, true);
});

Deno.test("niceeval exp: a directory without niceeval.config.ts fails with config-missing exits 2", async () => {
  await using p = await tempProject(null);
  await p.write("experiments/local.ts", "export default 1;\n");
  const r = await p.run(["exp", "local"]);
  assertTwoLines(
    r,
    /^error: no niceeval\.config\.ts in \/\S+ \[config-missing\]$/,
    "run niceeval init, or change into the project directory",
  );
  assert.ok(r.stderr.includes(p.dir), "the message names the directory it looked in");
  await assertNothingWritten(p, true);
});

Deno.test("niceeval exp: a config that throws while loading fails with config.import-failed exits 2", async () => {
  await using p = await tempProject(EXAMPLE);
  await p.write("niceeval.config.ts", 'throw new Error("config exploded");\n');
  assertTwoLines(
    await p.run(["exp", "local"]),
    "niceeval.config.ts: cannot load: config exploded (at niceeval.config.ts:1:7) [config.import-failed]",
    /^hint: /,
  );
  await assertNothingWritten(p);
});

Deno.test("niceeval exp: an invalid config names the field with config-invalid exits 2", async () => {
  await using p = await tempProject(EXAMPLE);
  await p.write(
    "niceeval.config.ts",
    'import { defineConfig } from "niceeval";\nexport default defineConfig({ maxConcurrency: 0 });\n',
  );
  assertTwoLines(
    await p.run(["exp", "local"]),
    "niceeval.config.ts: maxConcurrency must be a positive integer, got 0 [config-invalid]",
    /^hint: /,
  );
  await p.write("niceeval.config.ts", "export default { maxConcurrency: 4 };\n");
  assertTwoLines(
    await p.run(["exp", "local"]),
    "niceeval.config.ts: the default export must be defineConfig({...}) [config-invalid]",
    /^hint: /,
  );
  await assertNothingWritten(p);
});

Deno.test("S9 niceeval exp: config maxConcurrency with ramp fails with config-invalid exits 2", async () => {
  await using p = await tempProject(EXAMPLE);
  await p.write(
    "niceeval.config.ts",
    'import { defineConfig } from "niceeval";\n' +
      "export default defineConfig({ maxConcurrency: 4, ramp: { from: 2, to: 8 } });\n",
  );
  assertTwoLines(
    await p.run(["exp", "local"]),
    "niceeval.config.ts: ramp cannot be combined with maxConcurrency [config-invalid]",
    /^hint: /,
  );
  await assertNothingWritten(p);
});

Deno.test("niceeval exp: a broken experiment file is reported with its path and field exits 2 (ERR-5)", async () => {
  await using p = await tempProject(EXAMPLE);
  await p.write(
    "experiments/local.ts",
    'import { defineExperiment } from "niceeval";\nimport { detAgent } from "../agents/scripted.ts";\n' +
      'export default defineExperiment({ agent: detAgent("det"), maxConcurrency: 0 });\n',
  );
  assertTwoLines(
    await p.run(["exp", "checks"]),
    "experiments/local.ts: maxConcurrency must be a positive integer, got 0 [discovery.invalid-definition]",
    /^hint: /,
  );
  await assertNothingWritten(p);
});

Deno.test("niceeval exp: a project with several broken files lists them all exits 2 (rule 1.6)", async () => {
  await using p = await tempProject("broken_discovery_project");
  const r = await p.run(["exp", "--json"]);
  assert.equal(r.code, 2);
  // issue 18.8: with --json, one `error` line: the first problem, the others in `details`.
  const json = JSON.parse(r.stdout);
  assert.equal(r.stdout.split("\n").length, 2);
  assert.deepEqual([json.type, json.details.length], ["error", 18]);
  assert.equal(json.hint, "fix the files listed above, then run the command again");
  const lines = r.stderr.trimEnd().split("\n");
  const errors = lines.filter((l) => l.startsWith("error: "));
  assert.equal(errors.length, 19);
  assert.deepEqual(lines.slice(0, -1), errors);
  assert.equal(lines.at(-1), "hint: fix the files listed above, then run the command again");
  for (const file of ["evals/syntax.eval.ts", "evals/throws.eval.ts", "experiments/list.ts"]) {
    assert.ok(errors.some((l) => l.startsWith(`error: ${file}: `)), file);
  }
  assert.ok(errors.includes(
    'error: experiments/list.ts: the experiment ID "list" is reserved for niceeval exp list [experiment-id-reserved]',
  ));
  await assertNothingWritten(p);
});

Deno.test("niceeval exp: an invalid .env line names its number, never the value exits 2", async () => {
  await using p = await tempProject(EXAMPLE);
  await p.write(".env", "# credentials\nOPENAI_API_KEY=ok\nsk-secret-value-123\n");
  const r = await p.run(["exp", "local"]);
  assertTwoLines(r, ".env:3: expected KEY=value [env.invalid-line]", /^hint: /);
  assert.ok(!r.stderr.includes("sk-secret-value-123"));
  await assertNothingWritten(p);
});

Deno.test("niceeval exp: eval prefixes that match nothing fail with eval-not-found exits 2 (FLAG-2)", async () => {
  await using p = await tempProject(EXAMPLE);
  assertTwoLines(
    await p.run(["exp", "local", "deliberate"]),
    'no eval of the selected experiments starts with "deliberate" [eval-not-found]',
    /^hint: /,
  );
  assertTwoLines(
    await p.run(["exp", "--tag", "none"]),
    "the selection contains no evals [nothing-selected]",
    /^hint: /,
  );
  await assertNothingWritten(p);
});
