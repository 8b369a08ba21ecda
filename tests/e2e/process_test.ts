/**
 * The process seam of a real `niceeval exp` (src/cli/process.ts): a reader that closes stdout,
 * the launcher watchdog and relayed-signal de-duplication (toolchain.md §10.5).
 */
import assert from "node:assert/strict";
import { SIGNAL_DEDUPE_MS } from "../../src/cli/signals.ts";
import { drain, ndjson, readUntil, tempProject } from "../_helpers/cli.ts";

Deno.test("niceeval exp: a reader that closes stdout early does not fail the run, which stores every result exits 0", async () => {
  await using p = await tempProject("slow_project");
  const child = p.spawn(["exp", "--json"]);
  const { rest } = await readUntil(child, (line) => line.includes('"type":"start"'));
  await rest.cancel(); // the read end goes away, as with `niceeval exp --json | head -1`
  const [status, stderr] = await Promise.all([
    child.status,
    new Response(child.stderr).text(),
  ]);
  assert.equal(status.code, 0, stderr);
  assert.doesNotMatch(stderr, /BrokenPipe|error/i);
  const rerun = await p.run(["exp", "--json"]);
  assert.equal(rerun.code, 0, rerun.stderr);
  const start = ndjson(rerun.stdout)[0]!;
  assert.deepEqual([start.reused, start.toRun], [6, 0]);
});

Deno.test("niceeval exp: with NICEEVAL_PARENT_PID naming its parent the run completes exits 0", async () => {
  await using p = await tempProject("slow_project");
  const result = await p.run(["exp", "--json"], { env: { NICEEVAL_PARENT_PID: String(Deno.pid) } });
  assert.equal(result.code, 0, result.stderr);
  assert.equal(ndjson(result.stdout).at(-1)!.completion, "completed");
});

Deno.test("niceeval exp: a child whose launcher is gone takes the SIGTERM path exits 130", async () => {
  await using p = await tempProject("slow_project");
  // Not this process: as if the launcher died and the child was re-parented.
  const gone = await p.run(["exp", "--json"], { env: { NICEEVAL_PARENT_PID: "999999999" } });
  assert.equal(gone.code, 130, gone.stderr);
  const receipt = ndjson(gone.stdout).at(-1)!;
  assert.deepEqual([receipt.type, receipt.completion], ["receipt", "interrupted"]);
});

/**
 * An experiment whose Attempts are slow and whose teardown takes `$TEARDOWN_MS`: a forced exit
 * has something to cut.
 */
const SLOW_TEARDOWN = `import { defineExperiment } from "niceeval";
import { scriptedAgent } from "niceeval/adapter";
export default defineExperiment({
  agent: scriptedAgent({ name: "s", script: [], fallback: { text: "done", delayMs: 5000 } }),
  teardown: () => new Promise((resolve) => setTimeout(resolve, Number(Deno.env.get("TEARDOWN_MS")))),
});
`;

/**
 * Sends SIGINT once the child runs an Attempt and again once the child reported the first (so the
 * two are delivered separately, never merged), at least `gapMs` after that report. Returns the
 * exit code and the receipt.
 */
async function doubleInterrupt(env: Record<string, string>, gapMs = 0) {
  await using p = await tempProject("slow_project");
  await p.write("experiments/slow.ts", SLOW_TEARDOWN);
  const child = p.spawn(["exp", "--json"], { env });
  const { rest } = await readUntil(child, (line) => line.includes('"attempt_start"'));
  child.kill("SIGINT");
  let seen = "";
  while (!seen.includes('"type":"interrupted"')) {
    const { value, done } = await rest.read();
    if (done) throw new Error(`no interrupted event in:\n${seen}`);
    seen += value;
  }
  // A lower bound on the gap between the two signals: a loaded machine only makes it longer.
  if (gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
  child.kill("SIGINT");
  const [tail, status] = await Promise.all([drain(rest), child.status]);
  await child.stderr.cancel();
  return { code: status.code, receipt: ndjson(seen + tail).at(-1)! };
}

Deno.test("niceeval exp: without a launcher a second SIGINT forces the exit during a teardown that would not end exits 130", async () => {
  // The teardown outlasts any test: only the forced exit (INT-2) ends the run before it, however
  // long the second signal took.
  const { code, receipt } = await doubleInterrupt({ TEARDOWN_MS: "600000" });
  assert.equal(code, 130);
  // Forced: the teardown was cut short and nothing was published.
  assert.deepEqual([receipt.completion, receipt.runIds], ["interrupted", []]);
});

Deno.test("niceeval exp: under a launcher a second SIGINT after the de-duplication window forces the exit exits 130", async () => {
  // The window itself (a relayed repeat within 250 ms counts once) is tested on fake time in
  // tests/cli/signals_test.ts; this shows the launcher path still counts a later repeat.
  const { code, receipt } = await doubleInterrupt(
    { NICEEVAL_PARENT_PID: String(Deno.pid), TEARDOWN_MS: "600000" },
    2 * SIGNAL_DEDUPE_MS,
  );
  assert.equal(code, 130);
  assert.deepEqual([receipt.completion, receipt.runIds], ["interrupted", []]);
});
