/**
 * `scripts/deno` (toolchain.md §3.3): a copy of the wrapper runs under `sh` with a controlled
 * PATH holding fake `deno` and `npm` scripts, so no real Deno or registry is involved.
 */
import assert from "node:assert/strict";
import { chmod, copyFile, mkdir, readdir, stat, symlink } from "node:fs/promises";
import { join } from "node:path";
import { describeRun, REPO_ROOT, run, type RunResult, withTempDir, writeScript } from "./_tree.ts";

const PIN = "2.9.6";
const SH = "/bin/sh";
// The external commands the wrapper and the fakes need; nothing else is on PATH.
const SYSTEM_TOOLS = ["basename", "cat", "cp", "dirname", "head", "mkdir", "mktemp", "mv", "rm"];
const IGNORE = Deno.build.os === "windows";

/** A fake `deno`: reports `version` and prints `<label>:<args>`, exiting with `exit-<n>`. */
function fakeDeno(label: string, version = PIN): string {
  return `if [ "$1" = "--version" ]; then
  echo "deno ${version} (stable, release, x86_64-unknown-linux-gnu)"
  echo "v8 0.0.0"
  exit 0
fi
echo "${label}:$*"
echo "${label} writes to stderr" >&2
echo "DENO_NO_UPDATE_CHECK=\${DENO_NO_UPDATE_CHECK:-unset}" >&2
case "$1" in exit-*) exit "\${1#exit-}" ;; esac
exit 0`;
}

/**
 * A fake `npm`: logs its arguments, writes noise to stdout, optionally waits at a two-party
 * barrier, then "installs" a fake deno under `--prefix`.
 */
const FAKE_NPM = `echo "npm noise on stdout"
echo "$*" >> "$FAKE_NPM_LOG"
[ -n "\${FAKE_NPM_FAIL:-}" ] && exit 1
prefix=""
while [ $# -gt 0 ]; do
  if [ "$1" = "--prefix" ]; then prefix="$2"; shift; fi
  shift
done
if [ -n "\${FAKE_BARRIER:-}" ]; then
  mkdir -p "$FAKE_BARRIER"
  : > "$FAKE_BARRIER/npm.$$"
  both() { [ $# -ge 2 ]; }
  n=0
  while [ "$n" -lt 2000000 ] && ! both "$FAKE_BARRIER"/npm.*; do n=$((n + 1)); done
fi
mkdir -p "$prefix/node_modules/.bin"
cp "$FAKE_TOOLS_DENO" "$prefix/node_modules/.bin/deno"`;

/** An `mv` that waits until two callers arrived, so both wrappers rename at the same time. */
function barrierMv(realMv: string): string {
  return `mkdir -p "$FAKE_BARRIER"
: > "$FAKE_BARRIER/mv.$$"
both() { [ $# -ge 2 ]; }
n=0
while [ "$n" -lt 2000000 ] && ! both "$FAKE_BARRIER"/mv.*; do n=$((n + 1)); done
exec "${realMv}" "$@"`;
}

interface Sandbox {
  dir: string;
  repo: string;
  wrapper: string;
  sys: string;
  npmLog: string;
  toolsDeno: string;
  target: string;
}

async function which(tool: string): Promise<string> {
  for (const dir of ["/usr/bin", "/bin", "/usr/local/bin"]) {
    try {
      await stat(join(dir, tool));
      return join(dir, tool);
    } catch {
      // try the next directory
    }
  }
  throw new Error(`cannot find ${tool}`);
}

async function withSandbox(fn: (s: Sandbox) => Promise<void>): Promise<void> {
  await withTempDir(async (dir) => {
    const repo = join(dir, "repo");
    const wrapper = join(repo, "scripts/deno");
    await mkdir(join(repo, "scripts"), { recursive: true });
    await copyFile(join(REPO_ROOT, "scripts/deno"), wrapper);
    await chmod(wrapper, 0o755);
    const sys = join(dir, "sys");
    await mkdir(sys);
    for (const tool of SYSTEM_TOOLS) await symlink(await which(tool), join(sys, tool));
    const toolsDeno = join(dir, "templates/tools-deno");
    await writeScript(toolsDeno, fakeDeno("tools"));
    await fn({
      dir,
      repo,
      wrapper,
      sys,
      npmLog: join(dir, "npm.log"),
      toolsDeno,
      target: join(repo, `.tools/deno-${PIN}`),
    });
  });
}

/** Runs the wrapper copy with only `path` on PATH. */
function runWrapper(
  s: Sandbox,
  { path, args = ["run", "x.ts"], env = {} }: {
    path: string[];
    args?: string[];
    env?: Record<string, string>;
  },
): Promise<RunResult> {
  return run(SH, [s.wrapper, ...args], {
    cwd: s.dir,
    clearEnv: true,
    env: {
      PATH: path.join(":"),
      HOME: s.dir,
      FAKE_NPM_LOG: s.npmLog,
      FAKE_TOOLS_DENO: s.toolsDeno,
      ...env,
    },
  });
}

async function binDir(s: Sandbox, name: string, files: Record<string, string>): Promise<string> {
  const dir = join(s.dir, name);
  for (const [file, body] of Object.entries(files)) await writeScript(join(dir, file), body);
  return dir;
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

async function readLog(path: string): Promise<string[]> {
  if (!(await exists(path))) return [];
  return (await Deno.readTextFile(path)).trim().split("\n");
}

/** Entries named `.install-*` anywhere under `.tools/`. */
async function leftovers(s: Sandbox): Promise<string[]> {
  const tools = join(s.repo, ".tools");
  if (!(await exists(tools))) return [];
  const found: string[] = [];
  for (const entry of await readdir(tools, { recursive: true })) {
    if (entry.split("/").some((part) => part.startsWith(".install-"))) found.push(entry);
  }
  return found;
}

Deno.test({
  name: "scripts/deno uses a deno on PATH whose version line is deno 2.9.6",
  ignore: IGNORE,
  fn: () =>
    withSandbox(async (s) => {
      const good = await binDir(s, "good", { deno: fakeDeno("path") });
      await writeScript(join(s.target, "node_modules/.bin/deno"), fakeDeno("tools"));
      const result = await runWrapper(s, { path: [good, s.sys] });
      assert.equal(result.code, 0, describeRun(result));
      assert.equal(result.stdout, "path:run x.ts\n");
      assert.match(result.stderr, /DENO_NO_UPDATE_CHECK=1/);
    }),
});

Deno.test({
  name: "scripts/deno ignores a deno on PATH with another version",
  ignore: IGNORE,
  fn: () =>
    withSandbox(async (s) => {
      const old = await binDir(s, "old", { deno: fakeDeno("old", "2.9.5") });
      const longer = await binDir(s, "longer", { deno: fakeDeno("longer", "2.9.60") });
      const good = await binDir(s, "good", { deno: fakeDeno("path") });
      const first = await runWrapper(s, { path: [old, longer, good, s.sys] });
      assert.equal(first.code, 0, describeRun(first));
      assert.equal(first.stdout, "path:run x.ts\n");

      await writeScript(join(s.target, "node_modules/.bin/deno"), fakeDeno("tools"));
      const second = await runWrapper(s, { path: [old, longer, s.sys] });
      assert.equal(second.code, 0, describeRun(second));
      assert.equal(second.stdout, "tools:run x.ts\n");
    }),
});

Deno.test({
  name: "scripts/deno skips itself when scripts/ is on PATH",
  ignore: IGNORE,
  fn: () =>
    withSandbox(async (s) => {
      const good = await binDir(s, "good", { deno: fakeDeno("path") });
      const result = await runWrapper(s, { path: [join(s.repo, "scripts"), good, s.sys] });
      assert.equal(result.code, 0, describeRun(result));
      assert.equal(result.stdout, "path:run x.ts\n");
    }),
});

Deno.test({
  name: "scripts/deno uses .tools/deno-2.9.6 when present without calling npm",
  ignore: IGNORE,
  fn: () =>
    withSandbox(async (s) => {
      const npm = await binDir(s, "npm", { npm: FAKE_NPM });
      await writeScript(join(s.target, "node_modules/.bin/deno"), fakeDeno("tools"));
      const result = await runWrapper(s, { path: [npm, s.sys] });
      assert.equal(result.code, 0, describeRun(result));
      assert.equal(result.stdout, "tools:run x.ts\n");
      assert.deepEqual(await readLog(s.npmLog), []);
    }),
});

Deno.test({
  name: "scripts/deno installs deno@2.9.6 with npm into .tools/ and sends npm output to stderr",
  ignore: IGNORE,
  fn: () =>
    withSandbox(async (s) => {
      const npm = await binDir(s, "npm", { npm: FAKE_NPM });
      const result = await runWrapper(s, { path: [npm, s.sys] });
      assert.equal(result.code, 0, describeRun(result));
      assert.equal(result.stdout, "tools:run x.ts\n");
      assert.match(result.stderr, /npm noise on stdout/);
      const log = await readLog(s.npmLog);
      assert.equal(log.length, 1);
      const prefix = `${join(s.repo, ".tools")}/.install-`;
      assert.match(
        log[0]!,
        new RegExp(
          `^install --prefix ${prefix.replaceAll(".", "\\.")}\\S+ --no-save --no-audit ` +
            `--no-fund deno@2\\.9\\.6$`,
        ),
      );
      assert.ok(await exists(join(s.target, "node_modules/.bin/deno")));
      assert.deepEqual(await leftovers(s), []);

      const again = await runWrapper(s, { path: [npm, s.sys] });
      assert.equal(again.stdout, "tools:run x.ts\n");
      assert.equal((await readLog(s.npmLog)).length, 1, "the second run must not call npm");
    }),
});

Deno.test({
  name: "scripts/deno: two simultaneous first runs both succeed and leave one intact install",
  ignore: IGNORE,
  fn: () =>
    withSandbox(async (s) => {
      const npm = await binDir(s, "npm", { npm: FAKE_NPM });
      const env = { FAKE_BARRIER: join(s.dir, "barrier") };
      const results = await Promise.all([
        runWrapper(s, { path: [npm, s.sys], args: ["one"], env }),
        runWrapper(s, { path: [npm, s.sys], args: ["two"], env }),
      ]);
      assert.equal(results[0].code, 0, describeRun(results[0]));
      assert.equal(results[1].code, 0, describeRun(results[1]));
      assert.equal(results[0].stdout, "tools:one\n");
      assert.equal(results[1].stdout, "tools:two\n");
      assert.equal((await readLog(s.npmLog)).length, 2);
      assert.deepEqual(await readdir(join(s.repo, ".tools")), [`deno-${PIN}`]);
      assert.deepEqual(await readdir(s.target), ["node_modules"]);
      assert.deepEqual(await leftovers(s), []);
    }),
});

Deno.test({
  name: "scripts/deno: two first runs renaming at the same moment leave no nested copy",
  ignore: IGNORE,
  fn: () =>
    withSandbox(async (s) => {
      // Both wrappers reach `mv` after checking that the target does not exist yet; the second
      // rename then lands inside the first one's folder unless the wrapper removes it.
      const npm = await binDir(s, "npm", { npm: FAKE_NPM });
      const mv = await binDir(s, "mv", { mv: barrierMv(await which("mv")) });
      const env = { FAKE_BARRIER: join(s.dir, "barrier") };
      const results = await Promise.all([
        runWrapper(s, { path: [npm, mv, s.sys], args: ["one"], env }),
        runWrapper(s, { path: [npm, mv, s.sys], args: ["two"], env }),
      ]);
      assert.equal(results[0].code, 0, describeRun(results[0]));
      assert.equal(results[1].code, 0, describeRun(results[1]));
      assert.equal(results[0].stdout, "tools:one\n");
      assert.equal(results[1].stdout, "tools:two\n");
      assert.deepEqual(await readdir(join(s.repo, ".tools")), [`deno-${PIN}`]);
      assert.deepEqual(await leftovers(s), []);
      assert.deepEqual(await readdir(s.target), ["node_modules"]);
    }),
});

Deno.test({
  name: "scripts/deno exits 127 naming both remedies when neither deno nor npm is available",
  ignore: IGNORE,
  fn: () =>
    withSandbox(async (s) => {
      const old = await binDir(s, "old", { deno: fakeDeno("old", "2.8.0") });
      const result = await runWrapper(s, { path: [old, s.sys] });
      assert.equal(result.code, 127, describeRun(result));
      assert.equal(result.stdout, "");
      const lines = result.stderr.trimEnd().split("\n");
      assert.equal(lines.length, 1, describeRun(result));
      assert.match(lines[0]!, /install deno 2\.9\.6 on PATH/);
      assert.match(lines[0]!, /Node\.js >= 20 with npm/);
      assert.equal(await exists(join(s.repo, ".tools")), false);
    }),
});

Deno.test({
  name: "scripts/deno exits 127 and cleans up when npm install fails",
  ignore: IGNORE,
  fn: () =>
    withSandbox(async (s) => {
      const npm = await binDir(s, "npm", { npm: FAKE_NPM });
      const result = await runWrapper(s, { path: [npm, s.sys], env: { FAKE_NPM_FAIL: "1" } });
      assert.equal(result.code, 127, describeRun(result));
      assert.equal(result.stdout, "");
      assert.match(result.stderr, /npm install deno@2\.9\.6 failed/);
      assert.equal(await exists(s.target), false);
      assert.deepEqual(await leftovers(s), []);
    }),
});

Deno.test({
  name: "scripts/deno passes all arguments and the program's exit status through",
  ignore: IGNORE,
  fn: () =>
    withSandbox(async (s) => {
      const good = await binDir(s, "good", { deno: fakeDeno("path") });
      const result = await runWrapper(s, {
        path: [good, s.sys],
        args: ["exit-42", "a b", "--flag=1"],
      });
      assert.equal(result.code, 42, describeRun(result));
      assert.equal(result.stdout, "path:exit-42 a b --flag=1\n");
      assert.match(result.stderr, /path writes to stderr/);
    }),
});
