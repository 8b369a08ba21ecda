/**
 * What a `niceeval view` report of 10,000 Attempts costs (issue 17 targets: built in under 3 s,
 * under 15 MB, opens in under 2 s). One untimed `niceeval exp` of N no-op evals at concurrency
 * 100 writes the Record; then `niceeval view --out <file>` runs three times as a subprocess, each
 * timed from spawn to exit (process start and project discovery included), and the report's size
 * is read. When Chromium is available, the report is opened from its `file:` URL three times in
 * one headless browser (started, and warmed with a blank page, before timing), each time in a new
 * page, timed from the start of the navigation to the
 * rendered overview (`body[data-ready="overview"]`), then to the rendered matrix. Figures:
 * median (min–max). Quick mode: 50 Attempts, one build, one open.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { childEnv, MOD, ndjson, tempProject } from "../tests/_helpers/cli.ts";
import { browserAvailable, launchBrowser } from "../tests/_helpers/browser.ts";
import { type Benchmark, type BenchOptions, count, type Figures, spread } from "./_harness.ts";
import { measureChild, noopProjectFiles, removeAtUnload } from "./_noop_project.ts";

const FULL_N = 10_000;
const QUICK_N = 50;
const FULL_REPEATS = 3;
const BUILD_TARGET_MS = 3_000;
const SIZE_TARGET_BYTES = 15_000_000;
const OPEN_TARGET_MS = 2_000;

async function cli(dir: string, stateDir: string, args: string[]) {
  const started = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--frozen", MOD, ...args],
    cwd: dir,
    env: childEnv(stateDir),
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const measured = await measureChild(child, started);
  if (measured.output.code !== 0) {
    const stderr = new TextDecoder().decode(measured.output.stderr);
    throw new Error(`niceeval ${args.join(" ")} exited ${measured.output.code}: ${stderr}`);
  }
  return measured;
}

async function run({ quick }: BenchOptions): Promise<Figures> {
  const N = quick ? QUICK_N : FULL_N;
  const repeats = quick ? 1 : FULL_REPEATS;
  const project = await tempProject(null);
  removeAtUnload(project.dir, project.stateDir);
  for (const [path, text] of Object.entries(noopProjectFiles(N))) await project.write(path, text);
  const run = await cli(project.dir, project.stateDir, [
    "exp",
    "--json",
    "--max-concurrency",
    "100",
  ]);
  const receipt = ndjson(new TextDecoder().decode(run.output.stdout))
    .find((e) => e.type === "receipt");
  if (!receipt) throw new Error("niceeval exp printed no receipt");
  const out = join(project.dir, "report.html");
  const builds: number[] = [];
  for (let i = 0; i < repeats; i++) {
    builds.push((await cli(project.dir, project.stateDir, ["view", "--out", out])).wallMs);
  }
  const bytes = (await Deno.stat(out)).size;
  const rows = [
    [
      "build (`niceeval view --out`, spawn to exit)",
      `${spread(builds)} ms`,
      `< ${BUILD_TARGET_MS} ms`,
    ],
    ["file size", `${(bytes / 1_000_000).toFixed(2)} MB`, `< ${SIZE_TARGET_BYTES / 1_000_000} MB`],
  ];
  if (await browserAvailable()) {
    const { overview, matrix } = await openTimes(pathToFileURL(out).href, repeats);
    rows.push(
      ["open to the rendered overview", `${spread(overview)} ms`, `< ${OPEN_TARGET_MS} ms`],
      ["then to the rendered matrix", `${spread(matrix)} ms`, ""],
    );
  } else rows.push(["open", "n/a (no browser)", `< ${OPEN_TARGET_MS} ms`]);
  return {
    tables: [{
      title: `A report of ${count(N)} Attempts (${repeats} runs each)`,
      columns: ["step", "figure", "target (issue 17)"],
      rows,
    }],
  };
}

/** Navigation start → rendered overview, then → rendered matrix, in fresh pages. */
async function openTimes(
  url: string,
  repeats: number,
): Promise<{ overview: number[]; matrix: number[] }> {
  await using browser = await launchBrowser();
  // The browser's own start (its first renderer) is not the report's cost: one blank page first.
  await (await browser.open("about:blank", { width: 1280, height: 800 })).page.close();
  const overview: number[] = [];
  const matrix: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const started = performance.now();
    const view = await browser.open(url, { width: 1280, height: 800 });
    await view.waitReady("overview");
    overview.push(performance.now() - started);
    const shown = performance.now();
    await view.navigate("#/matrix", "matrix");
    matrix.push(performance.now() - shown);
    view.assertClean();
    await view.page.close();
  }
  return { overview, matrix };
}

/** The view benchmark. */
export const benchmark: Benchmark = {
  name: "view",
  title: "View: building and opening a report",
  about: "One untimed `niceeval exp` of N no-op evals at concurrency 100 writes the Record; " +
    "`niceeval view --out <file>` then builds the report, and a headless browser (when one is " +
    "available) opens it from its `file:` URL in a fresh page each time.",
  run,
};
