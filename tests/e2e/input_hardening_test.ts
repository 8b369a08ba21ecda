/**
 * Hardening against bad input (issue 10): `--junit` never writes through special files, `--record`
 * must name a directory, an unusable state directory is a usage error, and numbers have upper
 * bounds (docs/limits.md). Runs that execute evals spawn the real CLI; failures that stop before
 * anything runs go through `main` in-process. Special files are named pipes in a temporary
 * directory, never real device nodes.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type CliResult, REPO, tempProject } from "../_helpers/cli.ts";
import { makeFifo } from "../_helpers/fuzz.ts";
import { KEYLESS, localProject } from "../cli/_project.ts";

const EXAMPLE = join(REPO, "examples", "keyless");

/** ERR-5: exit 2, stdout empty, exactly one `error:` line and one `hint:` line. */
function assertUsage(r: CliResult, error: RegExp, hint?: RegExp): void {
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stdout, "");
  const lines = r.stderr.split("\n");
  assert.equal(lines.length, 3, r.stderr);
  assert.match(lines[0]!, error);
  assert.match(lines[1]!, hint ?? /^hint: /);
  assert.equal(lines[2], "");
}

async function names(dir: string): Promise<string[]> {
  try {
    return (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name).sort();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
}

Deno.test("niceeval exp: --junit naming a named pipe is refused before anything runs, and the pipe stays exits 2", async () => {
  await using p = await tempProject(EXAMPLE);
  const fifo = join(p.dir, "report.fifo");
  await makeFifo(fifo);
  assertUsage(
    await p.run(["exp", "local", "--junit", fifo]),
    /^error: --junit ".*report\.fifo" cannot be written: it is a special file \[usage\]$/,
  );
  assert.ok((await Deno.lstat(fifo)).isFifo, "the pipe was not replaced");
  assert.deepEqual(await names(join(p.dir, ".niceeval", "record", "runs")), [], "no Run");
});

Deno.test("niceeval exp: --junit naming a directory is refused before any Run exits 2", async () => {
  await using p = await tempProject(EXAMPLE);
  await Deno.mkdir(join(p.dir, "reports"));
  assertUsage(
    await p.run(["exp", "local", "--junit", "reports"]),
    /^error: --junit "reports" cannot be written: it is a directory \[usage\]$/,
  );
  assert.deepEqual(await names(join(p.dir, ".niceeval", "record", "runs")), [], "no Run");
});

Deno.test("niceeval exp: --junit below a regular file is refused before any Run exits 2", async () => {
  await using p = await tempProject(EXAMPLE);
  await p.write("notes.txt", "keep\n");
  assertUsage(
    await p.run(["exp", "local", "--junit", "notes.txt/junit.xml"]),
    /^error: --junit "notes\.txt\/junit\.xml" cannot be written: a parent is not a directory \[usage\]$/,
  );
  assert.equal(await p.read("notes.txt"), "keep\n");
});

Deno.test("niceeval exp: --junit in a directory that does not exist is refused before any Run exits 2", async () => {
  await using p = await tempProject(EXAMPLE);
  assertUsage(
    await p.run(["exp", "local", "--junit", "reprots/junit.xml"]),
    /^error: --junit "reprots\/junit\.xml" cannot be written: its directory does not exist \[usage\]$/,
  );
  assert.equal((await names(p.dir)).includes("reprots"), false, "not created");
  assert.deepEqual(await names(join(p.dir, ".niceeval", "record", "runs")), [], "no Run");
});

Deno.test("niceeval exp: a --junit path that became a named pipe during the run is not replaced exits 1", async () => {
  await using p = await tempProject(EXAMPLE);
  const target = join(p.dir, "out", "junit.xml");
  // The eval itself puts the pipe where the report goes, after the flags were checked.
  await p.write(
    "evals/pipe.eval.ts",
    `import { defineEval } from "niceeval";
import { includes } from "niceeval/expect";

export default defineEval({
  async test(t) {
    const made = await new Deno.Command("mkfifo", { args: [${JSON.stringify(target)}] }).output();
    if (!made.success) throw new Error("mkfifo failed");
    await t.send("hello there");
    t.check(t.reply, includes("Hello"));
  },
});
`,
  );
  await p.write(
    "experiments/pipe.ts",
    `import { defineExperiment } from "niceeval";
import { detAgent } from "../agents/scripted.ts";

export default defineExperiment({ agent: detAgent("det"), evals: ["pipe"] });
`,
  );
  await Deno.mkdir(join(p.dir, "out"));
  const r = await p.run(["exp", "pipe", "--junit", "out/junit.xml"], { env: { CI: "1" } });
  assert.equal(r.code, 1, r.stdout + r.stderr);
  const lines = r.stdout.split("\n").filter((l) => l.includes("JUnit report not written"));
  assert.equal(lines.length, 1, r.stdout);
  assert.match(lines[0]!, /^✗ JUnit report not written: out\/junit\.xml: it is a special file$/);
  assert.ok((await Deno.lstat(target)).isFifo, "the pipe was not replaced");
  assert.deepEqual(await names(join(p.dir, "out")), ["junit.xml"], "no temporary file is left");
  assert.equal((await names(join(p.dir, ".niceeval", "record", "runs"))).length, 1, "Run kept");
});

Deno.test("niceeval exp, show, clean: --record naming a regular file exits 2", async () => {
  await using p = await localProject(KEYLESS);
  await p.write("record.txt", "keep\n");
  for (
    const args of [
      ["exp", "local"],
      ["exp", "local", "--dry"],
      ["show"],
      ["clean"],
    ]
  ) {
    assertUsage(
      await p.run([...args, "--record", "record.txt"]),
      /^error: --record "record\.txt" must be a directory, got a file \[usage\]$/,
      /^hint: pass a directory path, for example --record \.niceeval\/record-2$/,
    );
  }
  assert.equal(await Deno.readTextFile(join(p.dir, "record.txt")), "keep\n");
  assert.deepEqual(await names(join(p.dir, ".niceeval")), [], "no Record, no coordination");
});

Deno.test("niceeval show, clean: --record naming a named pipe, a path below a file or a 5,000-character path exits 2", async () => {
  await using p = await localProject(KEYLESS);
  await makeFifo(join(p.dir, "pipe"));
  await p.write("file", "");
  const long = "abcd/".repeat(1000);
  for (const command of ["show", "clean", "exp"]) {
    assertUsage(
      await p.run([command, "--record", "pipe"]),
      /^error: --record "pipe" must be a directory, got a special file \[usage\]$/,
    );
    assertUsage(
      await p.run([command, "--record", "file/record"]),
      /^error: --record "file\/record" cannot be a Record root: a parent is not a directory \[usage\]$/,
    );
    assertUsage(
      await p.run([command, "--record", long]),
      /^error: --record "(abcd\/)+…" cannot be a Record root: File name too long \[usage\]$/,
    );
  }
  assert.ok((await Deno.lstat(join(p.dir, "pipe"))).isFifo);
});

Deno.test("niceeval exp, clean: a state directory below a regular file names the directory and NICEEVAL_STATE_DIR exits 2", async () => {
  await using p = await localProject(KEYLESS);
  await p.write("file", "");
  const stateDir = join(p.dir, "file", "state");
  for (const args of [["exp", "local"], ["clean"]]) {
    if (args[0] === "clean") {
      await Deno.mkdir(join(p.dir, ".niceeval", "record"), { recursive: true });
    }
    assertUsage(
      await p.run(args, { NICEEVAL_STATE_DIR: stateDir }),
      new RegExp(
        `^error: Cannot write the state directory "${stateDir}": Not a directory \\[state-dir-unwritable\\]$`,
      ),
      /^hint: make it writable, or set NICEEVAL_STATE_DIR to a writable directory$/,
    );
  }
});

Deno.test("niceeval exp --dry: numbers above their limits and with stray whitespace exit 2", async () => {
  await using p = await localProject(KEYLESS);
  const cases: [string[], RegExp][] = [
    [["--attempts", "1001"], /--attempts requires an integer ≤ 1000, got "1001"/],
    [["--attempts", " 1"], /--attempts requires an integer ≥ 1, got " 1"/],
    [["--max-concurrency", "100000000"], /--max-concurrency requires an integer ≤ 1000/],
    [["--timeout", "2147483648"], /--timeout requires a duration ≤ 2147483647ms, got "2147483648"/],
    [["--budget", "1e9"], /--budget requires a decimal ≥ 0, got "1e9"/],
  ];
  for (const [flags, message] of cases) {
    assertUsage(await p.run(["exp", "local", "--dry", ...flags]), message);
  }
  const ok = await p.run([
    "exp",
    "local",
    "--dry",
    "--attempts",
    "1000",
    "--timeout",
    "2147483647",
  ]);
  assert.equal(ok.code, 0, ok.stderr);
});

Deno.test("niceeval exp --dry: config maxConcurrency 1e20 is a config error exits 2", async () => {
  await using p = await localProject(KEYLESS);
  await p.write(
    "niceeval.config.ts",
    'import { defineConfig } from "niceeval";\nexport default defineConfig({ maxConcurrency: 1e20 });\n',
  );
  assertUsage(
    await p.run(["exp", "local", "--dry"]),
    /maxConcurrency must be an integer ≤ 1000, got 100000000000000000000 \[config-invalid\]$/,
  );
});
