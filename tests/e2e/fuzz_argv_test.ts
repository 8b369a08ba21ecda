/**
 * Bad-input fuzzing of every command line and of `.env` (issue 10). Seeded: the CI seed is fixed,
 * `NICEEVAL_FUZZ_SEED=<n>` explores another. Most cases run in-process through `main(args, io)`;
 * a small sample spawns the real CLI. Oracle per case: exit 0, 1 or 2 (0 only for valid input),
 * never 3 and never a hang; exit 2 prints exactly one `error: … [code]` line and one `hint:` line;
 * nothing outside the state directory's root locks changes (ERR-3).
 */
import assert from "node:assert/strict";
import { cp } from "node:fs/promises";
import { join } from "node:path";
import { main } from "../../src/cli/main.ts";
import { createFakeIo } from "../_fakes/io.ts";
import { childEnv, MOD, REPO } from "../_helpers/cli.ts";
import {
  argvCases,
  ENV_SECRET,
  envCases,
  type FuzzPaths,
  fuzzSeed,
  makeFifo,
  snapshotTree,
  treeChanges,
  type Validity,
} from "../_helpers/fuzz.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

const SEED = fuzzSeed(Deno.env.get("NICEEVAL_FUZZ_SEED"));
/** Only detects a hang (a healthy case ends in well under a second); never about speed. */
const HANG_MS = 60_000;
const ERROR_LINE_REGEXP = /^error: [^\n]* \[[a-z0-9.-]+\]$/;

/**
 * The fuzz fixture. `project` is the keyless example without experiments, so no case can run an
 * Attempt; `dryProject` is the whole example, used only for `exp --dry`, which runs nothing and
 * exits 0 for valid input, so a bad value that is accepted shows as exit 0.
 */
interface Fixture {
  readonly base: string;
  readonly project: string;
  readonly dryProject: string;
  readonly state: string;
  readonly paths: FuzzPaths;
}

async function fixture(base: string): Promise<Fixture> {
  const project = join(base, "project");
  const dryProject = join(base, "dry-project");
  await cp(join(REPO, "examples", "keyless"), project, { recursive: true });
  await cp(join(REPO, "examples", "keyless"), dryProject, { recursive: true });
  await Deno.remove(join(project, "experiments"), { recursive: true });
  // The Record root exists up front: a usage error may not add anything, not even the root.
  await Deno.mkdir(join(project, ".niceeval", "record"), { recursive: true });
  const sentinel = join(base, "sentinel");
  await Deno.mkdir(join(sentinel, "dir"), { recursive: true });
  await Deno.writeTextFile(join(sentinel, "file"), "sentinel\n");
  await makeFifo(join(sentinel, "fifo"));
  await Deno.symlink(join(sentinel, "nothing"), join(sentinel, "dangling"));
  const state = join(base, "state");
  await Deno.mkdir(state);
  return {
    base,
    project,
    dryProject,
    state,
    paths: {
      fifo: join(sentinel, "fifo"),
      file: join(sentinel, "file"),
      dir: join(sentinel, "dir"),
      underFile: join(sentinel, "file", "x"),
      dangling: join(sentinel, "dangling"),
      missingParents: join(sentinel, "new", "deeper", "junit.xml"),
    },
  };
}

/** Root locks are the one write a usage error may leave (ERR-3, ROOT-1). */
function isRootLock(relative: string): boolean {
  return /^state\/roots(\/[0-9a-f]{64}\.lock)?$/.test(relative);
}

/** True when `stdout` is exactly one NDJSON `error` line for the stderr line `error`. */
function isErrorLine(stdout: string, error: string): boolean {
  if (!stdout.endsWith("\n") || stdout.indexOf("\n") !== stdout.length - 1) return false;
  try {
    const line = JSON.parse(stdout);
    return line.type === "error" && typeof line.code === "string" &&
      error.endsWith(` [${line.code}]`);
  } catch {
    return false;
  }
}

/** Problems of one finished case, empty when it passed. */
function judge(
  result: { code: number; stdout: string; stderr: string },
  valid: Validity,
  changes: readonly string[],
): string[] {
  const problems: string[] = [];
  const { code, stderr } = result;
  if (![0, 1, 2].includes(code)) problems.push(`exit ${code}`);
  if (code === 0 && valid === false) problems.push("exit 0 for invalid input");
  if (code === 2) {
    const lines = stderr.split("\n");
    const errors = lines.filter((l) => l.startsWith("error: "));
    const hints = lines.filter((l) => l.startsWith("hint: "));
    if (
      lines.length !== 3 || lines[2] !== "" || errors.length !== 1 || hints.length !== 1 ||
      !ERROR_LINE_REGEXP.test(lines[0]!) || !lines[1]!.startsWith("hint: ")
    ) {
      problems.push("stderr is not exactly one error line and one hint line");
    }
    // issue 18.8: with --json the error is also one `error` line on stdout.
    if (result.stdout !== "" && !isErrorLine(result.stdout, lines[0]!)) {
      problems.push("stdout is neither empty nor the error line on a usage error");
    }
  }
  if (stderr.includes(ENV_SECRET)) problems.push("a .env value was printed");
  if (changes.length > 0) problems.push(`files changed: ${changes.slice(0, 5).join(", ")}`);
  return problems;
}

async function inProcess(
  fx: Fixture,
  args: readonly string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = createFakeIo({
    cwd: args[0] === "exp" && args.includes("--dry") ? fx.dryProject : fx.project,
    env: { NICEEVAL_STATE_DIR: fx.state, HOME: fx.base, NO_COLOR: "1" },
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no exit within ${HANG_MS} ms (hang)`)), HANG_MS);
  });
  try {
    const code = await Promise.race([main(args, io), hang]);
    return { code, stdout: io.stdout.text(), stderr: io.stderr.text() };
  } finally {
    clearTimeout(timer);
  }
}

function show(args: readonly string[]): string {
  const text = JSON.stringify(args);
  return text.length > 200 ? text.slice(0, 200) + "…" : text;
}

async function runCase(
  fx: Fixture,
  run: () => Promise<{ code: number; stdout: string; stderr: string }>,
  valid: Validity,
): Promise<string[]> {
  const skip = (relative: string) => isRootLock(relative);
  const before = await snapshotTree(fx.base, { skip });
  let result;
  try {
    result = await run();
  } catch (error) {
    return [`threw ${error instanceof Error ? error.message : String(error)}`];
  }
  const after = await snapshotTree(fx.base, { skip });
  const problems = judge(result, valid, treeChanges(before, after));
  if (problems.length > 0) problems.push(`stderr: ${JSON.stringify(result.stderr.slice(0, 300))}`);
  return problems;
}

Deno.test("main() answers every malformed command line with exit 0, 1 or 2, the ERR-5 lines and no write", async () => {
  await withTempDir(async (base) => {
    const fx = await fixture(base);
    const cases = argvCases(SEED, fx.paths);
    const failures: string[] = [];
    for (const c of cases) {
      const problems = await runCase(fx, () => inProcess(fx, c.args), c.valid);
      if (problems.length > 0) {
        failures.push(
          `seed ${SEED} case ${c.index} (${c.family}) ${show(c.args)}: ${problems.join("; ")}`,
        );
      }
    }
    // deno-lint-ignore no-console -- the case count and seed are this test's report
    console.log(`fuzz: ${cases.length} command lines (seed ${SEED})`);
    assert.deepEqual(failures, [], `${failures.length} of ${cases.length} failed`);
  });
});

Deno.test("main() answers every malformed .env with exit 2 naming the line, never the value", async () => {
  await withTempDir(async (base) => {
    const fx = await fixture(base);
    const cases = envCases(SEED);
    const failures: string[] = [];
    for (const c of cases) {
      await Deno.writeFile(join(fx.project, ".env"), c.bytes);
      const problems = await runCase(fx, () => inProcess(fx, ["list"]), c.valid);
      if (problems.length > 0) {
        failures.push(`seed ${SEED} .env case ${c.index} (${c.family}): ${problems.join("; ")}`);
      }
    }
    // deno-lint-ignore no-console -- the case count and seed are this test's report
    console.log(`fuzz: ${cases.length} .env files (seed ${SEED})`);
    assert.deepEqual(failures, [], `${failures.length} of ${cases.length} failed`);
  });
});

Deno.test("main() answers a .env that is a directory with a usage error", async () => {
  await withTempDir(async (base) => {
    const fx = await fixture(base);
    await Deno.mkdir(join(fx.project, ".env"));
    const problems = await runCase(fx, () => inProcess(fx, ["list"]), false);
    assert.deepEqual(problems, []);
  });
});

/** Runs the real CLI; kills it (and reports a hang) only after {@link HANG_MS}. */
async function spawned(
  fx: Fixture,
  args: readonly string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--frozen", MOD, ...args],
    cwd: fx.project,
    env: childEnv(fx.state, { HOME: fx.base }),
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), HANG_MS);
  try {
    const out = await child.output();
    if (out.signal === "SIGKILL") throw new Error(`no exit within ${HANG_MS} ms (hang)`);
    const decoder = new TextDecoder();
    return {
      code: out.code,
      stdout: decoder.decode(out.stdout),
      stderr: decoder.decode(out.stderr),
    };
  } finally {
    clearTimeout(timer);
  }
}

Deno.test("niceeval: a sample of malformed command lines through the real CLI exits 2", async () => {
  await withTempDir(async (base) => {
    const fx = await fixture(base);
    const all = argvCases(SEED, fx.paths);
    // One case of each path family plus a few others: process start-up is the expensive part.
    // An argument cannot carry a NUL byte across exec: those cases stay in-process.
    const sample = ["junit-path", "record-path", "bad-integer", "long-string", "unknown-flag"]
      .map((family) =>
        all.find((c) =>
          c.family === family && c.valid === false && !c.args.join("").includes("\0")
        )!
      );
    const failures: string[] = [];
    for (const c of sample) {
      const problems = await runCase(fx, () => spawned(fx, c.args), c.valid);
      if (problems.length > 0) {
        failures.push(`seed ${SEED} case ${c.index} ${show(c.args)}: ${problems.join("; ")}`);
      }
    }
    assert.deepEqual(failures, []);
  });
});

Deno.test("niceeval list: a .env that is a named pipe exits 2 instead of waiting for a writer", async () => {
  await withTempDir(async (base) => {
    const fx = await fixture(base);
    await makeFifo(join(fx.project, ".env"));
    assert.deepEqual(await runCase(fx, () => spawned(fx, ["list"]), false), []);
  });
});
