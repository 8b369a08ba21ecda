/**
 * Issue 18, items 8 and 11 on the real CLI: `sandbox --help`, `--timeout` with units, errors as an
 * `error` line with `--json`, and `clean` naming the temp files it removed (docs/small_ones.md).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ndjson, tempProject } from "../_helpers/cli.ts";

const SANDBOX_HELP = `Usage: niceeval sandbox <subcommand> [flags]

Find and remove sandboxes that niceeval runs left behind

Options:
  -h, --help  print help

Subcommands:
  list   List sandboxes left by niceeval runs and whether their owner is alive
  prune  Destroy sandboxes whose niceeval process is gone

Examples:
  niceeval sandbox list
  niceeval sandbox list --help
`;

Deno.test("issue 18.8: niceeval sandbox --help prints the sandbox help exits 0", async () => {
  await using p = await tempProject(null);
  for (const args of [["sandbox", "--help"], ["sandbox", "-h"]]) {
    const r = await p.run(args);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, "");
    assert.equal(r.stdout, SANDBOX_HELP);
  }
  const doctor = await p.run(["doctor", "--help"]);
  assert.equal(doctor.code, 0, doctor.stderr);
  assert.match(doctor.stdout, /^Usage: niceeval doctor <subcommand> \[flags\]\n/);
  assert.match(doctor.stdout, /\nSubcommands:\n {2}docker {2}Check the Docker daemon/);
  const ramp = await p.run(["ramp", "--help"]);
  assert.equal(ramp.code, 0, ramp.stderr);
  assert.match(ramp.stdout, /\n {2}hold {4}Stop every ramped run/);
  // A subcommand's own help is unchanged; an unknown subcommand is still an error.
  assert.match(
    (await p.run(["sandbox", "list", "--help"])).stdout,
    /^Usage: niceeval sandbox list /,
  );
  const unknown = await p.run(["sandbox", "bogus", "--help"]);
  assert.equal(unknown.code, 2);
  assert.equal(
    unknown.stderr,
    'error: unknown command "sandbox bogus" [usage]\nhint: subcommands: sandbox list, sandbox prune\n',
  );
});

Deno.test("issue 18.8: niceeval exp --timeout takes ms, s and m exits 0 or 1", async () => {
  await using p = await tempProject(null);
  await p.write(
    "niceeval.config.ts",
    'import { defineConfig } from "niceeval";\nexport default defineConfig({});\n',
  );
  await p.write(
    "experiments/slow.ts",
    `import { defineExperiment } from "niceeval";
import { scriptedAgent } from "niceeval/adapter";
export default defineExperiment({
  agent: scriptedAgent({ name: "slow", script: [], fallback: { text: "done", delayMs: 1500 } }),
});
`,
  );
  await p.write(
    "evals/wait.eval.ts",
    `import { defineEval } from "niceeval";
export default defineEval({ async test(t) { await t.send("go"); } });
`,
  );
  const verdict = async (timeout: string) => {
    const r = await p.run(["exp", "--rerun", "all", "--json", "--timeout", timeout]);
    const end = ndjson(r.stdout).find((e) => e.type === "attempt_end")!;
    return [r.code, end.verdict, end.errorCode];
  };
  // 1s and 1m would be 1 ms if the unit were ignored: the 1.5 s reply would time out.
  assert.deepEqual(await verdict("1m"), [0, "passed", null]);
  assert.deepEqual(await verdict("30s"), [0, "passed", null]);
  assert.deepEqual(await verdict("20ms"), [1, "errored", "timeout"]);
  assert.deepEqual(await verdict("20"), [1, "errored", "timeout"]);
  const bad = await p.run(["exp", "--dry", "--timeout", "5h"]);
  assert.equal(bad.code, 2);
  assert.equal(
    bad.stderr,
    'error: --timeout requires a duration: a whole number with ms, s or m (plain numbers are ms), got "5h" [usage]\n' +
      "hint: pass for example --timeout 30s, --timeout 2m or --timeout 5000\n",
  );
});

Deno.test("issue 18.8: with --json a config error is also an error line on stdout exits 2", async () => {
  await using p = await tempProject(null);
  for (const args of [["exp", "list", "--json"], ["list", "--json"], ["exp", "--json"]]) {
    const r = await p.run(args);
    assert.equal(r.code, 2, args.join(" "));
    const root = await Deno.realPath(p.dir);
    assert.equal(
      r.stderr,
      `error: no niceeval.config.ts in ${root} [config-missing]\n` +
        "hint: run niceeval init, or change into the project directory\n",
    );
    const lines = ndjson(r.stdout);
    assert.equal(lines.length, 1);
    const { at, ...line } = lines[0]!;
    assert.match(at as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.deepEqual(line, {
      type: "error",
      experimentId: null,
      evalId: null,
      ordinal: null,
      locator: null,
      code: "config-missing",
      phase: null,
      message: `no niceeval.config.ts in ${root}`,
      hint: "run niceeval init, or change into the project directory",
      details: [],
    });
  }
  // Without --json stdout stays empty.
  assert.equal((await p.run(["exp", "list"])).stdout, "");
});

Deno.test("issue 18.11: niceeval clean says it removed a leftover temp file exits 0", async () => {
  await using p = await tempProject(null);
  const root = join(await Deno.realPath(p.dir), ".niceeval", "record");
  await Deno.mkdir(root, { recursive: true });
  await Deno.writeTextFile(join(root, ".record.json.tmp-0123abcd"), "{");
  const clean = await p.run(["clean"]);
  assert.equal(clean.code, 0, clean.stderr);
  assert.equal(clean.stdout, `removed 1 leftover temp file(s) from ${root}\n`);
  const again = await p.run(["clean"]);
  assert.equal(again.stdout, `nothing to clean in ${root}\n`);
});
