/**
 * issue 20 (a lighter start; toolchain.md §7.3, docs/start.md): `--version` and every help load
 * almost nothing. Every package the CLI depends on, every domain a command needs (Record,
 * scheduler, sandboxes, agents, …) and the public entries other than the root are mapped to files
 * that do not exist, so a run that loads one of them fails; `--version` and the helps must still
 * print exactly what they print without the map. `--version` must also load none of the `node:`
 * modules that `src/` imports (each costs tens of milliseconds at its first load).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { childEnv, type CliResult, MOD, REPO, tempProject } from "../_helpers/cli.ts";

/** Domains that neither `--version` nor a help may load (the root API needs the others). */
const COMMAND_DOMAINS = [
  "agents",
  "attempt",
  "coordination",
  "expect",
  "panel",
  "plan",
  "record",
  "report",
  "sandbox",
  "scheduler",
];

/**
 * `node:` modules that `--version` may load: none. The definition brands load `node:util` at their
 * first Proxy check, and hashing loads `node:crypto` at its first digest.
 */
const ROOT_NODE_MODULES: readonly string[] = [];

/** Every `node:` specifier written in the `.ts` files under `dir` (default `src/`). */
async function nodeSpecifiers(
  dir = join(REPO, "src"),
  found = new Set<string>(),
): Promise<Set<string>> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) await nodeSpecifiers(path, found);
    if (!entry.isFile || !entry.name.endsWith(".ts")) continue;
    for (const match of (await Deno.readTextFile(path)).matchAll(/["'](node:[a-z_/]+)["']/g)) {
      found.add(match[1]!);
    }
  }
  return found;
}

/**
 * The repository's imports with each npm package except those in `keep`, the command domains and
 * the public entries other than the root mapped to missing files; with `node`, also every `node:`
 * module of `src/` but {@link ROOT_NODE_MODULES}.
 */
async function importsWithout(
  missing: string,
  keep: readonly string[],
  node = false,
): Promise<object> {
  const config = JSON.parse(await Deno.readTextFile(join(REPO, "deno.json"))) as {
    imports: Record<string, string>;
  };
  const imports: Record<string, string> = {};
  for (const [key, target] of Object.entries(config.imports)) {
    if (!target.startsWith("npm:")) {
      imports[key] = new URL(target, pathToFileURL(REPO)).href;
    } else if (keep.includes(key)) {
      imports[key] = target;
      imports[`${key}/`] = `npm:/${target.slice(4)}/`;
    } else {
      imports[key] = `${missing}${key}.js`;
      imports[`${key}/`] = `${missing}${key}/`;
    }
  }
  const src = pathToFileURL(join(REPO, "src/")).href;
  for (const domain of COMMAND_DOMAINS) imports[`${src}${domain}/`] = `${missing}src/${domain}/`;
  for (const entry of ["expect", "adapter", "sandbox"]) {
    imports[`${src}public/${entry}.ts`] = `${missing}public/${entry}.ts`;
  }
  if (node) {
    for (const specifier of await nodeSpecifiers()) {
      if (!ROOT_NODE_MODULES.includes(specifier)) {
        imports[specifier] = `${missing}${specifier.replace(":", "/")}.js`;
      }
    }
  }
  return { imports };
}

/** Runs `niceeval <args>` under an import map in which only the `keep` packages exist. */
async function runWithout(
  project: { dir: string; stateDir: string },
  keep: readonly string[],
  args: readonly string[],
  options: { node?: boolean; entry?: string } = {},
): Promise<CliResult> {
  const missing = pathToFileURL(join(project.stateDir, "missing/")).href;
  const mapPath = join(project.stateDir, "import_map.json");
  await Deno.writeTextFile(
    mapPath,
    JSON.stringify(await importsWithout(missing, keep, options.node)),
  );
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--frozen", "--import-map", mapPath, options.entry ?? MOD, ...args],
    cwd: project.dir,
    env: childEnv(project.stateDir),
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

Deno.test("issue 20: niceeval --version loads no package and no command domain exits 0", async () => {
  await using p = await tempProject("loader_project");
  const expected = await p.run(["--version"]);
  assert.equal(expected.code, 0, expected.stderr);
  for (const flag of ["--version", "-v"]) {
    const r = await runWithout(p, [], [flag]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, "");
    assert.equal(r.stdout, expected.stdout);
  }
});

Deno.test("issue 20: niceeval --version loads no node: module of src/ but node:util exits 0", async () => {
  await using p = await tempProject("loader_project");
  const expected = await p.run(["--version"]);
  assert.equal(expected.code, 0, expected.stderr);
  const specifiers = await nodeSpecifiers();
  for (const specifier of ["node:crypto", "node:fs/promises", "node:module", "node:path"]) {
    assert.ok(specifiers.has(specifier), `src/ no longer imports ${specifier}`);
  }
  for (const flag of ["--version", "-v"]) {
    const r = await runWithout(p, [], [flag], { node: true });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, "");
    assert.equal(r.stdout, expected.stdout);
  }
});

Deno.test("issue 20: the node: entries of the map bite: a module importing node:crypto exits 1", async () => {
  await using p = await tempProject("loader_project");
  const entry = join(p.stateDir, "uses_crypto.ts");
  await Deno.writeTextFile(entry, 'import "node:crypto";\n');
  const r = await runWithout(p, [], [], { node: true, entry });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /Module not found "file:.*\/missing\/node\/crypto\.js"/);
});

Deno.test("issue 20: every help loads commander and no command domain, same text exits 0", async (t) => {
  await using p = await tempProject("loader_project");
  for (
    const args of [
      [],
      ["--help"],
      ["exp", "--help"],
      ["exp", "list", "-h"],
      ["list", "--help"],
      ["show", "--help"],
      ["sandbox", "--help"],
      ["ramp", "hold", "--help"],
    ]
  ) {
    await t.step(`niceeval ${args.join(" ")}`, async () => {
      const expected = await p.run(args);
      assert.equal(expected.code, 0, expected.stderr);
      const r = await runWithout(p, ["commander"], args);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, "");
      assert.equal(r.stdout, expected.stdout);
    });
  }
});

Deno.test("issue 20: the same map fails a command, which loads the public API (the map bites) exits 1", async () => {
  await using p = await tempProject("loader_project");
  const r = await runWithout(p, ["commander"], ["list"]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /Module not found "file:.*\/missing\//);
});
