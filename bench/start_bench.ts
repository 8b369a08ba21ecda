/**
 * Start-up cost (issue 20): `niceeval --version` and `niceeval --help` against an empty
 * `deno run` of the same flags, in the same run, the three interleaved so load drifts hit all.
 */
import { childEnv } from "../tests/_helpers/cli.ts";
import { runCli } from "./_child.ts";
import { type Benchmark, type BenchOptions, type Figures, median, spread } from "./_harness.ts";

const EMPTY = new URL("./_empty.ts", import.meta.url).pathname;
const FULL_REPEATS = 15;
const QUICK_REPEATS = 2;

/**
 * Wall time of `deno run -A --frozen <empty module>`, spawn to exit. The module sits beside the
 * CLI, in the repository, and runs from the same directory, so both resolve the same config.
 */
async function emptyRun(dir: string, stateDir: string): Promise<number> {
  const started = performance.now();
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--frozen", EMPTY],
    cwd: dir,
    env: childEnv(stateDir),
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  const ms = performance.now() - started;
  if (out.code !== 0) throw new Error(`empty deno run exited ${out.code}`);
  return ms;
}

async function cliRun(dir: string, stateDir: string, flag: string): Promise<number> {
  const m = await runCli({ dir, stateDir }, [flag], { probe: false });
  if (m.code !== 0) throw new Error(`niceeval ${flag} exited ${m.code}: ${m.stderrTail}`);
  return m.wallMs;
}

async function run({ quick }: BenchOptions): Promise<Figures> {
  const dir = await Deno.makeTempDir({ prefix: "niceeval-start-bench-" });
  const stateDir = await Deno.makeTempDir({ prefix: "niceeval-start-state-" });
  try {
    const empty: number[] = [];
    const version: number[] = [];
    const help: number[] = [];
    // One untimed round warms the module cache and the page cache.
    await emptyRun(dir, stateDir);
    await cliRun(dir, stateDir, "--version");
    await cliRun(dir, stateDir, "--help");
    for (let i = 0; i < (quick ? QUICK_REPEATS : FULL_REPEATS); i++) {
      empty.push(await emptyRun(dir, stateDir));
      version.push(await cliRun(dir, stateDir, "--version"));
      help.push(await cliRun(dir, stateDir, "--help"));
    }
    const ratio = (values: number[]) => (median(values) / median(empty)).toFixed(2);
    return {
      tables: [{
        title: `Wall time from spawn to exit, ms (${empty.length} runs each)`,
        columns: ["command", "wall ms", "÷ empty deno run"],
        rows: [
          ["empty `deno run -A --frozen`", spread(empty), "1.00"],
          ["`niceeval --version`", spread(version), ratio(version)],
          ["`niceeval --help`", spread(help), ratio(help)],
        ],
      }],
      notes: ["Target (issue 20): `--version` ≤ 1.5 × an empty `deno run` of the same run."],
    };
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(stateDir, { recursive: true });
  }
}

/** The start benchmark. */
export const benchmark: Benchmark = {
  name: "start",
  title: "Start: --version and --help",
  about: "`deno run -A --frozen mod.ts --version` (and `--help`) in an empty directory, against " +
    "`deno run -A --frozen bench/_empty.ts` (an empty module beside the CLI); one untimed warm-up round, then the three " +
    "commands in turn.",
  run,
};
