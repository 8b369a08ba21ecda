/**
 * Discovery and planning at scale (issue 20): `niceeval list` and `niceeval exp --dry --json` on
 * generated projects of N eval files (one eval each).
 */
import { join } from "node:path";
import { tempProject } from "../tests/_helpers/cli.ts";
import { expectSuccess, runCli } from "./_child.ts";
import {
  type Benchmark,
  type BenchOptions,
  count,
  type Figures,
  median,
  megabytes,
  progress,
  spread,
} from "./_harness.ts";
import { noopProjectBase, removeAtUnload } from "./_noop_project.ts";

const FULL_SIZES = [1_000, 5_000];
const QUICK_SIZES = [20];
const REPEATS = 3;
/** A run slower than this is not repeated: the figure is clear and the suite stays short. */
const REPEAT_UNDER_MS = 20_000;
const FILES_PER_FOLDER = 100;

/** A project of `n` eval files in folders of {@link FILES_PER_FOLDER}. */
export function manyFilesProject(n: number): Record<string, string> {
  const files = noopProjectBase();
  for (let i = 0; i < n; i++) {
    const folder = `g${String(Math.floor(i / FILES_PER_FOLDER)).padStart(3, "0")}`;
    files[join("evals", folder, `e${i}.eval.ts`)] = [
      `import { defineEval } from "niceeval";`,
      `import { includes } from "niceeval/expect";`,
      `export default defineEval({`,
      `  async test(t) { await t.send("hi"); t.check(t.reply, includes("ok")); },`,
      `});`,
      ``,
    ].join("\n");
  }
  return files;
}

async function measure(
  n: number,
  args: string[],
  quick: boolean,
  env: Record<string, string> = {},
): Promise<string[]> {
  const project = await tempProject(null);
  removeAtUnload(project.dir, project.stateDir);
  for (const [path, text] of Object.entries(manyFilesProject(n))) await project.write(path, text);
  const command = `${Object.entries(env).map(([k, v]) => `${k}=${v} `).join("")}niceeval ${
    args.join(" ")
  }`;
  // One untimed run: the first load also fills Deno's caches (and the embedded loader's transform
  // cache) for the new files.
  expectSuccess(await runCli(project, args, { probe: false, env }), command);
  const wall: number[] = [];
  const cpu: number[] = [];
  const peak: number[] = [];
  for (let i = 0; i < (quick ? 1 : REPEATS); i++) {
    const m = await runCli(project, args, { env });
    expectSuccess(m, command);
    wall.push(m.wallMs / 1000);
    if (m.cpuMs !== null) cpu.push(m.cpuMs / 1000);
    peak.push(m.peakKiB);
    if (m.wallMs > REPEAT_UNDER_MS) break;
  }
  progress(`planning ${command} ${count(n)} files: ${median(wall).toFixed(2)} s`);
  return [
    `\`${command}\``,
    count(n),
    spread(wall, 2),
    spread(cpu, 2),
    megabytes(median(peak)),
    String(wall.length),
  ];
}

async function run({ quick }: BenchOptions): Promise<Figures> {
  const rows: string[][] = [];
  for (const n of quick ? QUICK_SIZES : FULL_SIZES) {
    rows.push(await measure(n, ["list"], quick));
    rows.push(await measure(n, ["exp", "--dry", "--json"], quick));
    // The loader of the compiled binary, with its transform cache warm.
    rows.push(await measure(n, ["list"], quick, { NICEEVAL_LOADER: "embedded" }));
  }
  return {
    tables: [{
      title: "N eval files, one eval each",
      columns: ["command", "eval files", "wall s", "CPU s", "peak RSS MB", "runs"],
      rows,
    }],
    notes: [
      "Targets (issue 20): `list` of 1,000 evals ≤ 0.8 s, of 5,000 ≤ 3 s (linear).",
      "`NICEEVAL_LOADER=embedded` is the loader of the compiled binary (docs/loader.md); its " +
      "transform cache is warm after the untimed run.",
      `Each case: one untimed run, then up to ${REPEATS} timed runs (one when a run takes over ` +
      `${REPEAT_UNDER_MS / 1000} s). The fully carried rerun is the \`carry\` benchmark.`,
    ],
  };
}

/** The planning benchmark. */
export const benchmark: Benchmark = {
  name: "planning",
  title: "Planning: list and exp --dry on many eval files",
  about: "A generated project of N eval files (folders of 100, one no-op eval each, one " +
    "scripted-agent experiment); `niceeval list` and `niceeval exp --dry --json` in it, wall " +
    "time from spawn to exit, the process's CPU time and peak RSS.",
  run,
};
