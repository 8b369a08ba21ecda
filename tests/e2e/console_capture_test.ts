/**
 * `console.*` of user code (ERR-4, authoring.md §7.1 rule 2, docs/console_output.md): output
 * made during an Attempt goes to that Attempt's log (the `logs` of its events document in the
 * Run's `records.log`, `show @locator`), never to stdout; output outside any Attempt goes to
 * stderr under `--json`.
 */
import assert from "node:assert/strict";
import { ndjson, tempProject } from "../_helpers/cli.ts";
import { readRunFiles } from "../_helpers/record_files.ts";

type Json = Record<string, unknown>;

Deno.test("niceeval exp: console output of a test body stays out of --json stdout and lands in its Attempt's log exits 0", async (t) => {
  await using p = await tempProject("console_project");
  const r = await p.run(["exp", "--json"]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  let events: Json[] = [];

  await t.step("stdout is NDJSON only; the hook's output went to stderr", () => {
    events = ndjson(r.stdout); // throws on the first line that is not JSON
    assert.ok(events.every((e) => typeof e.type === "string"), r.stdout);
    assert.equal(r.stderr, "experiment setup says hi\n");
  });

  const start = events[0]!;
  const root = start.recordRoot as string;
  const runId = (start.runs as { runId: string }[])[0]!.runId;
  const attempt = (evalId: string) =>
    events.find((e) => e.type === "attempt_start" && e.evalId === evalId)!;

  await t.step("each Attempt's events document holds exactly its own console output", async () => {
    const run = await readRunFiles(root, runId);
    const logsOf = (evalId: string) => {
      const doc = run.attempts.get(`${attempt(evalId).attemptId}`)!.events;
      return (doc.logs as { text: string }[]).map((l) => l.text);
    };
    assert.deepEqual((await logsOf("chatty")).sort(), [
      "body error line",
      "body says { step: 1 }",
      "branch 1",
      "branch 2",
    ]);
    assert.deepEqual(await logsOf("quiet"), []);
  });

  await t.step("show @locator prints the Attempt's logs", async () => {
    const shown = await p.run(["show", attempt("chatty").locator as string]);
    assert.equal(shown.code, 0, shown.stderr);
    const lines = shown.stdout.split("\n");
    const at = lines.indexOf("Logs");
    assert.ok(at > 0, shown.stdout);
    assert.deepEqual(lines.slice(at + 1, at + 3), ["  body says { step: 1 }", "  body error line"]);
  });
});

Deno.test("niceeval exp: console output of a test body never reaches human stdout exits 0", async () => {
  await using p = await tempProject("console_project");
  const r = await p.run(["exp"]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.ok(!r.stdout.includes("body says") && !r.stderr.includes("body"), r.stdout + r.stderr);
  // Outside any Attempt, console output keeps its usual stream.
  assert.ok(r.stdout.includes("experiment setup says hi\n"), r.stdout);
});

Deno.test("niceeval exp: a stray rejection or uncaught error of a test body is reported and the run goes on exits 0", async () => {
  await using p = await tempProject("console_project");
  await p.write(
    "evals/stray.eval.ts",
    `import { defineEval } from "niceeval";
import { includes } from "niceeval/expect";

export default defineEval({
  async test(t) {
    void Promise.reject(new Error("stray rejection ABC123"));
    let fired!: () => void;
    const thrown = new Promise<void>((resolve) => (fired = resolve));
    setTimeout(() => {
      queueMicrotask(fired);
      throw new Error("stray throw DEF456");
    }, 0);
    await thrown;
    await t.send("Anything");
    t.check(t.reply, includes("Hello"));
  },
});
`,
  );
  const r = await p.run(["exp", "--json"]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const events = ndjson(r.stdout); // throws on the first line that is not JSON
  const ended = events.filter((e) => e.type === "attempt_end");
  assert.deepEqual(ended.map((e) => e.verdict), ["passed", "passed", "passed"]);
  const start = events[0]!;
  const runId = (start.runs as { runId: string }[])[0]!.runId;
  const run = await readRunFiles(start.recordRoot as string, runId);
  assert.equal(run.published, true);
  // Where the runtime reports them decides the stream: the Attempt's log or stderr, never stdout.
  const stray = ended.find((e) => e.evalId === "stray")!;
  const logs = JSON.stringify(run.attempts.get(`${stray.attemptId}`)!.events);
  for (const text of ["stray rejection ABC123", "stray throw DEF456"]) {
    assert.ok(logs.includes(text) || r.stderr.includes(text), `${text}: ${logs}\n${r.stderr}`);
    assert.ok(!r.stdout.includes(text), r.stdout);
  }
});
