/**
 * `niceeval show` on the real CLI (issue 17, item 3): an experiment that never ran says so, the
 * project scope names the Runs its results come from and each eval's duration, tokens and cost,
 * `--run` adds those columns per slot, and `--runs` lists the published Runs newest first.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ndjson, type TempProject, tempProject } from "../_helpers/cli.ts";
import { LOG_NAME } from "../../src/record/documents.ts";
import { frame, scanLog } from "../../src/record/log.ts";

type Json = Record<string, unknown>;

/** Prices `model-a` so that a turn of 1000 input and 200 output tokens costs $0.15. */
const CONFIG = `import { defineConfig } from "niceeval";

export default defineConfig({
  maxConcurrency: 2,
  pricing: { "model-a": { inputPerMTok: 100, outputPerMTok: 250 } },
});
`;

/** The base experiment of carry_project, its one turn reporting 1200 tokens. */
const BASE = `import { defineExperiment } from "niceeval";
import { scriptedAgent } from "niceeval/adapter";

export default defineExperiment({
  agent: scriptedAgent({
    name: "base",
    script: [],
    fallback: { text: "Hello!", usage: { inputTokens: 1000, outputTokens: 200 } },
  }),
  model: "model-a",
  attempts: 2,
});
`;

/** The other experiment of carry_project, failing both evals and reporting no usage. */
const OTHER = `import { defineExperiment } from "niceeval";
import { scriptedAgent } from "niceeval/adapter";

export default defineExperiment({
  agent: scriptedAgent({ name: "other", script: [], fallback: { text: "Bye" } }),
});
`;

/** A duration as `formatDuration` writes it. */
const DURATION = String.raw`(?:\d+\.\ds|\d+s|\d+m \d\ds|\d+h \d\dm)`;
/** A date of `--runs`: UTC to the minute. */
const DATE = String.raw`\d{4}-\d\d-\d\d \d\d:\d\d`;

/** Runs `exp <args> --json`, expecting `code`; returns the RunId of its one experiment. */
async function exp(p: TempProject, args: string[], code = 0): Promise<string> {
  const r = await p.run(["exp", ...args, "--json"]);
  assert.equal(r.code, code, r.stdout + r.stderr);
  const runs = ndjson(r.stdout)[0]!.runs as Json[];
  assert.equal(runs.length, 1);
  return runs[0]!.runId as string;
}

/** `show <args>`, which must exit 0 with nothing on stderr. */
async function show(p: TempProject, args: string[]): Promise<string[]> {
  const r = await p.run(["show", ...args]);
  assert.deepEqual([r.code, r.stderr], [0, ""], r.stdout);
  return r.stdout.trimEnd().split("\n");
}

async function showJson(p: TempProject, args: string[]): Promise<Json> {
  return JSON.parse((await show(p, [...args, "--json"])).join("\n")) as Json;
}

Deno.test("niceeval show: before any run every experiment says no results yet, and --runs lists no Run exits 0", async (t) => {
  await using p = await tempProject("carry_project");
  await t.step("project scope: what to run instead of 0% passed", async () => {
    assert.deepEqual(await show(p, []), [
      "boxed         no results yet — run niceeval exp boxed",
      "direct/base   no results yet — run niceeval exp direct/base",
      "direct/other  no results yet — run niceeval exp direct/other",
    ]);
    const doc = await showJson(p, []);
    assert.deepEqual(doc.experiments, [
      { experimentId: "boxed", runIds: [], results: 0 },
      { experimentId: "direct/base", runIds: [], results: 0 },
      { experimentId: "direct/other", runIds: [], results: 0 },
    ]);
    assert.ok((doc.rows as Json[]).every((row) => row.attempt === null && row.reason === "new"));
  });
  await t.step("--runs: nothing published yet", async () => {
    assert.deepEqual(await show(p, ["--runs"]), ["no published runs yet — run niceeval exp"]);
    const doc = await showJson(p, ["--runs"]);
    assert.deepEqual([doc.scope, doc.rows], ["run-list", []]);
  });
});

Deno.test("niceeval show: the project scope names its source Runs and each eval's duration, tokens and cost; --runs lists Runs newest first exits 0", async (t) => {
  await using p = await tempProject("carry_project");
  await p.write("niceeval.config.ts", CONFIG);
  await p.write("experiments/direct/base.ts", BASE);
  await p.write("experiments/direct/other.ts", OTHER);
  const helperRun = await exp(p, ["direct/base", "uses_helper"]);
  const standaloneRun = await exp(p, ["direct/base", "standalone"]);
  const otherRun = await exp(p, ["direct/other"], 1);
  const direct = ["--experiment", "direct/base", "--experiment", "direct/other"];

  await t.step("project scope: measures per eval, then the Runs newest first", async () => {
    const lines = await show(p, direct);
    const base = (id: string) =>
      new RegExp(`^  ${id} +2/2 passed {13}${DURATION}  2\\.4k tok  ~\\$0\\.30  @[0-9A-Z]{13}$`);
    const other = (id: string) =>
      new RegExp(`^  ${id} +0/1 passed · 1 failed  ${DURATION} {9}— {7}—  @[0-9A-Z]{13}$`);
    assert.equal(lines[0], "direct/base   4/4 passed (100%)");
    assert.match(lines[1]!, base("standalone"));
    assert.match(lines[2]!, base("uses_helper"));
    assert.equal(lines[3], "direct/other  0/2 passed (0%)");
    assert.match(lines[4]!, other("standalone"));
    assert.match(lines[5]!, other("uses_helper"));
    // Every eval line puts its locator in the same column.
    assert.equal(new Set(lines.filter((l) => l.includes("@")).map((l) => l.indexOf("@"))).size, 1);
    assert.deepEqual(lines.slice(6), [
      "Runs",
      `  direct/base   ${standaloneRun}`,
      `                ${helperRun}`,
      `  direct/other  ${otherRun}`,
    ]);
  });

  await t.step(
    "project scope --json: runIds per experiment, usage and tokens per row",
    async () => {
      const doc = await showJson(p, direct);
      assert.deepEqual(doc.experiments, [
        { experimentId: "direct/base", runIds: [standaloneRun, helperRun], results: 4 },
        { experimentId: "direct/other", runIds: [otherRun], results: 2 },
      ]);
      for (const row of doc.rows as Json[]) {
        const a = row.attempt as Json;
        const usage = a.usage as Json | null;
        const measures = [usage?.inputTokens, usage?.outputTokens, a.tokens, a.estimatedCostUSD];
        assert.deepEqual(
          measures,
          row.experimentId === "direct/base"
            ? [1000, 200, 1200, 0.15]
            : [undefined, undefined, null, null],
          JSON.stringify(row),
        );
        assert.equal(typeof a.durationMs, "number");
      }
    },
  );

  await t.step("--run: Duration, Tokens and Cost of each slot", async () => {
    const lines = await show(p, ["--run", standaloneRun]);
    assert.match(
      lines[1]!,
      /^Experiment +Eval +Attempt +Result +Duration +Tokens +Cost +Details$/,
    );
    for (const line of lines.slice(2)) {
      assert.match(
        line,
        new RegExp(
          `^direct/base  standalone  #[01] +passed +${DURATION} +1\\.2k  ~\\$0\\.15  @[0-9A-Z]{13}$`,
        ),
      );
    }
    assert.equal(lines.length, 4);
  });

  const budgetRun = await exp(p, [
    "direct/base",
    "--rerun=all",
    "--max-concurrency",
    "1",
    "--budget",
    "0.1",
  ], 1);

  await t.step("--runs: newest first, with completion and slot counts", async () => {
    const lines = await show(p, ["--runs"]);
    const expected = [
      [budgetRun, "direct/base ", "1 passed · 3 not run"],
      [otherRun, "direct/other", "2 failed"],
      [standaloneRun, "direct/base ", "2 passed"],
      [helperRun, "direct/base ", "2 passed"],
    ];
    assert.equal(
      lines[0],
      "Run                                   Started (UTC)     Experiment    Completion  Slots",
    );
    assert.equal(lines.length, expected.length + 1, lines.join("\n"));
    expected.forEach(([runId, experiment, counts], i) =>
      assert.match(
        lines[i + 1]!,
        new RegExp(`^${runId}  ${DATE}  ${experiment}  completed   ${counts}$`),
      )
    );
    const doc = await showJson(p, ["--runs"]);
    assert.equal(doc.scope, "run-list");
    const rows = doc.rows as Json[];
    assert.deepEqual(rows.map((r) => r.runId), expected.map(([runId]) => runId));
    const { startedAt, completedAt, ...rest } = rows[0]!;
    assert.ok(Date.parse(startedAt as string) <= Date.parse(completedAt as string));
    assert.deepEqual(rest, {
      runId: budgetRun,
      experimentId: "direct/base",
      agent: "base",
      model: "model-a",
      completion: "completed",
      slots: 4,
      counts: {
        passed: 1,
        failed: 0,
        errored: 0,
        skipped: 0,
        scored: 0,
        interrupted: 0,
        notRun: 3,
      },
    });
  });

  await t.step("--runs: a v2 Run whose log ends crashed reads as crashed", async () => {
    const log = join(p.dir, ".niceeval", "record", "runs", helperRun, LOG_NAME);
    const bytes = await Deno.readFile(log);
    const parts = scanLog(bytes).entries.map((e) =>
      e.value.record === "end"
        ? frame(JSON.stringify({ ...e.value, completion: "crashed" }))
        : bytes.slice(e.offset, e.offset + e.length)
    );
    const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
    parts.reduce((at, part) => (out.set(part, at), at + part.length), 0);
    await Deno.writeFile(log, out);
    const lines = await show(p, ["--runs"]);
    assert.match(
      lines.at(-1)!,
      new RegExp(`^${helperRun}  ${DATE}  direct/base   crashed     2 passed$`),
    );
  });

  await t.step("--runs with a locator, --run or --experiment is a usage error", async () => {
    const locator = ((await showJson(p, direct)).rows as Json[])[0]!.attempt as Json;
    for (
      const args of [
        ["--runs", locator.locator as string],
        ["--runs", "--run", helperRun],
        ["--runs", "--experiment", "direct/base"],
      ]
    ) {
      const r = await p.run(["show", ...args]);
      assert.deepEqual([r.code, r.stdout], [2, ""], args.join(" "));
      assert.match(
        r.stderr,
        /^error: --runs lists every published Run: it takes no locator, --run or --experiment \[usage\]\nhint: /,
      );
    }
  });
});
