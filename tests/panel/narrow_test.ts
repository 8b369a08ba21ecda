/**
 * Narrow terminals (issue 18 item 5): at 50 and 40 columns the counters line keeps the failed
 * and errored counts, and permanent panels break lines between words, never inside an ID or a
 * locator.
 */
import assert from "node:assert/strict";
import type { SlotOutcome } from "../../src/_shared/mod.ts";
import { humanOutput } from "../../src/cli/exp_output.ts";
import type { PlannedRun } from "../../src/cli/plan_run.ts";
import { type Counters, countersLine, renderPanel } from "../../src/panel/mod.ts";
import { locatorOf } from "../../src/record/mod.ts";
import { boxLines } from "../../src/report/box.ts";
import { summarize } from "../../src/report/mod.ts";
import { createFakeIo } from "../_fakes/io.ts";
import { sketchPlan } from "../_fakes/plans.ts";
import { result } from "../_fakes/results.ts";
import { ended, fold, panelStart, slot, started, T0 } from "./_events.ts";

const RUN_ID = "5d1c2b7e-8f3a-4c6d-9e0f-1a2b3c4d5e6f";

/** The counters the issue saw cut to `3 passed · 6…` at 50 columns. */
const ISSUE: Counters = {
  total: 30,
  reused: 0,
  running: 4,
  backoff: 0,
  queued: 17,
  passed: 3,
  failed: 6,
  errored: 0,
  skipped: 0,
};

/** A bigger run with every counter non-zero but backoff. */
const BUSY: Counters = {
  total: 135,
  reused: 30,
  running: 12,
  backoff: 0,
  queued: 23,
  passed: 45,
  failed: 10,
  errored: 10,
  skipped: 5,
};

Deno.test("issue 18.5: countersLine() at 50 and 40 columns drops queued and reused before the failed and errored counts", () => {
  // Unboxed, the counters line has the width minus its two-space indent.
  assert.equal(countersLine(ISSUE, 48), "30 total · 4 running · 3 passed · 6 failed");
  assert.equal(countersLine(ISSUE, 38), "30 total · 4 run · 3 pass · 6 fail");
  assert.equal(
    countersLine(BUSY, 48),
    "135 total · 12 run · 45 pass · 10 fail · 10 err",
  );
  assert.equal(countersLine(BUSY, 38), "135 total · 45 pass · 10 fail · 10 err");
  assert.equal(countersLine(BUSY, 20), "10 fail · 10 err", "failed and errored are never dropped");
});

Deno.test("issue 18.5: renderPanel() at 50 and 40 columns keeps the failed count and the ETA", () => {
  const x = (i: number) => slot(i, "openai", `capital/c${i}`);
  const events = [0, 1, 2, 3].map((i) => started(x(i), 0));
  events.push(ended(x(0), 2_000, "failed"), ended(x(1), 2_000, "errored"));
  events.push(started(x(4), 2_000), started(x(5), 2_000), ended(x(2), 4_000, "passed"));
  const state = fold(panelStart(30, 0, { positionals: ["openai", "capital"] }), events);
  const at = (width: number) =>
    renderPanel(state, { width, now: T0 + 5_000, color: false, boxed: false });
  // Settled in 2, 2 and 4 s; 24 queued over the 3.8 lanes busy so far: ETA 17s.
  assert.deepEqual(at(50), [
    "niceeval exp openai capital  5.0s · ETA 17s",
    "  30 total · 3 run · 1 pass · 1 fail · 1 err",
    "  ACTIVE",
    "  ● capital/c4  openai#0    3.0s",
    "  ● capital/c5  openai#0    3.0s",
    "  ● capital/c3  openai#0    5.0s",
  ]);
  assert.deepEqual(at(40), [
    "niceeval exp openai cap…  5.0s · ETA 17s",
    "  30 total · 1 pass · 1 fail · 1 err",
    "  ACTIVE",
    "  ● capital/c4  openai#0    3.0s",
    "  ● capital/c5  openai#0    3.0s",
    "  ● capital/c3  openai#0    5.0s",
  ]);
});

Deno.test("issue 18.5: end panels on a 50- and 40-column terminal break lines between words, never inside a run ID or a locator", () => {
  const failures = {
    title: "FAILURES",
    note: "1 failed · 0 errored",
    body: [
      "turn succeeded · expected completed · received failed  (1×)",
      "  ✗ @1E4GJ7PS1VK5M  checks/fail  deliberate-fail/broken#0",
    ],
  };
  const next = { title: "NEXT", note: null, body: [`niceeval show --run ${RUN_ID}`] };
  const at = (width: number) =>
    [failures, next].flatMap((p) => boxLines(p, { boxed: false, width, color: false, wrap: true }));
  assert.deepEqual(at(50), [
    "FAILURES  1 failed · 0 errored",
    // Broken after a `·` rather than between `received` and `failed`.
    "  turn succeeded · expected completed ·",
    "    received failed  (1×)",
    "    ✗ @1E4GJ7PS1VK5M  checks/fail",
    "      deliberate-fail/broken#0",
    "NEXT",
    "  niceeval show --run",
    `    ${RUN_ID}`,
  ]);
  assert.deepEqual(at(40), [
    "FAILURES  1 failed · 0 errored",
    "  turn succeeded · expected completed ·",
    "    received failed  (1×)",
    "    ✗ @1E4GJ7PS1VK5M  checks/fail",
    "      deliberate-fail/broken#0",
    "NEXT",
    "  niceeval show --run",
    `    ${RUN_ID}`,
  ]);
  for (const width of [50, 40]) {
    assert.ok(at(width).every((line) => [...line].length <= width), `nothing wider than ${width}`);
  }
});

Deno.test("issue 18.5: humanOutput() on a 50-column terminal keeps every permanent line within 50 columns with run IDs and locators whole", async () => {
  const experimentId = "openai-compatible/with-a-long-name";
  const plan = sketchPlan([{ id: experimentId, evals: [["capital/of-france", "pass"]] }]);
  const planned = {
    plan,
    cap: { cap: 2, source: "config", provider: null },
    capAnnotation: "from config",
    identity: { configHash: new Map(), inputFingerprint: new Map() },
    emptyExperimentIds: [],
    unpublished: [],
    salvage: [],
    machineBudgets: [],
    ramp: null,
    rampDisabled: false,
  } satisfies PlannedRun;
  const io = createFakeIo({ isTerminal: true, columns: 50, env: { NO_COLOR: "1" } });
  const output = humanOutput({
    io,
    invocationId: "inv-1",
    startedAt: io.clock.now(),
    recordRoot: "/project/.niceeval/record",
    planned,
    runIds: [RUN_ID],
    positionals: [experimentId],
  });
  const a = slot(0, experimentId, "capital/of-france");
  output.start();
  output.event(started(a, 0));
  await io.clock.tickAsync(1_000);
  const failed = result({ attemptId: "a-0", experimentId, evalId: a.evalId, verdict: "failed" });
  output.event({ type: "attempt_end", at: io.clock.now(), slot: a, result: failed });
  const outcomes: SlotOutcome[] = [{ kind: "executed", result: failed }];
  const summary = summarize(plan, outcomes, { runIdOf: () => RUN_ID, interrupted: false });
  output.end(summary, {
    publishedRunIds: [RUN_ID],
    completedAt: io.clock.now(),
    completion: "completed",
    exitCode: 1,
  });
  const lines = io.stdout.text().trimEnd().split("\n");
  const wide = lines.filter((line) => [...line].length > 50);
  assert.deepEqual(wide, [], "no line wider than the terminal");
  const locator = locatorOf("a-0");
  assert.ok(lines.some((line) => line.includes(`✗ ${locator}`)), "the locator stays whole");
  assert.ok(lines.includes(`    ${RUN_ID}`), "the run ID stays whole on its continuation line");
  assert.ok(lines.includes(`  niceeval exp ${experimentId}`), lines.join("\n"));
  assert.ok(lines.includes("    --rerun"), "a long NEXT command continues on the next line");
});
