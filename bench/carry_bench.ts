/**
 * Planning a fully carried rerun (issue 4: under 1 s for 1,000 Attempts). Two cases, each measured
 * once and printed as one line:
 *
 * - in process: a Record with one published Run of 1,000 passed Attempts, written through the
 *   real `RecordWriter` in a temp dir; measures `loadCandidates` + `carryDecider` over the 1,000
 *   slots (a fresh `RecordReader`, so every file is read and validated);
 * - CLI: a generated 1,000-eval project run once with `niceeval exp --json` (the Record it writes
 *   is the source), then `niceeval exp --dry --json` as a subprocess, wall time including process
 *   start and the child's peak RSS. The dry run must report every slot reused.
 *
 * `deno bench` calls a case more than once; each case measures on its first call only.
 * `NICEEVAL_BENCH_CLI=skip` skips the CLI case; `NICEEVAL_BENCH_CARRY_N=<n>` changes the 1,000.
 */
import {
  carryDecider,
  type CurrentIdentity,
  loadCandidates,
  RecordReader,
} from "../src/record/mod.ts";
import { CONFIG_A, digestFor, INPUT_1, uuidOf, writeRun } from "../tests/_fakes/record.ts";
import { result } from "../tests/_fakes/results.ts";
import { tempProject } from "../tests/_helpers/cli.ts";
import { measureChild, noopProjectFiles } from "./_noop_project.ts";

const N = Number(Deno.env.get("NICEEVAL_BENCH_CARRY_N") ?? 1_000);
const T0 = Date.UTC(2026, 10, 29, 10, 0, 0);

function report(line: string): void {
  // deno-lint-ignore no-console -- a bench reports its figures on stdout
  console.log(line);
}

async function inProcess(): Promise<void> {
  const root = await Deno.makeTempDir({ prefix: "niceeval-carry-bench-" });
  try {
    const evalIds = Array.from({ length: N }, (_, i) => `noop/${i}`);
    const written = await writeRun(root, {
      runId: uuidOf("run-source"),
      experimentId: "exp",
      startedAt: T0,
      slots: evalIds.map((evalId, i) => ({
        evalId,
        ordinal: 0,
        fill: { kind: "executed", result: result({ attemptId: uuidOf(`attempt-${i}`), evalId }) },
      })),
    });
    if (written.length !== 1) throw new Error("the source Run was not published");
    const current: CurrentIdentity = {
      configHash: () => CONFIG_A,
      inputFingerprint: () => INPUT_1,
      digest: () => digestFor(CONFIG_A, INPUT_1),
    };
    const started = performance.now();
    const candidates = await loadCandidates(
      new RecordReader(root),
      evalIds.map((evalId) => ({ experimentId: "exp", evalId })),
    );
    const decide = carryDecider(candidates, current, "none");
    let carried = 0;
    for (const evalId of evalIds) {
      const decision = decide({ experimentId: "exp", evalId, ordinal: 0, timeoutMs: null });
      if (decision.action === "carry") carried++;
    }
    const ms = performance.now() - started;
    if (carried !== N) throw new Error(`only ${carried} of ${N} slots carried`);
    report(
      `carry N=${N} in process: ${ms.toFixed(0)} ms · ${(ms / N).toFixed(3)} ms/slot`,
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

async function cli(): Promise<void> {
  await using project = await tempProject(null);
  for (const [path, text] of Object.entries(noopProjectFiles(N))) await project.write(path, text);
  const first = await project.run(["exp", "--json", "--max-concurrency", "100"]);
  if (first.code !== 0) throw new Error(`niceeval exp exited ${first.code}: ${first.stderr}`);
  const started = performance.now();
  const { output, wallMs: ms, peakKiB } = await measureChild(
    project.spawn(["exp", "--dry", "--json"]),
    started,
  );
  if (output.code !== 0) throw new Error(`niceeval exp --dry exited ${output.code}`);
  const dry = JSON.parse(new TextDecoder().decode(output.stdout));
  if (dry.reused !== N) throw new Error(`exp --dry reused ${dry.reused} of ${N} slots`);
  report(
    `carry N=${N} cli exp --dry --json: wall ${(ms / 1000).toFixed(2)} s · peak RSS ${
      (peakKiB / 1024).toFixed(0)
    } MB`,
  );
}

let measuredInProcess = false;
Deno.bench({
  name: `plan a fully carried rerun of ${N} Attempts (loadCandidates + carryDecider)`,
  group: "carry",
  n: 1,
  warmup: 0,
  async fn() {
    if (measuredInProcess) return;
    measuredInProcess = true;
    await inProcess();
  },
});

let measuredCli = false;
Deno.bench({
  name: `niceeval exp --dry --json, ${N} evals all carried`,
  group: "carry",
  n: 1,
  warmup: 0,
  ignore: Deno.env.get("NICEEVAL_BENCH_CLI") === "skip",
  async fn() {
    if (measuredCli) return;
    measuredCli = true;
    await cli();
  },
});
