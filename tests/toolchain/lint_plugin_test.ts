/** The niceeval lint plugin (toolchain.md §2.8), run through `deno lint` on synthetic trees. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { describeRun, REPO_ROOT, runDeno, withTempDir, writeTree } from "./_tree.ts";

const PLUGIN = join(REPO_ROOT, "scripts/lint_plugin.ts");

interface Finding {
  path: string;
  line: number;
  rule: string;
  message: string;
  hint: string | undefined;
}

/**
 * Lints `files` in a temporary project whose deno.json loads the plugin (only plugin rules
 * enabled) and returns the plugin's findings as `path:line rule` strings, sorted.
 */
async function lint(files: Record<string, string>): Promise<Finding[]> {
  return await withTempDir(async (dir) => {
    await writeTree(dir, {
      "deno.json": JSON.stringify({
        imports: {
          "niceeval": "./mod.ts",
          "niceeval/expect": "./src/public/expect.ts",
          "zod": "npm:zod@^4",
          "@types/dockerode": "npm:@types/dockerode@^4",
        },
        lint: { plugins: [PLUGIN], rules: { tags: [], include: [] } },
      }),
      ...files,
    });
    const result = await runDeno(["lint", "--json", "--config", join(dir, "deno.json")], {
      cwd: dir,
    });
    let report: {
      diagnostics: Array<
        {
          filename: string;
          range: { start: { line: number } };
          code: string;
          message: string;
          hint?: string;
        }
      >;
      errors: unknown[];
    };
    try {
      report = JSON.parse(result.stdout);
    } catch {
      throw new Error(`deno lint printed no JSON report\n${describeRun(result)}`);
    }
    assert.deepEqual(report.errors, [], describeRun(result));
    const prefix = new URL(`file://${dir}/`).href;
    return report.diagnostics.map((d) => ({
      path: d.filename.startsWith(prefix) ? d.filename.slice(prefix.length) : d.filename,
      line: d.range.start.line,
      rule: d.code,
      message: d.message,
      hint: d.hint,
    }));
  });
}

function summary(findings: Finding[], rule: string): string[] {
  return findings.filter((f) => f.rule === `niceeval/${rule}`).map((f) => `${f.path}:${f.line}`)
    .sort();
}

const PROCESS_SOURCE = `const a = Deno.args;
const e = Deno.env.get("HOME");
Deno.exit(1);
Deno.addSignalListener("SIGINT", () => {});
const os = Deno.build.os;
const p = globalThis.Deno.ppid;
const { env, args: argv } = Deno;
const fine = [Deno.cwd(), Deno.pid, env.args];
`;

Deno.test("process-seam flags process access outside src/cli/process.ts", async () => {
  const findings = await lint({
    "src/config/load.ts": PROCESS_SOURCE,
    "src/cli/process.ts": PROCESS_SOURCE,
    "src/cli/main.ts": PROCESS_SOURCE,
    "mod.ts": `if (import.meta.main) Deno.exit(Number(Deno.args[0]));\n`,
    "tests/cli/main_test.ts": PROCESS_SOURCE,
    "scripts/demo.ts": PROCESS_SOURCE,
    "tests/fixtures/a_project/evals/x.eval.ts": PROCESS_SOURCE,
  });
  const lines = ["1", "2", "3", "4", "5", "6", "7", "7"];
  assert.deepEqual(
    summary(findings, "process-seam"),
    [
      ...lines.map((l) => `src/cli/main.ts:${l}`),
      ...lines.map((l) => `src/config/load.ts:${l}`),
      "mod.ts:1",
      "mod.ts:1",
    ].sort(),
  );
  const message = findings.find((f) => f.rule === "niceeval/process-seam")!.message;
  assert.match(message, /only src\/cli\/process\.ts may use it/);
});

const CLOCK_SOURCE = `const a = Date.now();
const b = new Date();
const c = performance.now();
const d = Math.random();
setTimeout(() => {}, 1);
const i = setInterval(() => {}, 1);
globalThis.setTimeout(() => {}, 1);
import { setTimeout as delay } from "node:timers/promises";
const fine = [new Date(0), new Date(a), clock.now(), clock.setTimeout(() => {}, 1)];
const alsoFine: ReturnType<typeof setTimeout> | { setInterval: number } = { setInterval: 1 };
`;

Deno.test("clock-seam flags real time and randomness outside the clock and random seams", async () => {
  const findings = await lint({
    "src/scheduler/retry.ts": CLOCK_SOURCE,
    "src/_shared/clock.ts": CLOCK_SOURCE,
    "src/_shared/random.ts": CLOCK_SOURCE,
    "src/cli/process.ts": CLOCK_SOURCE,
    "mod.ts": CLOCK_SOURCE,
    "tests/scheduler/retry_test.ts": CLOCK_SOURCE,
    "src/scheduler/local.ts": `const { setTimeout, setInterval: every } = clock;\n` +
      `setTimeout(() => {}, 1);\nfunction f(setInterval: Clock["setTimeout"]) {\n` +
      `  return setInterval(() => {}, 1);\n}\nconst o = { setTimeout() {}, setInterval: every };\n`,
  });
  const lines = ["1", "2", "3", "4", "5", "6", "7", "8"];
  assert.deepEqual(
    summary(findings, "clock-seam"),
    [
      ...lines.map((l) => `src/cli/process.ts:${l}`),
      ...lines.map((l) => `src/scheduler/retry.ts:${l}`),
    ].sort(),
  );
  const message = findings.find((f) => f.rule === "niceeval/clock-seam")!.message;
  assert.match(message, /only src\/_shared\/clock\.ts and src\/_shared\/random\.ts/);
});

const LOCK_SOURCE = `await file.lock(true);
file.tryLock?.(true);
file.lockSync();
handle.tryLockSync(true);
const fine = [file.unlock(), lanes.locked, lock(file)];
`;

Deno.test("lock-seam flags file-lock calls outside src/coordination/lock.ts", async () => {
  const findings = await lint({
    "src/record/root.ts": LOCK_SOURCE,
    "src/coordination/lock.ts": LOCK_SOURCE,
    "src/coordination/slots.ts": LOCK_SOURCE,
    "tests/coordination/lock_test.ts": LOCK_SOURCE,
    "mod.ts": LOCK_SOURCE,
  });
  const lines = ["1", "2", "3", "4"];
  assert.deepEqual(
    summary(findings, "lock-seam"),
    [
      ...lines.map((l) => `src/coordination/slots.ts:${l}`),
      ...lines.map((l) => `src/record/root.ts:${l}`),
    ].sort(),
  );
  const finding = findings.find((f) => f.rule === "niceeval/lock-seam")!;
  assert.match(finding.message, /only src\/coordination\/lock\.ts may call it/);
  // The hint names only what src/coordination/mod.ts exports.
  assert.equal(finding.hint, "Use tryAcquireLock() from src/coordination/mod.ts (toolchain.md §6)");
});

const SPECIFIER_SOURCE = `import { a } from "./a.ts";
import { b } from "../b.ts";
import { readFile } from "node:fs/promises";
import { z } from "zod";
import * as mini from "zod/mini";
import { y } from "npm:zod@4";
import { join } from "jsr:@std/path";
export { k } from "https://deno.land/x/k/mod.ts";
export * from "http://example.com/x.ts";
import { u } from "unmapped";
const m = await import("jsr:@std/fs");
import type { T } from "npm:@types/node";
import * as api from "niceeval";
import { expect } from "niceeval/expect";
// @ts-types="npm:@types/dockerode"
// @ts-types="@types/dockerode"
const computed = await import(name);
`;

Deno.test("specifier-hygiene allows only relative, node: and mapped bare specifiers", async () => {
  const findings = await lint({
    "src/config/load.ts": SPECIFIER_SOURCE,
    "scripts/demo.ts": SPECIFIER_SOURCE,
    "mod.ts": SPECIFIER_SOURCE,
  });
  const flagged = ["6", "7", "8", "9", "10", "11", "12", "13", "14", "15"];
  assert.deepEqual(
    summary(findings, "specifier-hygiene"),
    [
      ...flagged.map((l) => `mod.ts:${l}`),
      ...flagged.map((l) => `scripts/demo.ts:${l}`),
      ...flagged.map((l) => `src/config/load.ts:${l}`),
    ].sort(),
  );
  const messages = findings.filter((f) => f.path === "src/config/load.ts").map((f) => f.message);
  assert.ok(messages.some((m) => m.includes(`"npm:zod@4" is a remote specifier`)));
  assert.ok(messages.some((m) => m.includes(`"unmapped" is not mapped in deno.json imports`)));
  assert.ok(messages.some((m) => m.includes(`"niceeval" is a niceeval self-mapping`)));
});

Deno.test("specifier-hygiene allows niceeval names in npm/entry.ts and tests only", async () => {
  const source = `import * as api from "niceeval";\nimport { y } from "npm:zod@4";\n`;
  const findings = await lint({
    "npm/entry.ts": source,
    "tests/e2e/api_test.ts": source,
    "bench/plan_bench.ts": source,
    "compile.ts": source,
  });
  assert.deepEqual(summary(findings, "specifier-hygiene"), [
    "bench/plan_bench.ts:1",
    "bench/plan_bench.ts:2",
    "compile.ts:1",
    "compile.ts:2",
    "npm/entry.ts:2",
    "tests/e2e/api_test.ts:2",
  ]);
});

Deno.test("no rule covers fixture projects or examples", async () => {
  const sources = { PROCESS_SOURCE, CLOCK_SOURCE, LOCK_SOURCE, SPECIFIER_SOURCE };
  const files: Record<string, string> = {};
  for (const [name, source] of Object.entries(sources)) {
    const file = name.toLowerCase();
    files[`tests/fixtures/user_project/src/cli/${file}.ts`] = source;
    files[`tests/fixtures/broken_npm_project/evals/${file}.eval.ts`] = source;
    files[`examples/keyless/src/_shared/${file}.ts`] = source;
  }
  files["src/config/control.ts"] = "const a = Deno.args;\n"; // proves the tree was linted
  const findings = await lint(files);
  assert.deepEqual(findings.map((f) => `${f.path}:${f.line} ${f.rule}`), [
    "src/config/control.ts:1 niceeval/process-seam",
  ]);
});

Deno.test("the repository's deno lint loads the plugin", async () => {
  // A plugin that fails to load makes every `deno lint` run fail, so this guards the whole repo.
  const result = await runDeno([
    "lint",
    "--json",
    "scripts/lint_plugin.ts",
    "scripts/check_layout.ts",
  ]);
  assert.equal(result.code, 0, describeRun(result));
  assert.match(result.stdout, /"checked_files"/);
});
