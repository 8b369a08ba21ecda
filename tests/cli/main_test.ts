import assert from "node:assert/strict";
import { join } from "node:path";
import { VERSION } from "../../src/_shared/version.ts";
import { COMMANDS } from "../../src/cli/help.ts";
import { main } from "../../src/cli/main.ts";
import { createCapturedSink, createFakeIo, type FakeIo } from "../_fakes/io.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

async function run(args: string[], io: FakeIo = createFakeIo()) {
  const code = await main(args, io);
  return {
    code,
    stdout: io.stdout.text(),
    stderr: io.stderr.text(),
    json: args.includes("--json"),
  };
}

/**
 * Asserts the two-line usage error of ERR-5 with exit 2 and an empty stdout, or with `--json` one
 * `error` line on stdout (issue 18.8).
 */
function assertUsageError(
  result: { code: number; stdout: string; stderr: string; json?: boolean },
  error: string,
  hint: string | RegExp,
): void {
  assert.equal(result.code, 2);
  if (result.json) {
    assert.ok(result.stdout.endsWith("}\n") && result.stdout.split("\n").length === 2);
    const line = JSON.parse(result.stdout);
    assert.equal(line.type, "error");
    assert.equal(`${line.message} [${line.code}]`, error);
    if (typeof hint === "string") assert.equal(line.hint, hint);
    else assert.match(line.hint, hint);
  } else assert.equal(result.stdout, "");
  const lines = result.stderr.split("\n");
  assert.equal(lines.length, 3, result.stderr);
  assert.equal(lines[0], `error: ${error}`);
  if (typeof hint === "string") assert.equal(lines[1], `hint: ${hint}`);
  else assert.match(lines[1]!, hint);
  assert.equal(lines[2], "");
}

function withDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  return withTempDir(fn, "niceeval-main-");
}

Deno.test("main() prints the bare version on stdout for --version and -v (CLI-5)", async () => {
  for (const flag of ["--version", "-v"]) {
    const r = await run([flag]);
    assert.equal(r.code, 0);
    assert.equal(r.stdout, `${VERSION}\n`);
    assert.equal(r.stderr, "");
  }
});

Deno.test("main() prints the root help on stdout without a command (CLI-4)", async () => {
  for (const args of [[], ["--help"], ["-h"]]) {
    const r = await run(args);
    assert.equal(r.code, 0, args.join(" "));
    assert.equal(r.stderr, "");
    assert.match(r.stdout, /^Usage: niceeval <command>/);
    assert.match(r.stdout, /-v, --version/);
    for (const command of ["init", "list", "exp", "exp list"]) {
      assert.match(r.stdout, new RegExp(`^  ${command} +\\S`, "m"), command);
    }
    assert.match(r.stdout, /\nExamples:\n {2}niceeval \S.*\n {2}niceeval \S.*\n$/);
  }
});

Deno.test("main() prints each command's help on stdout, ignoring every other argument (CLI-4)", async () => {
  for (const [name, help] of Object.entries(COMMANDS)) {
    for (const flag of ["--help", "-h"]) {
      const args = [...name.split(" "), "--bogus", "--attempts", "0", "stray", flag, "--json"];
      const r = await run(args);
      assert.equal(r.code, 0, args.join(" "));
      assert.equal(r.stderr, "");
      assert.match(r.stdout, new RegExp(`^Usage: niceeval ${name} `));
      assert.ok(r.stdout.replace(/\s+/g, " ").includes(help.summary), name);
      for (const spec of help.flags) assert.ok(r.stdout.includes(`--${spec.name}`), spec.name);
      assert.ok(r.stdout.endsWith(`\nExamples:\n  ${help.examples[0]}\n  ${help.examples[1]}\n`));
    }
  }
});

Deno.test("main() shows the default of every exp flag with a value in its help (CLI-4)", async () => {
  const r = await run(["exp", "--help"]);
  const text = r.stdout.replace(/\s+/g, " ");
  for (const spec of COMMANDS.exp!.flags) {
    if (spec.value === undefined && spec.optionalValues === undefined) continue;
    assert.ok(spec.description.includes("default"), spec.name);
    assert.ok(text.includes(spec.description.replace(/\s+/g, " ")), spec.name);
  }
});

Deno.test("main() does not read --help after -- as a help request", async () => {
  const r = await run(["list", "--", "--help"]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /\[config-missing\]/);
});

Deno.test("main() answers an unknown command with the list of commands (CMD-1)", async () => {
  for (
    const command of ["run", "greet/hello", "toString", "constructor", "__proto__", "exp list"]
  ) {
    const r = await run([command]);
    assertUsageError(r, `unknown command "${command}" [usage]`, /^hint: commands: init, list, exp/);
  }
});

Deno.test("main() rejects the reserved commands with command-unavailable (CMD-1)", async () => {
  const nearest: Record<string, string> = {
    accept: "exp",
    migrate: "exp",
    debug: "exp",
    check: "exp --dry",
    session: "exp",
  };
  for (const [command, hint] of Object.entries(nearest)) {
    const r = await run([command, "--json"]);
    assertUsageError(
      r,
      `niceeval ${command} is not available in this release [command-unavailable]`,
      `use niceeval ${hint}`,
    );
  }
});

Deno.test("main() answers an unknown flag before any command with a suggestion (ERR-6)", async () => {
  assertUsageError(
    await run(["--verison"]),
    "unknown flag --verison [usage]",
    "did you mean --version?",
  );
  assertUsageError(await run(["--json"]), "unknown flag --json [usage]", "see niceeval --help");
});

Deno.test("main() validates flags before it looks for the project (CLI-3)", async () => {
  assertUsageError(
    await run(["exp", "--attempts", "0"]),
    '--attempts requires an integer ≥ 1, got "0" [usage]',
    "pass a whole number, for example --attempts 1",
  );
  assertUsageError(
    await run(["list", "--model", "x"]),
    "unknown flag --model [usage]",
    "see niceeval list --help",
  );
});

Deno.test("main() prints the exact lines of cli.md §3.3 for a rejected flag", async () => {
  assertUsageError(
    await run(["exp", "local", "--model=gpt-5"]),
    "--model is not an exp option; the model is part of the experiment file [flag-rejected]",
    'add a file under experiments/ with defineExperiment({ agent, model: "<name>" })',
  );
});

Deno.test("main() fails with config-missing outside a project (CLI-6)", async () => {
  for (const args of [["list"], ["exp", "list"], ["exp"], ["exp", "local", "--dry"]]) {
    const r = await run(args);
    assertUsageError(
      r,
      "no niceeval.config.ts in /nonexistent/niceeval-project [config-missing]",
      "run niceeval init, or change into the project directory",
    );
  }
});

Deno.test("main() reports config-missing before an invalid .env (CLI-6, CLI-7)", async () => {
  await withDir(async (dir) => {
    await Deno.writeTextFile(join(dir, ".env"), "not a line\n");
    const r = await run(["list"], createFakeIo({ cwd: dir }));
    assert.equal(r.code, 2);
    assert.match(r.stderr, /\[config-missing\]/);
  });
});

Deno.test("main() validates flags before it reads .env (CLI-3)", async () => {
  await withDir(async (dir) => {
    await Deno.writeTextFile(join(dir, ".env"), "not a line\n");
    await Deno.writeTextFile(join(dir, "niceeval.config.ts"), "export default 1;\n");
    const r = await run(["exp", "--max-concurrency", "2.5"], createFakeIo({ cwd: dir }));
    assertUsageError(
      r,
      '--max-concurrency requires an integer ≥ 1, got "2.5" [usage]',
      /^hint: /,
    );
  });
});

Deno.test("main() reads .env into variables that are not set yet, before the config (CLI-7)", async () => {
  await withDir(async (dir) => {
    await Deno.writeTextFile(join(dir, ".env"), "A=1\nB=2\nEMPTY=3\n");
    await Deno.writeTextFile(join(dir, "niceeval.config.ts"), "export default 1;\n");
    const io = createFakeIo({ cwd: dir, env: { B: "set", EMPTY: "" } });
    const r = await run(["list"], io);
    assert.match(r.stderr, /\[config-invalid\]/);
    assert.deepEqual([...io.setVariables], [["A", "1"]]);
  });
});

Deno.test("main() treats list as the exp subcommand wherever flags put it (CMD-2)", async () => {
  for (const args of [["exp", "list"], ["exp", "--json", "list"], ["exp", "--tag", "x", "list"]]) {
    const r = await run([...args, "--help"]);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^Usage: niceeval exp list /, args.join(" "));
  }
  assertUsageError(
    await run(["exp", "--json", "list", "--attempts", "2"]),
    "unknown flag --attempts [usage]",
    "see niceeval exp list --help",
  );
});

Deno.test("main() rejects a second positional of exp list and any positional of init", async () => {
  assertUsageError(
    await run(["exp", "list", "a", "b"]),
    'unexpected argument "b" [usage]',
    "see niceeval exp list --help",
  );
  assertUsageError(
    await run(["init", "here"]),
    'unexpected argument "here" [usage]',
    "see niceeval init --help",
  );
});

Deno.test("main() rejects an empty --tag on list and exp list", async () => {
  for (const args of [["list", "--tag="], ["exp", "list", "--tag", ""]]) {
    assertUsageError(
      await run(args),
      "--tag requires a non-empty tag [usage]",
      "pass a tag, for example --tag smoke",
    );
  }
});

Deno.test("main() turns any other error into exit 3 with the stack and the bug hint (ERR-9)", async () => {
  const io = createFakeIo();
  const broken = {
    ...io,
    stdout: {
      ...createCapturedSink(),
      write: () => {
        throw new Error("stdout is gone");
      },
    },
  };
  const code = await main(["--version"], broken);
  assert.equal(code, 3);
  const lines = io.stderr.text().split("\n");
  assert.equal(lines[0], "internal error: stdout is gone");
  assert.ok(lines.some((line) => /^\s+at /.test(line)), "a stack frame is printed");
  assert.equal(
    lines.at(-2),
    `hint: this is a niceeval bug (version ${VERSION}); please report it with the output above`,
  );
  assert.equal(lines.at(-1), "");
});
