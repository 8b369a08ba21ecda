/** The deno.json task table (toolchain.md §2) and the sanitizer flags (§5.3). */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { REPO_ROOT } from "./_tree.ts";

/** The e2e suites that exercise loading, run again under the embedded loader (docs/loader.md). */
const EMBEDDED_SUITES = [
  "loader",
  "list",
  "error_location",
  "exp_errors",
  "fuzz_user_files",
  "example",
  "init",
  "console_capture",
].map((name) => `tests/e2e/${name}_test.ts`);

/** toolchain.md §2, task table. `compile` and `npm` are checked once they exist. */
const TASKS: Record<string, string> = {
  ok: "deno fmt --check && deno task lint && deno task check && deno task test",
  test: "deno test -A --frozen --parallel --sanitize-ops --sanitize-resources && " +
    "NICEEVAL_LOADER=embedded deno test -A --frozen --parallel --sanitize-ops --sanitize-resources " +
    EMBEDDED_SUITES.join(" "),
  check: "deno check --frozen --doc",
  lint: "deno lint && deno run -A --frozen scripts/check_layout.ts",
  fmt: "deno fmt",
  demo: "deno run -A --frozen scripts/demo.ts",
  bench: "deno run -A --frozen bench/_run.ts",
};
const LATER_TASKS: Record<string, string> = {
  compile: "deno run -A --frozen compile.ts",
  npm: "deno run -A --frozen scripts/build_npm.ts",
};

async function tasks(): Promise<Record<string, string>> {
  const config = JSON.parse(await readFile(join(REPO_ROOT, "deno.json"), "utf8")) as {
    tasks?: Record<string, string>;
  };
  return config.tasks ?? {};
}

/** A task step, possibly after `NAME=value` environment assignments. */
const STEP_REGEXP = /^(?:[A-Z_]+=\S*\s+)*deno (test|check|run|bench|compile|cache|info)\b/;

Deno.test("the test task runs with both sanitizers and a frozen lockfile", async () => {
  for (const step of ((await tasks()).test ?? "").split("&&")) {
    const words = step.trim().split(/\s+/);
    for (const flag of ["--sanitize-ops", "--sanitize-resources", "--frozen"]) {
      assert.ok(words.includes(flag), `the test task lacks ${flag}: ${step}`);
    }
  }
});

Deno.test("the test task runs the loading e2e suites again under the embedded loader (toolchain.md §5.7)", async () => {
  const steps = ((await tasks()).test ?? "").split("&&").map((s) => s.trim());
  assert.equal(steps.length, 2);
  assert.match(steps[1]!, /^NICEEVAL_LOADER=embedded deno test /);
  const files = steps[1]!.split(/\s+/).filter((word) => word.startsWith("tests/"));
  assert.deepEqual(files, EMBEDDED_SUITES);
  for (const file of files) await readFile(join(REPO_ROOT, file)); // each suite exists
});

Deno.test("deno.json has the task table of toolchain.md §2", async () => {
  const actual = await tasks();
  for (const [name, command] of Object.entries(TASKS)) {
    assert.equal(actual[name], command, `task "${name}"`);
  }
  for (const [name, command] of Object.entries(LATER_TASKS)) {
    if (name in actual) assert.equal(actual[name], command, `task "${name}"`);
  }
});

Deno.test("every task that resolves modules passes --frozen", async () => {
  for (const [name, command] of Object.entries(await tasks())) {
    for (const step of command.split("&&").map((s) => s.trim())) {
      const resolves = STEP_REGEXP.test(step);
      if (resolves) assert.match(step, /--frozen\b/, `task "${name}": ${step}`);
    }
  }
});
