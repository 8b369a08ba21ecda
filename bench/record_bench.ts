/**
 * What the Record's writes cost a real `niceeval exp --json --max-concurrency C` subprocess, for
 * N no-op evals (one `scriptedAgent` turn each) at 200 × concurrency 1 and 10,000 × concurrency
 * 100. Each workload runs twice, timed: once with the Record in the temporary project (a
 * disk-backed file system; when the temporary directory is a tmpfs, the Record goes to a fresh
 * directory under the repository's ignored `.niceeval/` instead) and once with `--record` in a
 * fresh directory under `/dev/shm`, so one line shows wall time including process start on disk,
 * on tmpfs and their ratio (the cost the disk adds). A third, untimed run on disk counts the
 * child's fsync and fdatasync calls per Attempt by tracing it with `strace -f -c` (or prints
 * "n/a" when `strace` is missing or cannot trace); the line ends with the number of files under
 * the disk Run's `runs/<RunId>/`. Every run must exit 0 with every Attempt passed in its NDJSON.
 * Before the first workload one untimed 1-Attempt run warms the module and page caches, so the
 * first timed run does not pay for them.
 *
 * Quick mode: 20 × concurrency 1 only.
 *
 * The temporary projects and Records are removed when the benchmark process ends, not between
 * runs: on some file systems creating files is slower for minutes after many files were deleted,
 * and the next run would measure the previous run's cleanup.
 */
import { join, resolve } from "node:path";
import {
  childEnv,
  MOD,
  ndjson,
  REPO,
  type TempProject,
  tempProject,
} from "../tests/_helpers/cli.ts";
import type { Benchmark, BenchOptions, Figures } from "./_harness.ts";
import { measureChild, noopProjectFiles, removeAtUnload } from "./_noop_project.ts";

const WORKLOADS = [{ n: 200, cap: 1 }, { n: 10_000, cap: 100 }] as const;
const QUICK_WORKLOADS = [{ n: 20, cap: 1 }] as const;
/** Where the tmpfs runs put their Record. */
const TMPFS_DIR = "/dev/shm";
/** File systems held in memory: a "disk" Record on one of these would measure nothing. */
const MEMORY_FS = new Set(["tmpfs", "ramfs"]);
const POLL_MS = 25;

/** Decodes the octal escapes (`\040` for a space) of a mount point in `/proc/self/mountinfo`. */
function unescapeMount(field: string): string {
  return field.replace(
    /\\([0-7]{3})/g,
    (_, code: string) => String.fromCharCode(parseInt(code, 8)),
  );
}

/** Type of the file system holding `path` (longest matching mount point), or "unknown". */
async function fileSystemOf(path: string): Promise<string> {
  let mountinfo: string;
  try {
    mountinfo = await Deno.readTextFile("/proc/self/mountinfo");
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return "unknown";
    throw error;
  }
  const real = await Deno.realPath(path);
  let best = { mount: "", type: "unknown" };
  for (const line of mountinfo.split("\n")) {
    const [left, right] = line.split(" - ");
    const mount = left === undefined ? undefined : unescapeMount(left.split(" ")[4] ?? "");
    const type = right?.split(" ")[0];
    if (mount === undefined || type === undefined) continue;
    const inside = real === mount || real.startsWith(mount === "/" ? "/" : `${mount}/`);
    if (inside && mount.length >= best.mount.length) best = { mount, type };
  }
  return best.type;
}

/** A new no-op project with `n` evals, removed at unload. */
async function noopProject(n: number): Promise<TempProject> {
  const project = await tempProject(null);
  removeAtUnload(project.dir, project.stateDir);
  for (const [path, text] of Object.entries(noopProjectFiles(n))) await project.write(path, text);
  return project;
}

/** A fresh directory under `parent`, removed at unload. */
async function freshDir(parent: string, prefix: string): Promise<string> {
  const dir = await Deno.makeTempDir({ dir: parent, prefix });
  removeAtUnload(dir);
  return dir;
}

/**
 * The `--record` arguments of a disk run in `project`: none when the project's own default
 * Record is on a disk, else a fresh directory under the repository's ignored `.niceeval/`.
 */
async function diskRecordArgs(project: TempProject): Promise<string[]> {
  if (!MEMORY_FS.has(await fileSystemOf(project.dir))) return [];
  const parent = join(REPO, ".niceeval");
  await Deno.mkdir(parent, { recursive: true });
  const dir = await freshDir(parent, "record-bench-");
  const type = await fileSystemOf(dir);
  if (MEMORY_FS.has(type)) {
    throw new Error(`Cannot find a disk for the Record: "${dir}" is on ${type}`);
  }
  return ["--record", join(dir, "record")];
}

/** The `--record` arguments of a tmpfs run. */
async function tmpfsRecordArgs(): Promise<string[]> {
  const type = await fileSystemOf(TMPFS_DIR);
  if (!MEMORY_FS.has(type)) throw new Error(`Cannot use "${TMPFS_DIR}": it is on ${type}`);
  return ["--record", join(await freshDir(TMPFS_DIR, "niceeval-record-bench-"), "record")];
}

function expArgs(cap: number, recordArgs: readonly string[]): string[] {
  return ["exp", "--json", "--max-concurrency", String(cap), ...recordArgs];
}

/** Where one finished run left its Run. */
interface RunPlace {
  readonly recordRoot: string;
  readonly runId: string;
}

/** Checks that a run exited 0 and its NDJSON shows `n` passed Attempts; returns its Run. */
function checkRun(output: Deno.CommandOutput, n: number, cwd: string): RunPlace {
  const stdout = new TextDecoder().decode(output.stdout);
  if (output.code !== 0) {
    const stderr = new TextDecoder().decode(output.stderr);
    throw new Error(`niceeval exp exited ${output.code}: ${stderr.slice(-2_000)}`);
  }
  const events = ndjson(stdout);
  const ends = events.filter((event) => event.type === "attempt_end");
  const passed = ends.filter((event) => event.verdict === "passed").length;
  if (ends.length !== n || passed !== n) {
    throw new Error(`niceeval exp passed ${passed} of ${ends.length} Attempts, expected ${n}`);
  }
  const start = events.find((event) => event.type === "start");
  const runs = start?.runs as { runId: string }[] | undefined;
  if (typeof start?.recordRoot !== "string" || runs?.length !== 1) {
    throw new Error(`niceeval exp did not report one Run and its Record root`);
  }
  return { recordRoot: resolve(cwd, start.recordRoot), runId: runs[0]!.runId };
}

/** Number of files (anything but directories) below `dir`, recursively. */
async function countFiles(dir: string): Promise<number> {
  let count = 0;
  for await (const entry of Deno.readDir(dir)) {
    count += entry.isDirectory ? await countFiles(join(dir, entry.name)) : 1;
  }
  return count;
}

/** One timed run of `n` Attempts at `cap`; returns its wall time and its Run. */
async function timedRun(
  n: number,
  cap: number,
  record: "disk" | "tmpfs",
): Promise<{ wallMs: number; place: RunPlace }> {
  const project = await noopProject(n);
  const recordArgs = record === "disk" ? await diskRecordArgs(project) : await tmpfsRecordArgs();
  const started = performance.now();
  const child = project.spawn(expArgs(cap, recordArgs));
  const { output, wallMs } = await measureChild(child, started, POLL_MS);
  return { wallMs, place: checkRun(output, n, project.dir) };
}

/** Sum of the fsync and fdatasync calls in an `strace -c` summary, or null without a table. */
function syncCalls(summary: string): number | null {
  if (!summary.includes("% time")) return null;
  let calls = 0;
  for (const line of summary.split("\n")) {
    const fields = line.trim().split(/\s+/);
    const name = fields.at(-1);
    if (name === "fsync" || name === "fdatasync") calls += Number(fields[3]);
  }
  return calls;
}

/**
 * fsync + fdatasync calls per Attempt of one untimed disk run of `n` Attempts at `cap`, traced
 * with `strace -f -c`; null when `strace` is missing or cannot trace.
 */
async function syncsPerAttempt(n: number, cap: number): Promise<number | null> {
  const project = await noopProject(n);
  const summaryFile = join(project.stateDir, "strace-summary.txt");
  const args = [
    ...["-f", "-c", "--seccomp-bpf", "-e", "trace=fsync,fdatasync", "-o", summaryFile],
    ...[Deno.execPath(), "run", "-A", "--frozen", MOD],
    ...expArgs(cap, await diskRecordArgs(project)),
  ];
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command("strace", {
      args,
      cwd: project.dir,
      env: childEnv(project.stateDir),
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
  const summary = await Deno.readTextFile(summaryFile).catch(() => "");
  const calls = syncCalls(summary);
  if (calls === null) return null;
  checkRun(output, n, project.dir);
  return calls / n;
}

/** One untimed 1-Attempt run, so the first timed run finds warm module and page caches. */
let warmedUp: Promise<void> | undefined;
function warmUp(): Promise<void> {
  warmedUp ??= timedRun(1, 1, "tmpfs").then(() => undefined);
  return warmedUp;
}

function ms(value: number): string {
  return value.toFixed(0);
}

async function measure(n: number, cap: number): Promise<string[]> {
  await warmUp();
  const disk = await timedRun(n, cap, "disk");
  const tmpfs = await timedRun(n, cap, "tmpfs");
  const files = await countFiles(join(disk.place.recordRoot, "runs", disk.place.runId));
  const diskFs = await fileSystemOf(disk.place.recordRoot);
  const syncs = await syncsPerAttempt(n, cap);
  return [
    n.toLocaleString("en-US"),
    String(cap),
    `${ms(disk.wallMs)} (${diskFs})`,
    ms(tmpfs.wallMs),
    (disk.wallMs / tmpfs.wallMs).toFixed(2),
    syncs === null ? "n/a" : syncs.toFixed(3),
    String(files),
  ];
}

async function run({ quick }: BenchOptions): Promise<Figures> {
  const rows: string[][] = [];
  for (const { n, cap } of quick ? QUICK_WORKLOADS : WORKLOADS) rows.push(await measure(n, cap));
  return {
    tables: [{
      title: "niceeval exp --json, no-op Attempts, Record on disk and on tmpfs (one run each)",
      columns: [
        "N",
        "C",
        "wall disk ms",
        "wall tmpfs ms",
        "disk ÷ tmpfs",
        "fsync+fdatasync/Attempt",
        "files in runs/<RunId>/",
      ],
      rows,
    }],
  };
}

/** The record benchmark. */
export const benchmark: Benchmark = {
  name: "record",
  title: "Record: what the writes cost",
  about: "Each workload runs twice, timed from spawn to exit: with the Record on a disk-backed " +
    "file system and with `--record` on tmpfs; a third, untimed run counts the sync calls per " +
    "Attempt (n/a when the system call tracer is missing). One untimed 1-Attempt run warms the " +
    "caches first.",
  run,
};
