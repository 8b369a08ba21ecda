/**
 * End-to-end cost of `niceeval exp --json --max-concurrency C` as a subprocess, for N no-op evals
 * (one `scriptedAgent` turn each) with N = 200 and 10,000 and C = 1, 10, 100. Each case runs once
 * (`n: 1, warmup: 0`) and prints wall time including process start, time per Attempt and the
 * child's peak RSS (VmHWM from `/proc/<pid>/status`, polled while it runs).
 *
 * `deno bench` calls a case more than once even with `n: 1`; each case measures on its first call
 * and prints one line, later calls return at once, so only the printed figures count.
 *
 * `NICEEVAL_BENCH_CLI=skip` skips these cases; `NICEEVAL_BENCH_RECORD=<dir>` puts the Record root
 * there (for instance on a tmpfs) to separate scheduling from Record I/O.
 *
 * The temporary projects (and Records) are removed when the bench file unloads, not between
 * cases: on some file systems (ext4 without a journal) creating files is slower for minutes after
 * many files were deleted, and the next case would measure the previous case's cleanup.
 */
import { join } from "node:path";
import { type TempProject, tempProject } from "../tests/_helpers/cli.ts";
import { measureChild, noopProjectFiles, removeAtUnload } from "./_noop_project.ts";

const SIZES = [200, 10_000];
const CAPS = [1, 10, 100];
const POLL_MS = 25;

function keepUntilUnload(project: TempProject): void {
  removeAtUnload(project.dir, project.stateDir);
}

interface Measurement {
  readonly wallMs: number;
  readonly peakKiB: number;
  readonly code: number;
}

async function measure(n: number, cap: number): Promise<Measurement> {
  const project = await tempProject(null);
  keepUntilUnload(project);
  for (const [path, text] of Object.entries(noopProjectFiles(n))) await project.write(path, text);
  const record = Deno.env.get("NICEEVAL_BENCH_RECORD");
  const recordArgs = record ? ["--record", join(record, `n${n}-c${cap}`)] : [];
  const started = performance.now();
  const child = project.spawn(["exp", "--json", "--max-concurrency", String(cap), ...recordArgs]);
  const { output, wallMs, peakKiB } = await measureChild(child, started, POLL_MS);
  if (record) removeAtUnload(join(record, `n${n}-c${cap}`));
  return { wallMs, peakKiB, code: output.code };
}

const skip = Deno.env.get("NICEEVAL_BENCH_CLI") === "skip";
for (const n of SIZES) {
  for (const cap of CAPS) {
    let measured = false;
    Deno.bench({
      name: `niceeval exp ${n} no-op Attempts × concurrency ${cap}`,
      group: `cli ${n}`,
      n: 1,
      warmup: 0,
      ignore: skip,
      async fn() {
        if (measured) return;
        measured = true;
        const m = await measure(n, cap);
        if (m.code !== 0) throw new Error(`niceeval exp exited ${m.code}`);
        const seconds = (m.wallMs / 1000).toFixed(2);
        const perAttempt = (m.wallMs / n).toFixed(2);
        const rss = (m.peakKiB / 1024).toFixed(0);
        // deno-lint-ignore no-console -- a bench reports its figures on stdout
        console.log(
          `cli N=${n} C=${cap}: wall ${seconds} s · ${perAttempt} ms/Attempt · peak RSS ${rss} MB`,
        );
      },
    });
  }
}
