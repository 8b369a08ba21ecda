/** Repository layout (toolchain.md §1.1, §2.9) and check_layout on synthetic trees. */
import assert from "node:assert/strict";
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { checkLayout, type Problem } from "../../scripts/check_layout.ts";
import { findImports } from "../../scripts/_layout/imports.ts";
import { tokenize } from "../../scripts/_layout/tokens.ts";
import { describeRun, REPO_ROOT, runDeno, withTempDir, writeTree } from "./_tree.ts";

const README = `# fixture

## Dependencies

| Bare name | Specifier | Used by | Reason |
|---|---|---|---|
| \`zod\` | \`npm:zod@^4\` | config, discovery | validation |
| \`expect\` | \`npm:expect@^30\` | tests | matchers |
| \`@sinonjs/fake-timers\` | \`npm:@sinonjs/fake-timers@^15\` | tests, \`tests/_fakes/clock.ts\` | fake time |
`;

const DENO_JSON = JSON.stringify({
  imports: {
    "niceeval": "./mod.ts",
    "zod": "npm:zod@^4",
    "expect": "npm:expect@^30",
    "@sinonjs/fake-timers": "npm:@sinonjs/fake-timers@^15",
    "lodash": "npm:lodash@^4",
  },
});

/** A tree that satisfies every rule; tests add or replace files to break one. */
const CLEAN_TREE: Record<string, string> = {
  "deno.json": DENO_JSON,
  "README.md": README,
  "mod.ts": `/**\n * Root.\n * @module\n */\nexport * from "./src/public/root.ts";\n`,
  "src/_shared/mod.ts": `/** Shared. @module */\nexport { clock } from "./clock.ts";\n`,
  "src/_shared/clock.ts": `export const clock = 1;\n`,
  "src/config/mod.ts": `/** Config. @module */\nexport { load } from "./load.ts";\n`,
  "src/config/load.ts": `import { z } from "zod";\nimport { clock } from "../_shared/mod.ts";\n` +
    `import { helper } from "./_helper.ts";\nexport const load = [z, clock, helper];\n`,
  "src/config/_helper.ts": `export const helper = 1;\n`,
  "src/plan/mod.ts": `/** Plan. @module */\nexport { build } from "./build.ts";\n` +
    `export type { Plan } from "./build.ts";\n`,
  "src/plan/build.ts": `import { load } from "../config/mod.ts";\n` +
    `import type { Thing } from "../sandbox/mod.ts";\n` +
    `export type Plan = Thing;\nexport const build = load;\n`,
  "src/sandbox/mod.ts": `/** Sandbox. @module */\nexport type { Thing } from "./thing.ts";\n`,
  "src/sandbox/thing.ts": `export type Thing = number;\n`,
  "src/sandbox/providers/docker/docker.ts": `import { pool } from "../../_pool.ts";\n` +
    `export const docker = pool;\n`,
  "src/sandbox/_pool.ts": `export const pool = 1;\n`,
  "src/cli/mod.ts": `/** CLI. @module */\nexport { main } from "./main.ts";\n`,
  "src/cli/main.ts": `import { build } from "../plan/mod.ts";\n` +
    `import * as root from "../public/root.ts";\nexport const main = [build, root];\n`,
  "src/public/root.ts": `/** Public root. @module */\nexport { build } from "../plan/mod.ts";\n`,
  "tests/config/load_test.ts": `import { expect } from "expect";\n` +
    `import { load } from "../../src/config/load.ts";\nimport api from "niceeval";\n` +
    `Deno.test({\n  name: "x",\n  // sanitizer-exempt: drives dockerode sockets\n` +
    `  sanitizeOps: false,\n  fn() { expect(load).toBeTruthy(); api; },\n});\n`,
  "tests/_fakes/clock.ts":
    `import FakeTimers from "@sinonjs/fake-timers";\nexport { FakeTimers };\n`,
  "tests/_helpers/cli.ts": `export const cli = 1;\n`,
  "tests/toolchain/public_api.txt": "root\n",
  "tests/fixtures/Weird-Project_project/evals/Bad-Name.eval.ts": `import "npm:zod";\n`,
  "examples/keyless/evals/hello.eval.ts": `import { defineEval } from "niceeval";\n`,
  "bench/plan_bench.ts":
    `import { build } from "../src/plan/mod.ts";\nDeno.bench("b", () => {});\n`,
  "scripts/demo.ts": `import { z } from "zod";\nimport _ from "lodash";\n`,
  "npm/entry.ts": `import * as api from "niceeval";\nexport { api };\n`,
};

async function problemsFor(files: Record<string, string | null>): Promise<Problem[]> {
  return await withTempDir(async (dir) => {
    const tree: Record<string, string> = { ...CLEAN_TREE };
    for (const [path, content] of Object.entries(files)) {
      if (content === null) delete tree[path];
      else tree[path] = content;
    }
    await writeTree(dir, tree);
    return (await checkLayout(dir)).problems;
  });
}

function describe(problems: Problem[]): string {
  return problems.map((p) => `${p.path}: ${p.message}`).join("\n") || "(no problems)";
}

/** Asserts that every expected `[path, message fragment]` is reported, and nothing else. */
function assertProblems(problems: Problem[], expected: Array<[string, string]>): void {
  const unmatched = [...problems];
  for (const [path, fragment] of expected) {
    const at = unmatched.findIndex((p) => p.path === path && p.message.includes(fragment));
    assert.ok(at >= 0, `expected "${path}: …${fragment}…" among:\n${describe(problems)}`);
    unmatched.splice(at, 1);
  }
  assert.equal(describe(unmatched), "(no problems)", "unexpected problems");
}

Deno.test(".gitignore lists every untracked path of toolchain.md §1", async () => {
  const lines = (await readFile(join(REPO_ROOT, ".gitignore"), "utf8")).split("\n").map((l) =>
    l.trim()
  );
  for (const path of [".tools/", "node_modules/", "dist/", "npm/dist/", ".niceeval/"]) {
    const bare = path.replace(/\/$/, "");
    assert.ok(
      lines.some((l) => [path, bare, `/${path}`, `/${bare}`].includes(l)),
      `.gitignore does not list ${path}`,
    );
  }
});

Deno.test("check_layout passes on the repository", async () => {
  const result = await runDeno(["run", "-A", "--frozen", "scripts/check_layout.ts"]);
  assert.equal(result.code, 0, describeRun(result));
});

Deno.test("check_layout accepts a tree that follows every rule", async () => {
  assertProblems(await problemsFor({}), []);
});

Deno.test("check_layout rejects file names that break STYLE.md §4", async () => {
  const problems = await problemsFor({
    "src/config/LoadConfig.ts": "export {};\n",
    "src/config/load-config.ts": "export {};\n",
    "src/config/index.ts": "export {};\n",
    "src/config/load.js": "export {};\n",
    "src/config/load_test.ts": "export {};\n",
    "src/config/My-Dir/x.ts": "export {};\n",
    "tests/config/helper.ts": "export {};\n",
    "tests/config/load.test.ts": "export {};\n",
    "bench/plan.ts": "export {};\n",
    "scripts/build-npm.ts": "export {};\n",
  });
  assertProblems(problems, [
    ["src/config/LoadConfig.ts", "not snake_case"],
    ["src/config/load-config.ts", "kebab-case"],
    ["src/config/index.ts", "mod.ts"],
    ["src/config/load.js", ".ts extension"],
    ["src/config/load_test.ts", "tests live under tests/"],
    ["src/config/My-Dir/", "kebab-case"],
    ["tests/config/helper.ts", "<name>_test.ts"],
    ["tests/config/load.test.ts", "not snake_case"],
    ["tests/config/load.test.ts", "<name>_test.ts"],
    ["bench/plan.ts", "<area>_bench.ts"],
    ["scripts/build-npm.ts", "kebab-case"],
  ]);
});

Deno.test("check_layout rejects a value import against the dependency table", async () => {
  const problems = await problemsFor({
    // config may import _shared and loader only; sandbox is not allowed, even through mod.ts.
    "src/config/bad.ts": `import { x } from "../plan/mod.ts";\n` +
      `import {\n  type Plan,\n  build,\n} from "../plan/mod.ts";\n` +
      `import type { Plan as P } from "../plan/mod.ts";\n` +
      `export { build as b } from "../plan/mod.ts";\n` +
      `const lazy = () => import("../plan/mod.ts");\n` +
      `import type { Main } from "../cli/mod.ts";\n`,
  });
  assertProblems(problems, [
    ["src/config/bad.ts", "line 1: value import of src/plan/mod.ts: config may not import plan"],
    ["src/config/bad.ts", "line 2: value import of src/plan/mod.ts: config may not import plan"],
    ["src/config/bad.ts", "line 7: value import of src/plan/mod.ts: config may not import plan"],
    ["src/config/bad.ts", "line 8: value import of src/plan/mod.ts: config may not import plan"],
    ["src/config/bad.ts", "line 9: type import of src/cli/mod.ts: no other domain may import cli"],
    // The allowed type-only import on line 6 still closes config → plan → config.
    ["src/config/bad.ts", "cross-domain import cycle (type-only imports included): config → plan"],
  ]);
});

Deno.test("check_layout rejects imports into another domain's files", async () => {
  const problems = await problemsFor({
    "src/plan/deep.ts": `import { load } from "../config/load.ts";\n` +
      `import type { Thing } from "../sandbox/thing.ts";\n` +
      `import { helper } from "../config/_helper.ts";\n`,
  });
  assertProblems(problems, [
    ["src/plan/deep.ts", "line 1: value import of src/config/load.ts reaches into another domain"],
    ["src/plan/deep.ts", "line 2: type import of src/sandbox/thing.ts reaches into another domain"],
    ["src/plan/deep.ts", "line 3: value import of src/config/_helper.ts reaches into another"],
  ]);
});

Deno.test("check_layout rejects a private file imported from another folder", async () => {
  const problems = await problemsFor({
    "src/sandbox/providers/_common.ts": "export const common = 1;\n",
    "src/sandbox/facade.ts": `import { common } from "./providers/_common.ts";\n` +
      `import { pool } from "./_pool.ts";\nexport const facade = [common, pool];\n`,
  });
  assertProblems(problems, [
    ["src/sandbox/facade.ts", "src/sandbox/providers/_common.ts is private to its folder"],
  ]);
});

Deno.test("check_layout rejects a value-import cycle but not a type-only one", async () => {
  const problems = await problemsFor({
    "src/plan/a.ts": `import { b } from "./b.ts";\nexport const a = b;\n`,
    "src/plan/b.ts": `import { c } from "./c.ts";\nexport const b = c;\n`,
    "src/plan/c.ts": `export { a as c } from "./a.ts";\n`,
    "src/plan/t1.ts": `import type { T2 } from "./t2.ts";\nexport type T1 = T2;\n`,
    "src/plan/t2.ts": `import { type T1 } from "./t1.ts";\nexport type T2 = T1 | 1;\n`,
    "src/plan/lazy1.ts": `export const l = () => import("./lazy2.ts");\n`,
    "src/plan/lazy2.ts": `import { l } from "./lazy1.ts";\nexport const m = l;\n`,
  });
  assertProblems(problems, [
    [
      "src/plan/a.ts",
      "value-import cycle: src/plan/a.ts → src/plan/b.ts → src/plan/c.ts → src/plan/a.ts",
    ],
  ]);
});

Deno.test("check_layout rejects a type-only import cycle across domains", async () => {
  const problems = await problemsFor({
    "src/_shared/events.ts": `import type { Plan } from "../plan/mod.ts";\nexport type E = Plan;\n`,
  });
  assertProblems(problems, [
    [
      "src/_shared/events.ts",
      "cross-domain import cycle (type-only imports included): _shared → plan → config → _shared " +
      "via src/_shared/events.ts → src/plan/mod.ts, src/plan/build.ts → src/config/mod.ts, " +
      "src/config/load.ts → src/_shared/mod.ts",
    ],
  ]);
});

Deno.test("check_layout rejects a type-only cycle between two domains", async () => {
  const problems = await problemsFor({
    "src/sandbox/uses_plan.ts":
      `import type { Plan } from "../plan/mod.ts";\nexport type U = Plan;\n`,
  });
  assertProblems(problems, [
    [
      "src/plan/build.ts",
      "cross-domain import cycle (type-only imports included): plan → sandbox → plan " +
      "via src/plan/build.ts → src/sandbox/mod.ts, src/sandbox/uses_plan.ts → src/plan/mod.ts",
    ],
  ]);
});

Deno.test("check_layout rejects a package imported outside the domains of its README row", async () => {
  const problems = await problemsFor({
    "src/plan/validate.ts": `import { z } from "zod";\nexport const v = z;\n`,
    "src/config/test_only.ts": `import { expect } from "expect";\nexport const e = expect;\n`,
    "src/config/unlisted.ts": `import _ from "lodash";\nexport const l = _;\n`,
    "tests/plan/build_test.ts": `import { z } from "zod/mini";\nz;\n`,
    "bench/config_bench.ts": `import { expect } from "expect";\nexpect;\n`,
  });
  assertProblems(problems, [
    ["src/plan/validate.ts", `package "zod" may be imported only from config, discovery`],
    ["src/config/test_only.ts", `package "expect" may be imported only from tests`],
    ["src/config/unlisted.ts", `package "lodash" has no row in the README dependency table`],
    ["tests/plan/build_test.ts", `package "zod" may be imported only from config, discovery`],
  ]);
});

Deno.test("check_layout rejects src/ imports of tests, scripts, npm, examples and niceeval", async () => {
  const problems = await problemsFor({
    "src/config/reach.ts": `import { cli } from "../../tests/_helpers/cli.ts";\n` +
      `import "../../scripts/demo.ts";\nimport { api } from "../../npm/entry.ts";\n` +
      `import "../../examples/keyless/evals/hello.eval.ts";\nimport * as n from "niceeval";\n`,
  });
  assertProblems(problems, [
    ["src/config/reach.ts", 'line 1: imports "../../tests/_helpers/cli.ts"'],
    ["src/config/reach.ts", 'line 2: imports "../../scripts/demo.ts"'],
    ["src/config/reach.ts", 'line 3: imports "../../npm/entry.ts"'],
    ["src/config/reach.ts", 'line 4: imports "../../examples/keyless/evals/hello.eval.ts"'],
    ["src/config/reach.ts", 'line 5: imports "niceeval": src/ never imports the niceeval* names'],
  ]);
});

Deno.test("check_layout rejects a sanitizer exemption without a reason", async () => {
  const problems = await problemsFor({
    "tests/sandbox/docker_test.ts": `Deno.test({\n  name: "a",\n  sanitizeOps: false,\n` +
      `  // sanitizer-exempt:\n  sanitizeResources: false,\n  fn() {},\n});\n` +
      `Deno.test({ name: "b", sanitizeExit: false, fn() {} });\n` +
      `// sanitizer-exempt: dockerode keeps a socket open\n` +
      `Deno.test({ name: "c", sanitizeResources: false, fn() {} });\n` +
      `const text = "sanitizeOps: false";\n`,
  });
  assertProblems(problems, [
    ["tests/sandbox/docker_test.ts", "line 3: sanitizeOps: false needs"],
    ["tests/sandbox/docker_test.ts", "line 5: sanitizeResources: false needs"],
    ["tests/sandbox/docker_test.ts", "line 8: sanitizeExit: false needs"],
  ]);
});

Deno.test("check_layout rejects a domain without mod.ts and a mod.ts that breaks §1.1", async () => {
  const problems = await problemsFor({
    "src/plan/mod.ts": null,
    "src/config/mod.ts": `/** Config. @module */\nexport * from "./load.ts";\n`,
    "src/sandbox/mod.ts": `// Sandbox.\nexport type { Thing } from "./thing.ts";\n`,
    "src/public/adapter.ts": `export { build } from "../plan/mod.ts";\n`,
    "src/gizmo/mod.ts": `/** Gizmo. @module */\nexport {};\n`,
    "src/stray.ts": "export {};\n",
  });
  assertProblems(problems, [
    ["src/plan/", "domain folder has no mod.ts"],
    ["src/config/mod.ts", `line 2: export * from "./load.ts"`],
    ["src/sandbox/mod.ts", "does not open with a /** … @module */ comment"],
    ["src/public/adapter.ts", "does not open with a /** … @module */ comment"],
    ["src/gizmo/", "unknown domain folder"],
    ["src/stray.ts", "src/ holds only domain folders"],
  ]);
});

Deno.test("check_layout CLI prints one path: message line per problem and exits 1", async () => {
  await withTempDir(async (dir) => {
    await writeTree(dir, {
      ...CLEAN_TREE,
      "src/config/bad-name.ts": "export {};\n",
      "src/config/x.ts": `import { build } from "../plan/mod.ts";\n`,
    });
    const result = await runDeno([
      "run",
      "-A",
      "--frozen",
      "scripts/check_layout.ts",
      "--root",
      dir,
    ]);
    assert.equal(result.code, 1, describeRun(result));
    const lines = result.stdout.trim().split("\n");
    assert.deepEqual(lines.slice(0, -1), [
      "src/config/bad-name.ts: kebab-case file name; use snake_case (STYLE.md §4)",
      "src/config/x.ts: line 1: value import of src/plan/mod.ts: config may not import plan " +
      "(STYLE.md §2 dependency table; use import type for types)",
    ]);
    assert.match(lines.at(-1)!, /^check_layout: 2 problems in \d+ files$/);
  });
});

Deno.test("check_layout --sizes reports outliers and never fails", async () => {
  await withTempDir(async (dir) => {
    const longBody = Array.from({ length: 90 }, (_, i) => `  const v${i} = ${i};`).join("\n");
    await writeTree(dir, {
      ...CLEAN_TREE,
      "src/plan/long.ts": `export function long(a: number, b: number, c: number): void {\n` +
        `${longBody}\n}\n` + "\n".repeat(320),
    });
    const result = await runDeno([
      "run",
      "-A",
      "--frozen",
      "scripts/check_layout.ts",
      "--sizes",
      "--root",
      dir,
    ]);
    assert.equal(result.code, 0, describeRun(result));
    assert.match(result.stdout, /src\/plan\/long\.ts: file has \d+ lines/);
    assert.match(result.stdout, /src\/plan\/long\.ts: line 1: long\(\) has 92 lines; past 80/);
    assert.match(result.stdout, /exported long\(\) takes 3 positional parameters/);
  });
});

Deno.test("findImports() classifies value, type-only and dynamic imports", () => {
  const source = `// import "./comment.ts";
const s = "import './string.ts'";
const t = \`\${"}"} import "./template.ts"\`;
const r = /import "\\.\\/regexp.ts"/;
import {
  a,
  type B,
} from "./multi.ts";
import X, { type Y } from "./mixed.ts";
import { type T, type U as V } from "./inline_types.ts";
import type { W } from "./type.ts";
export type { Z } from "./export_type.ts";
export { e } from "./export.ts";
export * from "./star.ts";
export * as ns from "./star_as.ts";
const d = await import("./dynamic.ts");
type D = typeof import("./dynamic_type.ts");
import.meta.url;
`;
  const found = findImports(tokenize(source).tokens).map((
    r,
  ) => [r.specifier, r.line, r.typeOnly ? "type" : "value", r.dynamic, r.exportStar]);
  assert.deepEqual(found, [
    ["./multi.ts", 5, "value", false, false],
    ["./mixed.ts", 9, "value", false, false],
    ["./inline_types.ts", 10, "type", false, false],
    ["./type.ts", 11, "type", false, false],
    ["./export_type.ts", 12, "type", false, false],
    ["./export.ts", 13, "value", false, false],
    ["./star.ts", 14, "value", false, true],
    ["./star_as.ts", 15, "value", false, false],
    ["./dynamic.ts", 16, "value", true, false],
    ["./dynamic_type.ts", 17, "type", true, false],
  ]);
});

Deno.test("check_layout ignores fixture projects, examples and tool folders", async () => {
  const problems = await problemsFor({
    "node_modules/Bad-Pkg/index.ts": "export {};\n",
    ".tools/deno-2.9.6/Index.ts": "export {};\n",
    "tests/fixtures/broken_x_project/index.ts": `sanitizeOps: false;\n`,
  });
  assertProblems(problems, []);
});

Deno.test("check_layout reports every package when the README has no dependency table", async () => {
  await withTempDir(async (dir) => {
    await writeTree(dir, CLEAN_TREE);
    await rm(join(dir, "README.md"));
    const problems = (await checkLayout(dir)).problems;
    assert.ok(problems.length > 0, "expected problems");
    assert.ok(
      problems.every((p) => p.message.includes("has no row in the README")),
      describe(problems),
    );
  });
});
