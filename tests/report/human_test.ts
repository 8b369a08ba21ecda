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
    "  3 attempts · 2 evals × 2 configs · concurrency 4 (from config) · slow ≤1",
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
      "  2 attempts · 2 evals × 1 config · concurrency 10 (from default)",
      "  1 of 2 carried in from cache · 1 to run",
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
      "  checks/fail",
      "    deliberate-fail/broken  0/1 passed · 1 failed",
      "  local",
      "    greet/hello   1/1 passed",
      "    tool/weather  1/1 passed",
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
    "│ paid                                                                         │",
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
      "  local",
      "    greet/hello  0/1 passed · 1 not run (interrupted)",
      "    math/0000    0/1 passed · 1 not run (interrupted)",
      "    math/0001    0/1 passed · 1 errored",
      "FAILURES  0 failed · 1 errored",
      `  ✗ ${locatorOf("i3")}  local  math/0001#0`,
      "    error test-threw: boom",
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
      "  judge",
      "    essay/tone  score 0.75 · 2/3 complete · 1 skipped",
      "NEXT",
      "  niceeval show --run run-9",
    ],
  );
});
