/** The deno.json task table (toolchain.md §2) and the sanitizer flags (§5.3). */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { REPO_ROOT } from "./_tree.ts";

/** toolchain.md §2, task table. `compile` and `npm` are checked once they exist. */
const TASKS: Record<string, string> = {
  ok: "deno fmt --check && deno task lint && deno task check && deno task test",
  test: "deno test -A --frozen --parallel --sanitize-ops --sanitize-resources",
  check: "deno check --frozen --doc",
  lint: "deno lint && deno run -A --frozen scripts/check_layout.ts",
  fmt: "deno fmt",
  demo: "deno run -A --frozen scripts/demo.ts",
  bench: "deno bench -A --frozen",
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

Deno.test("the test task runs with both sanitizers and a frozen lockfile", async () => {
  const words = ((await tasks()).test ?? "").split(/\s+/);
  for (const flag of ["--sanitize-ops", "--sanitize-resources", "--frozen"]) {
    assert.ok(words.includes(flag), `the test task lacks ${flag}`);
  }
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
      const resolves = /^deno (test|check|run|bench|compile|cache|info)\b/.test(step);
      if (resolves) assert.match(step, /--frozen\b/, `task "${name}": ${step}`);
    }
  }
});
