/**
 * `scripts/install` (docs/install.md): a launcher in a temporary install directory under a
 * temporary HOME runs this clone from any directory; re-running is idempotent, `--uninstall`
 * removes only its own launcher, and a foreign `niceeval` is never touched.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { childEnv, REPO } from "../_helpers/cli.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

const INSTALL = join(REPO, "scripts", "install");

interface Result {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function exec(program: string, args: string[], cwd: string, env: Record<string, string>) {
  const out = await new Deno.Command(program, {
    args,
    cwd,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  const result: Result = {
    code: out.code,
    stdout: decoder.decode(out.stdout),
    stderr: decoder.decode(out.stderr),
  };
  return result;
}

Deno.test("niceeval install: the launcher runs init --example and exp local, then uninstalls exits 0", async (t) => {
  await withTempDir(async (tmp) => {
    const home = join(tmp, "home");
    const bin = join(tmp, "home", "bin");
    const project = join(tmp, "project");
    const state = join(tmp, "state");
    for (const dir of [home, project, state]) await Deno.mkdir(dir);
    const env = childEnv(state, { HOME: home, NICEEVAL_INSTALL_DIR: bin });
    const launcher = join(bin, "niceeval");
    const install = (args: string[] = [], extra: Record<string, string> = {}) =>
      exec(INSTALL, args, project, { ...env, ...extra });
    const niceeval = (...args: string[]) => exec(launcher, args, project, env);

    await t.step("install writes the launcher and says the directory is not on PATH", async () => {
      const r = await install();
      assert.equal(r.code, 0, r.stderr);
      assert.equal(
        r.stdout,
        `installed ${launcher} (runs ${REPO.replace(/\/$/, "")})\n` +
          `note: ${bin} is not on PATH; add it, for example: export PATH="${bin}:$PATH"\n`,
      );
      assert.equal((await Deno.stat(launcher)).mode! & 0o111, 0o111);
    });

    await t.step("niceeval init --example in an empty directory", async () => {
      const r = await niceeval("init", "--example");
      assert.equal(r.code, 0, r.stderr);
      assert.ok(r.stdout.includes("created experiments/local.ts\n"), r.stdout);
      assert.ok(r.stdout.includes("created deno.json\ncreated .gitignore\n"), r.stdout);
      assert.ok(r.stdout.endsWith("next: niceeval exp\n"), r.stdout);
    });

    await t.step("niceeval exp local passes every eval", async () => {
      const r = await niceeval("exp", "local");
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^PLAN\n/);
      assert.match(r.stdout, /4 passed · 0 failed · 0 errored/);
      assert.match(r.stdout, /\n {2}local {2}4\/4 passed \(100%\) · /);
    });

    await t.step("install again rewrites the same launcher", async () => {
      const before = await Deno.readTextFile(launcher);
      const r = await install([], { PATH: `${bin}:${env.PATH}` });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `niceeval is up to date: ${launcher}\n`);
      assert.equal(await Deno.readTextFile(launcher), before);
      assert.deepEqual(await entries(bin), ["niceeval"]);
    });

    await t.step("--uninstall removes the launcher, and then has nothing to remove", async () => {
      const r = await install(["--uninstall"]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `removed ${launcher}\n`);
      assert.deepEqual(await entries(bin), []);
      const again = await install(["--uninstall"]);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(again.stdout, `nothing to remove: ${launcher} does not exist\n`);
    });

    await t.step("a niceeval it did not write is neither overwritten nor removed", async () => {
      const foreign = "#!/bin/sh\necho someone else's niceeval\n";
      await Deno.writeTextFile(launcher, foreign);
      for (const args of [[], ["--uninstall"]]) {
        const r = await install(args);
        assert.equal(r.code, 2, args.join(" "));
        assert.equal(r.stdout, "");
        assert.equal(r.stderr.split("\n").length, 2, r.stderr);
        assert.match(r.stderr, /^scripts\/install: .*niceeval .*not written by scripts\/install/);
        assert.equal(await Deno.readTextFile(launcher), foreign);
      }
    });
  });
});

async function entries(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) names.push(entry.name);
  return names.sort();
}
