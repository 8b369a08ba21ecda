/**
 * issue 20 (a lighter start; toolchain.md §7.3, docs/start.md): `--version` and every help load
 * almost nothing. Every package the CLI depends on, every domain a command needs (Record,
 * scheduler, sandboxes, agents, …) and the public entries other than the root are mapped to files
 * that do not exist, so a run that loads one of them fails; `--version` and the helps must still
 * print exactly what they print without the map.
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
 * The repository's imports with each npm package except those in `keep`, the command domains and
 * the public entries other than the root mapped to missing files.
 */
async function importsWithout(missing: string, keep: readonly string[]): Promise<object> {
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
  return { imports };
}

/** Runs `niceeval <args>` under an import map in which only the `keep` packages exist. */
async function runWithout(
  project: { dir: string; stateDir: string },
  keep: readonly string[],
  args: readonly string[],
): Promise<CliResult> {
  const missing = pathToFileURL(join(project.stateDir, "missing/")).href;
  const mapPath = join(project.stateDir, "import_map.json");
  await Deno.writeTextFile(mapPath, JSON.stringify(await importsWithout(missing, keep)));
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--frozen", "--import-map", mapPath, MOD, ...args],
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
