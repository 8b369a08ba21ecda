/**
 * The module loaders end to end (toolchain.md §8.18): selection, every row of the loader table in
 * both modes, project aliases, one evaluation of a shared helper, isolation of a throwing file,
 * frame rewriting, the probe fallback, API identity, and esbuild-wasm loaded only when used.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { childEnv, type CliResult, MOD, ndjson, REPO, tempProject } from "../_helpers/cli.ts";

const MODES = ["native", "embedded"] as const;

type Json = Record<string, unknown>;

function descriptions(stdout: string, key: "evals" | "experiments"): Record<string, unknown> {
  const doc = JSON.parse(stdout) as Record<string, Json[]>;
  return Object.fromEntries(
    doc[key]!.map((item) => [
      item.evalId ?? item.experimentId,
      JSON.parse(String(item.description)) as unknown,
    ]),
  );
}

/** Runs the CLI with an explicit import map instead of the repository's `deno.json` imports. */
async function runWithMap(
  dir: string,
  stateDir: string,
  imports: Record<string, string>,
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<CliResult> {
  const mapPath = join(stateDir, "import_map.json");
  await Deno.writeTextFile(mapPath, JSON.stringify({ imports }));
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--frozen", "--import-map", mapPath, MOD, ...args],
    cwd: dir,
    env: childEnv(stateDir, env),
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

/** The repository's imports with relative targets made absolute (a map outside the repo). */
async function repoImports(): Promise<Record<string, string>> {
  const config = JSON.parse(await Deno.readTextFile(join(REPO, "deno.json"))) as {
    imports: Record<string, string>;
  };
  const imports: Record<string, string> = {};
  for (const [key, target] of Object.entries(config.imports)) {
    imports[key] = target.startsWith("./") ? new URL(target, pathToFileURL(REPO)).href : target;
    // Outside deno.json, an npm: entry maps no subpaths by itself.
    if (target.startsWith("npm:")) imports[`${key}/`] = `npm:/${target.slice(4)}/`;
  }
  return imports;
}

for (const mode of MODES) {
  Deno.test(`niceeval list: every supported row of the loader table loads and runs (${mode}) exits 0`, async () => {
    await using p = await tempProject("loader_project");
    const env = { NICEEVAL_LOADER: mode };
    const evals = await p.run(["list", "--json"], { env });
    assert.equal(evals.code, 0, evals.stderr);
    assert.equal(evals.stderr, "");
    assert.deepEqual(descriptions(evals.stdout, "evals").table, {
      files: ["ts", "tsx", "mts", "js", "mjs", "jsx", "json"],
      api: "function,function,function",
      node: "y.txt",
      agent: "object",
    });
    const experiments = await p.run(["exp", "list", "--json"], { env });
    assert.equal(experiments.code, 0, experiments.stderr);
    // One evaluation of the helper shared by the config, the eval and the experiment.
    assert.deepEqual(descriptions(experiments.stdout, "experiments").main, {
      evaluations: 1,
      importers: ["config", "eval", "experiment"],
    });
    // The eval's test imports niceeval and a project file with literal dynamic imports, and
    // fails unless `defineEval` is the installed API's.
    const run = await p.run(["exp", "--json"], { env });
    assert.equal(run.code, 0, run.stdout + run.stderr);
    const end = ndjson(run.stdout).find((e) => e.type === "attempt_end");
    assert.equal(end?.verdict, "passed", run.stdout);
  });

  Deno.test(`niceeval list: a throwing file and an unresolved import are isolated issues (${mode}) exits 2`, async () => {
    await using p = await tempProject("broken_loader_project");
    const r = await p.run(["list"], { env: { NICEEVAL_LOADER: mode } });
    assert.equal(r.code, 2, r.stdout + r.stderr);
    const lines = r.stderr.trimEnd().split("\n");
    assert.equal(lines.length, 3, r.stderr);
    assert.equal(
      lines[0],
      "error: evals/throws.eval.ts: cannot load: thrown while loading " +
        "(at evals/throws.eval.ts:3:7) [discovery.import-failed]",
    );
    assert.match(
      lines[1]!,
      /^error: evals\/unresolved\.eval\.ts: cannot load: .*"no-such-package".*\[discovery\.import-failed\]$/,
    );
    assert.match(lines[2]!, /^hint: /);
  });
}

Deno.test("niceeval list: top-level await and computed import() load natively exits 0", async () => {
  await using p = await tempProject("loader_limits_project");
  const r = await p.run(["list"], { env: { NICEEVAL_LOADER: "native" } });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /computed/);
  assert.match(r.stdout, /tla/);
});

Deno.test("niceeval list: top-level await and computed import() are embedded issues exits 2", async () => {
  await using p = await tempProject("loader_limits_project");
  const r = await p.run(["list"], { env: { NICEEVAL_LOADER: "embedded" } });
  assert.equal(r.code, 2, r.stdout + r.stderr);
  const lines = r.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 3, r.stderr);
  const native = "run niceeval under Deno (native loader) to use it";
  assert.equal(
    lines[0],
    "error: evals/computed.eval.ts: cannot load: import() with a computed specifier " +
      `(at evals/computed.eval.ts) is not supported by the embedded loader; ${native} ` +
      "[discovery.import-failed]",
  );
  assert.equal(
    lines[1],
    "error: evals/tla.eval.ts: cannot load: top-level await (at evals/tla.eval.ts:3:21) is not " +
      `supported by the embedded loader; ${native} [discovery.import-failed]`,
  );
});

Deno.test("niceeval list: npm:, jsr: and https: imports are embedded issues naming the specifier exits 2", async () => {
  await using p = await tempProject("broken_loader_remote_project");
  const r = await p.run(["list"], { env: { NICEEVAL_LOADER: "embedded" } });
  assert.equal(r.code, 2, r.stdout + r.stderr);
  const lines = r.stderr.trimEnd().split("\n");
  const expected = [
    ["https", "https://example.com/value.ts"],
    ["jsr", "jsr:@std/path@1"],
    ["npm", "npm:left-pad@1"],
  ];
  for (const [i, [name, specifier]] of expected.entries()) {
    assert.equal(
      lines[i],
      `error: evals/${name}.eval.ts: cannot load: Cannot import "${specifier}" from ` +
        `evals/${name}.eval.ts (embedded loader): ${name}: specifiers are not supported ` +
        "(nothing is downloaded) [discovery.import-failed]",
    );
  }
});

Deno.test("niceeval list: a bare import of the config that is not installed is config.import-failed (embedded) exits 2", async () => {
  await using p = await tempProject("loader_limits_project");
  await p.write(
    "niceeval.config.ts",
    'import { defineConfig } from "niceeval";\nimport "npm:zod@4";\n\nexport default defineConfig({});\n',
  );
  const r = await p.run(["list"], { env: { NICEEVAL_LOADER: "embedded" } });
  assert.equal(r.code, 2);
  assert.match(
    r.stderr,
    /^error: niceeval\.config\.ts: cannot load: Cannot import "npm:zod@4" .*\(embedded loader\).*\[config\.import-failed\]$/m,
  );
});

Deno.test("niceeval list: bare names installed in node_modules load (embedded) exits 0", async () => {
  await using p = await tempProject("loader_project");
  await p.write(
    "node_modules/fixture-pkg/package.json",
    JSON.stringify({ name: "fixture-pkg", exports: { ".": { import: "./esm.js" } } }),
  );
  await p.write("node_modules/fixture-pkg/esm.js", 'export const value = "from node_modules";\n');
  await p.write(
    "evals/pkg.eval.ts",
    'import { defineEval } from "niceeval";\nimport { value } from "fixture-pkg";\n\n' +
      "export default defineEval({ description: JSON.stringify(value), test() {} });\n",
  );
  const r = await p.run(["list", "--json"], { env: { NICEEVAL_LOADER: "embedded" } });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(descriptions(r.stdout, "evals").pkg, "from node_modules");
});

for (const config of ["json", "jsonc"]) {
  Deno.test(`niceeval list: aliases of the project's deno.${config} load through the probe fallback exits 0`, async (t) => {
    await using p = await tempProject(`configured_loader_${config}_project`);
    // Unset for the probe: the process's map (the repository's) lacks the project's aliases.
    const env = { NICEEVAL_LOADER: "" };
    await t.step("a note names the alias and the embedded loader loads the project", async () => {
      const r = await p.run(["list"], { env });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /alias\s+— HELLO!/);
      assert.equal(
        r.stderr,
        `note: loading project files with niceeval's embedded loader: "@helpers/" does not ` +
          "resolve as the project maps it in this process (run Deno with the project's " +
          "deno.json to use the native loader)\n",
      );
    });
    await t.step("--json prints no note", async () => {
      const r = await p.run(["list", "--json"], { env });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, "");
    });
  });
}

Deno.test("niceeval list: a process whose import map lacks niceeval falls back to embedded exits 0", async () => {
  await using p = await tempProject("loader_project");
  const imports = await repoImports();
  for (const name of ["niceeval", "niceeval/expect", "niceeval/adapter", "niceeval/sandbox"]) {
    delete imports[name];
  }
  const env = { NICEEVAL_LOADER: "" };
  const listed = await runWithMap(p.dir, p.stateDir, imports, ["list"], env);
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stderr, /^note: .*embedded loader: "niceeval" does not resolve/);
  // Under the fallback, the API the eval's test imports is still the running one.
  const r = await runWithMap(p.dir, p.stateDir, imports, ["exp", "--json"], env);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal(r.stderr, "");
  assert.equal(ndjson(r.stdout).find((e) => e.type === "attempt_end")?.verdict, "passed");
});

Deno.test("niceeval --version and list: the native path never loads esbuild-wasm exits 0", async (t) => {
  await using p = await tempProject("loader_project");
  const imports = await repoImports();
  const missing = pathToFileURL(join(p.stateDir, "missing/")).href;
  imports["esbuild-wasm"] = `${missing}esbuild.js`;
  imports["esbuild-wasm/"] = missing;
  for (const args of [["--version"], ["list"]]) {
    await t.step(
      `${args.join(" ")} exits 0 with esbuild-wasm mapped to a missing file`,
      async () => {
        const r = await runWithMap(p.dir, p.stateDir, imports, args, { NICEEVAL_LOADER: "native" });
        assert.equal(r.code, 0, r.stderr);
        assert.equal(r.stderr, "");
      },
    );
  }
  await t.step("the embedded loader needs it: the same map fails", async () => {
    const r = await runWithMap(p.dir, p.stateDir, imports, ["list"], {
      NICEEVAL_LOADER: "embedded",
    });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /\[config\.import-failed\]/);
  });
});

Deno.test("niceeval list: an unknown NICEEVAL_LOADER is a usage error exits 2", async () => {
  await using p = await tempProject("loader_project");
  const r = await p.run(["list"], { env: { NICEEVAL_LOADER: "esbuild" } });
  assert.equal(r.code, 2);
  assert.equal(
    r.stderr,
    'error: NICEEVAL_LOADER must be "native" or "embedded", got "esbuild" [usage]\n' +
      "hint: set NICEEVAL_LOADER=native or NICEEVAL_LOADER=embedded, or unset it\n",
  );
});
