/**
 * The npm package on the host's Node.js (toolchain.md §10.8): build, `npm pack`, install into a
 * temporary project, then run the real launcher with real signals. Nothing is written into the
 * checkout: the package is staged and packed in a temporary directory.
 */
import assert from "node:assert/strict";
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeRun, REPO_ROOT, run, type RunResult } from "./_tree.ts";
import { expectedDependencies } from "../../scripts/build_npm.ts";

const FIXTURE = join(REPO_ROOT, "tests/fixtures/configured_npm_project");
const KEYLESS = join(REPO_ROOT, "examples/keyless");
/** Liveness only: how long a killed launcher's child may take to notice and let the lock go. */
const ORPHAN_DEADLINE_MS = 10_000;
/** Long enough that a run is still going when the test signals it; signalled runs end early. */
const HOLD_DELAY_MS = "60000";

/** Node.js and npm on PATH; without them the package cannot be installed at all. */
async function hostTools(): Promise<string | null> {
  for (const tool of ["node", "npm"]) {
    try {
      const result = await run(tool, ["--version"], { env: hostEnv() });
      if (result.code !== 0) return `${tool} --version exited ${result.code}`;
    } catch (error) {
      return `${tool} is not available: ${(error as Error).message}`;
    }
  }
  return null;
}

function hostEnv(extra: Record<string, string> = {}): Record<string, string> {
  const home = Deno.env.get("HOME") ?? "/tmp";
  return {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: home,
    DENO_DIR: Deno.env.get("DENO_DIR") ?? join(home, ".cache", "deno"),
    NO_COLOR: "1",
    CI: "1",
    npm_config_update_notifier: "false",
    npm_config_fund: "false",
    npm_config_audit: "false",
    ...extra,
  };
}

const MISSING = await hostTools();

/** Whether this host can run a command without network (`unshare -n`, usually root only). */
async function canUnshareNetwork(): Promise<boolean> {
  try {
    return (await run("unshare", ["-n", "true"], { env: hostEnv() })).code ===
      0;
  } catch {
    return false;
  }
}

const OFFLINE = await canUnshareNetwork();

/** The packed package and the projects it is installed in. */
interface Installed {
  readonly root: string;
  /** The launchers' temp directory (their import maps), removed with the root. */
  readonly tmp: string;
  readonly tarball: string;
  readonly project: string;
  readonly stateDir: string;
}

function ndjson(text: string): Record<string, unknown>[] {
  return text.split("\n").filter((line) => line.trim() !== "").map((line) => JSON.parse(line));
}

function checked(result: RunResult, what: string): RunResult {
  assert.equal(result.code, 0, `${what}\n${describeRun(result)}`);
  return result;
}

async function install(
  root: string,
  source: string,
  name: string,
  tarball: string,
) {
  const project = join(root, name);
  await cp(source, project, { recursive: true });
  checked(
    await run("npm", ["install", "--prefer-offline", tarball], {
      cwd: project,
      env: hostEnv(),
    }),
    `npm install into ${name}`,
  );
  return project;
}

async function buildAndInstall(root: string): Promise<Installed> {
  const packageDir = join(root, "package");
  checked(
    await run(Deno.execPath(), [
      "run",
      "-A",
      "--frozen",
      "scripts/build_npm.ts",
      "--package-dir",
      packageDir,
    ], { env: hostEnv() }),
    "scripts/build_npm.ts",
  );
  const pack = checked(
    await run("npm", ["pack", "--pack-destination", root], {
      cwd: packageDir,
      env: hostEnv(),
    }),
    "npm pack",
  );
  const tarball = join(root, pack.stdout.trim().split("\n").at(-1)!);
  const project = await install(root, FIXTURE, "project", tarball);
  const stateDir = await mkdtemp(join(root, "state-"));
  const tmp = await mkdtemp(join(root, "tmp-"));
  return { root, tmp, tarball, project, stateDir };
}

/** The launcher of an installed project, as npm links it. */
function launcher(
  p: Installed,
  args: string[],
  env: Record<string, string> = {},
): Deno.Command {
  return new Deno.Command(join(p.project, "node_modules/.bin/niceeval"), {
    args,
    cwd: p.project,
    env: hostEnv({ NICEEVAL_STATE_DIR: p.stateDir, TMPDIR: p.tmp, ...env }),
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
}

async function niceeval(
  p: Installed,
  args: string[],
  env: Record<string, string> = {},
): Promise<RunResult> {
  const output = await launcher(p, args, env).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

/** A running `exp --json`, read until its first Attempt started (so it holds the Record root). */
async function startHeldRun(p: Installed) {
  const child = launcher(p, ["exp", "--json"], {
    NICEEVAL_FIXTURE_DELAY_MS: HOLD_DELAY_MS,
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes('"attempt_start"')) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  assert.match(text, /"attempt_start"/, "the held run started an Attempt");
  const finish = async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    const status = await child.status;
    const stderr = await new Response(child.stderr).text();
    return { status, stdout: text, stderr };
  };
  return { child, finish };
}

/** The processes whose parent is `pid`, from `/proc`. */
async function childrenOf(pid: number): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) === pid) found.push(Number(entry));
    } catch {
      // The process ended while the list was read.
    }
  }
  return found;
}

/** True while `pid` exists and is not a zombie. */
async function running(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !==
      "Z";
  } catch {
    return false;
  }
}

/** Polls `check` until it holds; the deadline only turns a hang into a failure. */
async function eventually(
  what: string,
  check: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + ORPHAN_DEADLINE_MS;
  while (!(await check())) {
    if (Date.now() > deadline) {
      assert.fail(`${what} within ${ORPHAN_DEADLINE_MS} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The single Deno child of a launcher, once it has spawned it. */
async function denoChild(launcherPid: number): Promise<number> {
  let pids: number[] = [];
  await eventually("the launcher spawns its Deno child", async () => {
    pids = await childrenOf(launcherPid);
    return pids.length === 1;
  });
  return pids[0]!;
}

Deno.test({
  // Deno.test has no field for the reason, so an ignored test names it.
  name: "npm package: build, pack, install and run through the Node.js launcher" +
    (MISSING === null ? "" : ` (ignored: ${MISSING})`),
  ignore: MISSING !== null,
  async fn(t) {
    const root = await mkdtemp(join(tmpdir(), "niceeval-npm-"));
    try {
      const p = await buildAndInstall(root);

      await t.step("--version prints the version of deno.json", async () => {
        const version = JSON.parse(await readFile(join(REPO_ROOT, "deno.json"), "utf8"))
          .version;
        const r = await niceeval(p, ["--version"]);
        assert.equal(r.code, 0, describeRun(r));
        assert.match(
          r.stdout,
          new RegExp(`\\b${version.replaceAll(".", "\\.")}\\b`),
        );
      });

      await t.step(
        "list shows the alias, dependency and identity evals exits 0",
        async () => {
          const r = await niceeval(p, ["list"]);
          assert.equal(r.code, 0, describeRun(r));
          assert.match(
            r.stdout,
            /alias\s+— an alias of the project's deno\.json/,
          );
          assert.match(
            r.stdout,
            /dependency\s+— Hello, package\.json dependency/,
          );
          assert.match(
            r.stdout,
            /identity\s+— the API user files import is the API the CLI installed/,
          );
        },
      );

      await t.step(
        "exp --json runs every eval and passes exits 0",
        async () => {
          const r = await niceeval(p, ["exp", "--json"]);
          assert.equal(r.code, 0, describeRun(r));
          const events = ndjson(r.stdout);
          assert.equal(events[0]!.type, "start");
          const ends = events.filter((e) => e.type === "attempt_end");
          assert.deepEqual(ends.map((e) => e.evalId).sort(), [
            "alias",
            "dependency",
            "identity",
          ]);
          assert.ok(
            ends.every((e) => e.outcome === "completed"),
            JSON.stringify(ends),
          );
          const receipt = events.at(-1)!;
          assert.deepEqual([receipt.type, receipt.exitCode], ["receipt", 0]);
        },
      );

      await t.step("exp --json under the embedded loader passes exits 0", async () => {
        // The embedded loader transpiles with esbuild-wasm, an external of dist/cli.js that Deno
        // resolves from the package's node_modules.
        const r = await niceeval(p, ["exp", "--json", "--rerun", "all"], {
          NICEEVAL_LOADER: "embedded",
        });
        assert.equal(r.code, 0, describeRun(r));
        const events = ndjson(r.stdout);
        const ends = events.filter((e) => e.type === "attempt_end");
        assert.deepEqual(ends.map((e) => e.evalId).sort(), ["alias", "dependency", "identity"]);
        assert.deepEqual([events.at(-1)!.type, events.at(-1)!.exitCode], ["receipt", 0]);
      });

      await t.step(
        "an npm: specifier in a user file is discovery.import-failed exits 2",
        async () => {
          const file = join(p.project, "evals/remote.eval.ts");
          await writeFile(
            file,
            'import leftPad from "npm:left-pad@1.3.0";\nexport default leftPad;\n',
          );
          try {
            const r = await niceeval(p, ["list", "--json"]);
            assert.equal(r.code, 2, describeRun(r));
            assert.match(r.stdout + r.stderr, /discovery\.import-failed/);
            assert.match(r.stdout + r.stderr, /evals\/remote\.eval\.ts/);
          } finally {
            await rm(file);
          }
        },
      );

      await t.step(
        "an invalid deno.json is config-invalid before Deno starts exits 2",
        async () => {
          const file = join(p.project, "deno.json");
          const saved = await readFile(file, "utf8");
          await writeFile(file, '{ "imports": { "@support/": 42 } }\n');
          try {
            const r = await niceeval(p, ["list"]);
            assert.equal(r.code, 2, describeRun(r));
            assert.equal(r.stdout, "");
            const lines = r.stderr.trimEnd().split("\n");
            assert.equal(lines.length, 2, r.stderr);
            assert.match(
              lines[0]!,
              /^error: Cannot read the import map in ".*deno\.json": .*\[config-invalid\]$/,
            );
            assert.match(lines[1]!, /^hint: /);
          } finally {
            await writeFile(file, saved);
          }
        },
      );

      await t.step(
        "a second exp on a held Record root is record-root-busy exits 2; SIGINT to the first exits 130",
        async () => {
          const held = await startHeldRun(p);
          const second = await niceeval(p, ["exp", "--json"]);
          held.child.kill("SIGINT");
          const first = await held.finish();
          assert.equal(second.code, 2, describeRun(second));
          assert.match(second.stdout + second.stderr, /record-root-busy/);
          assert.equal(first.status.code, 130, first.stderr);
          const receipt = ndjson(first.stdout).at(-1)!;
          assert.deepEqual([receipt.type, receipt.exitCode], ["receipt", 130]);
        },
      );

      await t.step(
        "a SIGKILLed launcher leaves no Deno child and frees the Record root",
        async () => {
          const held = await startHeldRun(p);
          const deno = await denoChild(held.child.pid);
          held.child.kill("SIGKILL");
          const killed = await held.finish();
          assert.equal(killed.status.signal, "SIGKILL");
          await eventually(
            "the orphaned Deno child ends",
            async () => !(await running(deno)),
          );
          const next = await niceeval(p, ["exp", "--json", "slow", "alias"]);
          assert.equal(next.code, 0, describeRun(next));
        },
      );

      await t.step(
        "SIGTERM to the launcher is relayed and the run ends interrupted exits 130",
        async () => {
          const held = await startHeldRun(p);
          held.child.kill("SIGTERM");
          const result = await held.finish();
          assert.equal(result.status.code, 130, result.stderr);
          assert.equal(result.status.signal, null);
        },
      );

      await t.step(
        "SIGHUP is relayed and the launcher ends the way its Deno child ended",
        async () => {
          const held = await startHeldRun(p);
          held.child.kill("SIGHUP");
          const result = await held.finish();
          // The child either handles SIGHUP (the interrupt path, 130) or dies of it, in which case
          // the launcher, its own listener removed, dies of the same signal (128 + 1).
          const ended = `${result.status.code}/${result.status.signal}`;
          assert.ok(["130/null", "129/SIGHUP"].includes(ended), `${ended}\n${result.stderr}`);
        },
      );

      await t.step(
        "a SIGKILLed Deno child makes the launcher die of SIGKILL (status 137)",
        async () => {
          const held = await startHeldRun(p);
          const deno = await denoChild(held.child.pid);
          Deno.kill(deno, "SIGKILL");
          const result = await held.finish();
          assert.equal(result.status.code, 137);
          assert.equal(result.status.signal, "SIGKILL");
        },
      );

      await t.step("deno check of an eval file resolves the package's types", async () => {
        const ok = await run(Deno.execPath(), ["check", "evals/dependency.eval.ts"], {
          cwd: p.project,
          env: hostEnv(),
        });
        assert.equal(ok.code, 0, describeRun(ok));
        const file = join(p.project, "evals/typo.eval.ts");
        await writeFile(
          file,
          'import { defineEval } from "niceeval";\nimport { includes } from "niceeval/expect";\n' +
            "export default defineEval({ async test(t) { t.check(t.reply, includes(42)); } });\n",
        );
        try {
          const bad = await run(Deno.execPath(), [
            "check",
            "evals/typo.eval.ts",
          ], {
            cwd: p.project,
            env: hostEnv(),
          });
          assert.equal(bad.code, 1, describeRun(bad));
          assert.match(bad.stderr, /TS2345/);
        } finally {
          await rm(file);
        }
      });

      await t.step({
        name: "exp with the network disabled and an empty DENO_DIR exits 0",
        ignore: !OFFLINE,
        fn: async () => {
          const denoDir = await mkdtemp(join(root, "deno-dir-"));
          const r = await run("unshare", [
            "-n",
            join(p.project, "node_modules/.bin/niceeval"),
            "exp",
            "--json",
          ], {
            cwd: p.project,
            env: hostEnv({ NICEEVAL_STATE_DIR: p.stateDir, TMPDIR: p.tmp, DENO_DIR: denoDir }),
          });
          assert.equal(r.code, 0, describeRun(r));
          const receipt = ndjson(r.stdout).at(-1)!;
          assert.deepEqual([receipt.type, receipt.exitCode], ["receipt", 0]);
        },
      });

      await t.step(
        "npx niceeval exp local on the keyless example exits 0",
        async () => {
          // The tarball's npm install is the project's, above: the example gets a copy of that
          // tree (symlinks kept) and the package.json a second install of the tarball writes.
          const keyless = join(root, "keyless");
          await cp(KEYLESS, keyless, { recursive: true });
          checked(
            await run("cp", ["-a", join(p.project, "node_modules"), keyless], { env: hostEnv() }),
            "copy node_modules into keyless",
          );
          await writeFile(
            join(keyless, "package.json"),
            JSON.stringify({ dependencies: { niceeval: `file:${p.tarball}` } }, null, 2) + "\n",
          );
          const r = await run("npx", ["--no", "niceeval", "exp", "local"], {
            cwd: keyless,
            env: hostEnv({ NICEEVAL_STATE_DIR: p.stateDir, TMPDIR: p.tmp }),
          });
          assert.equal(r.code, 0, describeRun(r));
          assert.match(r.stdout, /^PLAN\n {2}4 attempts \(4 evals × 1 experiment\)/);
          assert.match(r.stdout, /\n {2}4 passed · 0 failed · 0 errored/);
        },
      );

      await t.step(
        "a missing Deno binary prints one line naming the platform exits 2",
        async () => {
          // Last step: it breaks the installation on purpose.
          for (
            const dir of await readdir(join(p.project, "node_modules/@deno"))
          ) {
            await rm(join(p.project, "node_modules/@deno", dir, "deno"), {
              force: true,
            });
          }
          await rm(join(p.project, "node_modules/deno/deno"), { force: true });
          const r = await niceeval(p, ["--version"]);
          assert.equal(r.code, 2, describeRun(r));
          assert.equal(r.stdout, "");
          const lines = r.stderr.trimEnd().split("\n");
          assert.equal(lines.length, 1, r.stderr);
          assert.match(
            lines[0]!,
            new RegExp(`^niceeval: cannot start Deno on ${Deno.build.os}-`),
          );
          assert.match(lines[0]!, /standalone niceeval binary/);
        },
      );
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  },
});

Deno.test("expectedDependencies() lists deno and each external at the version deno.lock resolves", () => {
  const config = {
    imports: {
      "esbuild-wasm": "npm:esbuild-wasm@^0.28",
      "dockerode": "npm:dockerode@^4",
      "e2b": "npm:e2b@^2",
      "tar-stream": "npm:tar-stream@^3",
      "zod": "npm:zod@^4",
      "@vercel/sandbox": "npm:@vercel/sandbox@^3",
    },
  };
  const lock = {
    specifiers: {
      "npm:esbuild-wasm@0.28": "0.28.2",
      "npm:dockerode@4": "4.0.12",
      "npm:e2b@2": "2.51.0",
      "npm:tar-stream@3": "3.2.2",
      "npm:zod@4": "4.6.7",
      "npm:@vercel/sandbox@3": "3.5.0",
    },
  };
  assert.deepEqual(expectedDependencies(config, lock, "2.9.6"), {
    "@vercel/sandbox": "3.5.0",
    "deno": "2.9.6",
    "dockerode": "4.0.12",
    "e2b": "2.51.0",
    "esbuild-wasm": "0.28.2",
    "tar-stream": "3.2.2",
  });
});

Deno.test("expectedDependencies() throws when an external is missing from deno.json or deno.lock", () => {
  assert.throws(
    () => expectedDependencies({ imports: {} }, { specifiers: {} }, "2.9.6"),
    /Cannot find the external "esbuild-wasm" in deno\.json imports/,
  );
  assert.throws(
    () =>
      expectedDependencies(
        { imports: { "esbuild-wasm": "npm:esbuild-wasm@^0.28" } },
        { specifiers: {} },
        "2.9.6",
      ),
    /Cannot find "npm:esbuild-wasm@\^0\.28" in deno\.lock/,
  );
});
