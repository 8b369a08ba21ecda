import assert from "node:assert/strict";
import type { RunEvent, SlotOutcome } from "../../src/_shared/mod.ts";
import { locatorOf } from "../../src/record/mod.ts";
import {
  attemptLines,
  endLines,
  PermanentLines,
  planLines,
  summarize,
} from "../../src/report/mod.ts";
import { sketchPlan } from "../_fakes/plans.ts";
import { result } from "../_fakes/results.ts";

Deno.test("planLines() prints line 1 with capped experiments and line 2 only when something is carried", () => {
  const plan = sketchPlan([{ id: "slow", evals: [["a", "pass"]], maxConcurrency: 1 }, {
    id: "fast",
    evals: [["a", "pass"], ["b", "pass"]],
  }]);
  assert.deepEqual(planLines({ plan, cap: 4, capAnnotation: "from config" }), [
    "PLAN",
    "  3 attempts (2 evals across 2 experiments) · concurrency 4 (from config) · slow ≤1",
  ]);
  const carried = sketchPlan(
    [{ id: "x", evals: [["a", "pass"], ["b", "pass"]] }],
    (_e, evalId) =>
      evalId === "a"
        ? {
          action: "carry",
          source: {
            runId: "r",
            attemptId: "a1",
            originRunId: "r",
            verdict: "passed",
            durationMs: 5,
            score: null,
          },
        }
        : undefined,
  );
  assert.deepEqual(
    planLines({ plan: carried, cap: 10, capAnnotation: "from default", dry: true }),
    [
      "PLAN (dry run)",
      "  2 attempts (2 evals × 1 experiment) · concurrency 10 (from default)",
      "  1 of 2 reused from earlier runs · 1 to run",
    ],
  );
});

Deno.test("attemptLines() prints the failure shape with its reason and errors with their code", () => {
  const failed = result({
    attemptId: "f",
    verdict: "failed",
    evalId: "deliberate-fail/broken",
    experimentId: "checks/fail",
  });
  assert.deepEqual(attemptLines(failed, "@1ABC"), [
    "✗ deliberate-fail/broken  checks/fail#0  failed  @1ABC",
    "    turn succeeded · expected completed · received failed · deterministic failure",
  ]);
  const errored = result({ attemptId: "e", verdict: "errored", evalId: "a", experimentId: "x" });
  assert.deepEqual(attemptLines(errored, "@1DEF"), [
    "✗ a  x#0  errored  @1DEF",
    "    test-threw: boom",
  ]);
  assert.deepEqual(attemptLines(result({ attemptId: "p" }), "@1X"), []);
});

Deno.test("endLines() renders headline, RESULTS, FAILURES and NEXT exactly", () => {
  const plan = sketchPlan([{ id: "checks/fail", evals: [["deliberate-fail/broken", "pass"]] }, {
    id: "local",
    evals: [["greet/hello", "pass"], ["tool/weather", "pass"]],
  }]);
  const f = result({
    attemptId: "f",
    verdict: "failed",
    evalId: "deliberate-fail/broken",
    experimentId: "checks/fail",
    usage: { inputTokens: 12, outputTokens: 9 },
  });
  const outcomes: SlotOutcome[] = plan.slots.map((s) =>
    s.evalId === "deliberate-fail/broken"
      ? { kind: "executed", result: f }
      : { kind: "executed", result: result({ attemptId: s.evalId, usage: null }) }
  );
  const summary = summarize(plan, outcomes, { runIdOf: (i) => `run-${i}`, interrupted: false });
  assert.deepEqual(
    endLines(summary, { plan, wallMs: 512, runIds: ["run-0", "run-1"], positionals: [] }),
    [
      "FAILED  0.5s",
      "  2 passed · 1 failed · 0 errored  (0 reused)",
      "  21 new tok",
      "RESULTS  2 experiments",
      "  checks/fail  0/1 passed (0%) · 1 failed · 1.0s · 21 new tok",
      "    deliberate-fail/broken  0/1 passed · 1 failed",
      "  local        2/2 passed (100%) · 1.0s · 0 new tok",
      "FAILURES  1 failed · 0 errored",
      "  turn succeeded · expected completed · received failed  (1×)",
      "    reason: deterministic failure",
      `    ✗ ${locatorOf("f")}  checks/fail  deliberate-fail/broken#0`,
      "NEXT",
      "  niceeval show",
      "  niceeval show --run run-0",
      "  niceeval show --run run-1",
      "  niceeval exp --rerun",
    ],
  );
});

Deno.test("endLines() lists gaps and early-exit skips per eval (OUT-H13)", () => {
  const plan = sketchPlan([{ id: "x", evals: [["a", "pass"]], attempts: 4 }]);
  const outcomes: SlotOutcome[] = [
    { kind: "executed", result: result({ attemptId: "1" }) },
    { kind: "not-dispatched", reason: "early-exit" },
    { kind: "not-dispatched", reason: "budget-exhausted" },
    { kind: "executed", result: result({ attemptId: "4", verdict: "errored" }) },
  ];
  const summary = summarize(plan, outcomes, { runIdOf: () => "r", interrupted: false });
  const lines = endLines(summary, { plan, wallMs: 61_000, runIds: ["r"], positionals: ["x"] });
  assert.equal(lines[0], "ERRORED  1m 01s");
  assert.equal(lines[1], "  1 passed · 0 failed · 1 errored · 1 unstarted  (0 reused)");
  assert.ok(
    lines.includes(
      "    a  1/3 passed · 1 errored · 1 not run (budget-exhausted) · 1 not needed (early exit)",
    ),
    lines.join("\n"),
  );
  assert.deepEqual(lines.slice(-4), [
    "NEXT",
    "  niceeval show --run r",
    "  niceeval exp x --rerun",
    "  niceeval exp x --budget <usd>",
  ]);
});

Deno.test("endLines() boxed: a budget stop is INCOMPLETE, lists the gap per eval and suggests --budget (OUT-H11, OUT-H15)", () => {
  const plan = sketchPlan([{ id: "paid", evals: [["a", "pass"], ["b", "pass"]], attempts: 2 }]);
  const outcomes: SlotOutcome[] = [
    {
      kind: "executed",
      result: result({ attemptId: "p1", experimentId: "paid", evalId: "a", estimatedCostUSD: 0.6 }),
    },
    { kind: "not-dispatched", reason: "budget-exhausted" },
    { kind: "not-dispatched", reason: "budget-exhausted" },
    { kind: "not-dispatched", reason: "budget-exhausted" },
  ];
  const summary = summarize(plan, outcomes, { runIdOf: () => "run-1", interrupted: false });
  const layout = { boxed: true, width: 80, color: false };
  const options = { plan, wallMs: 5000, runIds: ["run-1"], positionals: ["paid"], layout };
  assert.deepEqual(endLines(summary, options), [
    "╭─ INCOMPLETE ────────────────────────────────────────────────────────── 5.0s ─╮",
    "│ 1 passed · 0 failed · 0 errored · 3 unstarted  (0 reused)                    │",
    "│ 15 new tok · ~$0.60                                                          │",
    "╰──────────────────────────────────────────────────────────────────────────────╯",
    "╭─ RESULTS ───────────────────────────────────────────────────── 1 experiment ─╮",
    "│ paid  1/4 passed (25%) · 3 not run (budget-exhausted) · 1.0s · 15 new tok ·  │",
    "│   ~$0.60                                                                     │",
    "│   a  1/2 passed · 1 not run (budget-exhausted)                               │",
    "│   b  0/2 passed · 2 not run (budget-exhausted)                               │",
    "╰──────────────────────────────────────────────────────────────────────────────╯",
    "╭─ NEXT ───────────────────────────────────────────────────────────────────────╮",
    "│ niceeval show --run run-1                                                    │",
    "│ niceeval exp paid --budget <usd>                                             │",
    "╰──────────────────────────────────────────────────────────────────────────────╯",
  ]);
});

Deno.test("endLines() of an interrupted run heads INTERRUPTED over ERRORED and suggests running again (OUT-H11, OUT-H15)", () => {
  const plan = sketchPlan([{
    id: "local",
    evals: [["greet/hello", "pass"], ["math/0000", "pass"], ["math/0001", "pass"]],
  }]);
  const outcomes: SlotOutcome[] = [
    {
      kind: "executed",
      result: result({
        attemptId: "i1",
        experimentId: "local",
        evalId: "greet/hello",
        verdict: "interrupted",
        usage: null,
      }),
    },
    { kind: "not-dispatched", reason: "interrupted" },
    {
      kind: "executed",
      result: result({
        attemptId: "i3",
        experimentId: "local",
        evalId: "math/0001",
        verdict: "errored",
      }),
    },
  ];
  const summary = summarize(plan, outcomes, { runIdOf: () => "run-2", interrupted: true });
  assert.deepEqual(
    endLines(summary, { plan, wallMs: 1500, runIds: ["run-2"], positionals: ["local"] }),
    [
      "INTERRUPTED  1.5s",
      "  0 passed · 0 failed · 1 errored · 2 interrupted  (0 reused)",
      "  15 new tok",
      "RESULTS  1 experiment",
      "  local  0/3 passed (0%) · 1 errored · 2 not run (interrupted) · 1.0s · 15 new tok",
      "    greet/hello  0/1 passed · 1 not run (interrupted)",
      "    math/0000    0/1 passed · 1 not run (interrupted)",
      "    math/0001    0/1 passed · 1 errored",
      "FAILURES  0 failed · 1 errored",
      "  error test-threw: boom  (1×)",
      `    ✗ ${locatorOf("i3")}  local  math/0001#0`,
      `    details: niceeval show ${locatorOf("i3")}`,
      "NEXT",
      "  niceeval show --run run-2",
      "  niceeval exp local --rerun",
      "  niceeval exp local",
    ],
  );
});

function diagnosticEvent(
  code: string,
  level: "info" | "warning" | "error",
  message: string,
  extra: Partial<Extract<RunEvent, { type: "diagnostic" }>> = {},
): RunEvent {
  return {
    type: "diagnostic",
    at: 0,
    level,
    code,
    message,
    experimentId: "x",
    evalId: null,
    data: null,
    persist: true,
    ...extra,
  };
}

Deno.test("PermanentLines expands the first 10 failures, then says once that the rest are listed at the end (OUT-H10)", () => {
  const plan = sketchPlan([{ id: "x", evals: [["a", "pass"]], attempts: 12 }]);
  const lines: string[] = [];
  const permanent = new PermanentLines(plan, (line) => lines.push(line));
  for (let i = 0; i < 12; i++) {
    const r = result({
      attemptId: `f${i}`,
      experimentId: "x",
      evalId: "a",
      ordinal: i,
      verdict: i % 2 === 0 ? "failed" : "errored",
    });
    permanent.event({
      type: "attempt_end",
      at: 0,
      slot: { position: i, experimentId: "x", evalId: "a", ordinal: i },
      result: r,
    });
  }
  const expanded = Array.from({ length: 10 }, (_, i) =>
    i % 2 === 0
      ? [
        `✗ a  x#${i}  failed  ${locatorOf(`f${i}`)}`,
        "    turn succeeded · expected completed · received failed · deterministic failure",
      ]
      : [`✗ a  x#${i}  errored  ${locatorOf(`f${i}`)}`, "    test-threw: boom"]).flat();
  // The 11th and 12th failures print nothing more than the single notice.
  assert.deepEqual(lines, [...expanded, "… further failures are listed at the end"]);
});

Deno.test("PermanentLines prints warnings once per code, experiment and eval, and errors without an Attempt with their count (OUT-H9)", () => {
  const plan = sketchPlan([{ id: "x", evals: [["a", "pass"]] }]);
  const lines: string[] = [];
  const permanent = new PermanentLines(plan, (line) => lines.push(line));
  const budget = diagnosticEvent(
    "budget-exhausted",
    "warning",
    "budget exhausted for x: spent ~$0.60 of $0.50",
  );
  permanent.event(budget);
  permanent.event(budget);
  permanent.event(
    diagnosticEvent("budget-exhausted", "warning", "budget exhausted for y", { experimentId: "y" }),
  );
  const perEval = (evalId: string) =>
    diagnosticEvent("slow-eval", "warning", `${evalId} is slow`, { evalId });
  permanent.event(perEval("a"));
  permanent.event(perEval("b"));
  permanent.event(perEval("a"));
  permanent.event(diagnosticEvent("state-lease-waiting", "info", "waiting for sharedState db"));
  permanent.event(diagnosticEvent("state-lease-waiting", "info", "waiting for sharedState db"));
  permanent.event(
    diagnosticEvent(
      "judge-precheck-failed",
      "error",
      'Judge precheck of "j1" failed for x · a: 401',
      { data: { errored: 3 } },
    ),
  );
  permanent.event(diagnosticEvent("dispatch-halted", "error", "experiment halted: key revoked"));
  permanent.event({ type: "interrupted", at: 0, signal: "SIGINT" });
  assert.deepEqual(lines, [
    "! budget exhausted for x: spent ~$0.60 of $0.50",
    "! budget exhausted for y",
    "! a is slow",
    "! b is slow",
    "i waiting for sharedState db",
    '✗ judge-precheck-failed · x: Judge precheck of "j1" failed for x · a: 401 (3 attempts errored)',
    "✗ experiment halted: key revoked",
    "! interrupted — cleaning up (Ctrl+C again forces exit)",
  ]);
});

Deno.test("PermanentLines colours the leading marker only when asked", () => {
  const plan = sketchPlan([{ id: "x", evals: [["a", "pass"]] }]);
  const lines: string[] = [];
  const permanent = new PermanentLines(plan, (line) => lines.push(line), { color: true });
  permanent.event({
    type: "experiment_setup",
    at: 0,
    experimentId: "x",
    status: "failed",
    durationMs: 5,
    message: "no db",
  });
  permanent.event(diagnosticEvent("w", "warning", "careful"));
  assert.deepEqual(lines, [
    "\x1b[31m✗\x1b[39m experiment setup failed · x: no db (1 attempt errored)",
    "\x1b[33m!\x1b[39m careful",
  ]);
});

Deno.test("endLines() of a score-only run heads SCORED with scored, skipped and errored counts (OUT-H12, OUT-H13)", () => {
  const plan = sketchPlan([{ id: "judge", evals: [["essay/tone", "score"]], attempts: 3 }]);
  const scored = (attemptId: string, score: number, estimatedCostUSD: number): SlotOutcome => ({
    kind: "executed",
    result: result({
      attemptId,
      experimentId: "judge",
      evalId: "essay/tone",
      kind: "score",
      verdict: "scored",
      score,
      estimatedCostUSD,
    }),
  });
  const outcomes: SlotOutcome[] = [
    scored("s1", 0.5, 0.004),
    scored("s2", 1, 0.001),
    {
      kind: "executed",
      result: result({
        attemptId: "s3",
        experimentId: "judge",
        evalId: "essay/tone",
        kind: "score",
        verdict: "skipped",
        skipReason: "no-result",
      }),
    },
  ];
  const summary = summarize(plan, outcomes, { runIdOf: () => "run-9", interrupted: false });
  assert.deepEqual(
    endLines(summary, { plan, wallMs: 754_000, runIds: ["run-9"], positionals: ["judge"] }),
    [
      "SCORED  12m 34s",
      "  2 scored · 1 skipped · 0 errored  (0 reused)",
      "  45 new tok · ~$0.01",
      "RESULTS  1 experiment",
      "  judge  score 0.75 · 2/3 complete · 1 skipped · 1.0s · 45 new tok · ~$0.01",
      "    essay/tone  score 0.75 · 2/3 complete · 1 skipped",
      "NEXT",
      "  niceeval show --run run-9",
    ],
  );
});

Deno.test("issue 18.6: PLAN states the attempts as a product only when it holds, else across the experiments", () => {
  const line = (plan: ReturnType<typeof sketchPlan>) =>
    planLines({ plan, cap: 4, capAnnotation: "from config" })[1];
  const two: [string, "pass"][] = [["a", "pass"], ["b", "pass"]];
  assert.equal(
    line(sketchPlan(["x", "y", "z"].map((id) => ({ id, evals: two })))),
    "  6 attempts (2 evals × 3 experiments) · concurrency 4 (from config)",
  );
  assert.equal(
    line(sketchPlan(["x", "y", "z"].map((id) => ({ id, evals: two, attempts: 2 })))),
    "  12 attempts (2 evals × 3 experiments × 2 attempts each) · concurrency 4 (from config)",
  );
  // The issue's case: three experiments, each with its own two evals (6 × 3 ≠ 6).
  const own = ["x", "y", "z"].map((id) => ({
    id,
    evals: [[`${id}1`, "pass"], [`${id}2`, "pass"]] as [string, "pass"][],
    attempts: 3,
  }));
  assert.equal(
    line(sketchPlan(own)),
    "  18 attempts (6 evals across 3 experiments, 3 attempts each) · concurrency 4 (from config)",
  );
  assert.equal(
    line(sketchPlan([{ id: "x", evals: two, attempts: 2 }, { id: "y", evals: two }])),
    "  6 attempts (2 evals across 2 experiments) · concurrency 4 (from config)",
  );
  assert.equal(
    line(sketchPlan([{ id: "x", evals: [["a", "pass"]] }])),
    "  1 attempt (1 eval × 1 experiment) · concurrency 4 (from config)",
  );
});

/** A finished run of `plan` whose slots for `failing` evals failed and the rest passed. */
function runOf(plan: ReturnType<typeof sketchPlan>, failing: (evalId: string) => boolean) {
  const outcomes: SlotOutcome[] = plan.slots.map((s) => ({
    kind: "executed",
    result: result({
      attemptId: `${s.experimentId}:${s.evalId}#${s.ordinal}`,
      experimentId: s.experimentId,
      evalId: s.evalId,
      ordinal: s.ordinal,
      verdict: failing(s.evalId) ? "failed" : "passed",
      estimatedCostUSD: 0.001,
    }),
  }));
  return summarize(plan, outcomes, { runIdOf: (i) => `run-${i}`, interrupted: false });
}

function resultsBlock(lines: readonly string[]): string[] {
  return lines.slice(
    lines.findIndex((l) => l.startsWith("RESULTS")),
    lines.findIndex((l) => l.startsWith("FAILURES")),
  );
}

Deno.test("issue 18.9: RESULTS shows one line per experiment, then only the evals that did not all pass, capped", () => {
  const evals = Array.from(
    { length: 1000 },
    (_, i) => [`a/${String(i).padStart(4, "0")}`, "pass"] as [string, "pass"],
  );
  const plan = sketchPlan([{ id: "big", evals }, { id: "small", evals: evals.slice(0, 2) }]);
  // Every 20th eval fails: 50 of 1000 in big, a/0000 in small.
  const summary = runOf(plan, (id) => Number(id.slice(2)) % 20 === 0);
  const lines = endLines(summary, {
    plan,
    wallMs: 9000,
    runIds: ["run-0", "run-1"],
    positionals: [],
  });
  assert.deepEqual(resultsBlock(lines), [
    "RESULTS  2 experiments",
    "  big    950/1000 passed (95%) · 50 failed · 1.0s · 15k new tok · ~$1.00",
    ...Array.from(
      { length: 20 },
      (_, i) => `    a/${String(i * 20).padStart(4, "0")}  0/1 passed · 1 failed`,
    ),
    "    … 30 more · niceeval show",
    "  small  1/2 passed (50%) · 1 failed · 1.0s · 30 new tok · <$0.01",
    "    … 1 more · niceeval show",
  ]);
});

Deno.test("issue 18.9: RESULTS of a run where everything passed is one line per experiment", () => {
  const plan = sketchPlan([{ id: "x", evals: [["a", "pass"], ["b", "pass"]], attempts: 2 }]);
  const lines = endLines(runOf(plan, () => false), {
    plan,
    wallMs: 9000,
    runIds: ["run-0"],
    positionals: [],
  });
  assert.deepEqual(lines.slice(lines.indexOf("RESULTS  1 experiment"), lines.indexOf("NEXT")), [
    "RESULTS  1 experiment",
    "  x  4/4 passed (100%) · 1.0s · 60 new tok · <$0.01",
  ]);
});

Deno.test("issue 18.11: RESULTS says 1 more experiment, 2 more experiments (pluralized)", () => {
  for (
    const [count, text] of [[11, "… 1 more experiment"], [12, "… 2 more experiments"]] as const
  ) {
    const plan = sketchPlan(
      Array.from({ length: count }, (_, i) => ({ id: `e${i}`, evals: [["a", "pass"]] as const })),
    );
    const lines = endLines(runOf(plan, () => false), {
      plan,
      wallMs: 1,
      runIds: plan.experiments.map((_, i) => `run-${i}`),
      positionals: [],
      nextFlags: { show: ["--record", "my root"], exp: [] },
    });
    assert.equal(lines.filter((l) => /^ {2}e\d+ /.test(l)).length, 10);
    assert.ok(lines.includes(`  ${text} · niceeval show --record 'my root'`), lines.join("\n"));
  }
});

Deno.test("issue 18.11: NEXT lines carry --record on show and exp lines and --attempts on exp lines", () => {
  const plan = sketchPlan([{ id: "local", evals: [["a", "pass"]], attempts: 3 }]);
  const summary = runOf(plan, () => true);
  const lines = endLines(summary, {
    plan,
    wallMs: 1,
    runIds: ["run-0"],
    positionals: ["local", "a"],
    nextFlags: {
      show: ["--record", "myroot"],
      exp: ["--attempts", "3", "--tag", "it's", "--record", "myroot"],
    },
  });
  assert.deepEqual(lines.slice(lines.indexOf("NEXT")), [
    "NEXT",
    "  niceeval show --record myroot --run run-0",
    "  niceeval exp local a --attempts 3 --tag 'it'\\''s' --record myroot --rerun",
  ]);
});
