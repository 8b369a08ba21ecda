import assert from "node:assert/strict";
import type { SlotOutcome } from "../../src/_shared/mod.ts";
import { locatorOf } from "../../src/record/mod.ts";
import { attemptLines, endLines, planLines, summarize } from "../../src/report/mod.ts";
import { sketchPlan } from "../_fakes/plans.ts";
import { result } from "../_fakes/results.ts";

Deno.test("planLines() prints line 1 with capped experiments and line 2 only when something is carried", () => {
  const plan = sketchPlan([{ id: "slow", evals: [["a", "pass"]], maxConcurrency: 1 }, { id: "fast", evals: [["a", "pass"], ["b", "pass"]] }]);
  assert.deepEqual(planLines({ plan, cap: 4, capAnnotation: "from config" }), [
    "PLAN",
    "  3 attempts · 2 evals × 2 configs · concurrency 4 (from config) · slow ≤1",
  ]);
  const carried = sketchPlan([{ id: "x", evals: [["a", "pass"], ["b", "pass"]] }], (_e, evalId) =>
    evalId === "a" ? { action: "carry", source: { runId: "r", attemptId: "a1", originRunId: "r", verdict: "passed", durationMs: 5, score: null } } : undefined);
  assert.deepEqual(planLines({ plan: carried, cap: 10, capAnnotation: "from default", dry: true }), [
    "PLAN (dry run)",
    "  2 attempts · 2 evals × 1 config · concurrency 10 (from default)",
    "  1 of 2 carried in from cache · 1 to run",
  ]);
});

Deno.test("attemptLines() prints the failure shape with its reason and errors with their code", () => {
  const failed = result({ attemptId: "f", verdict: "failed", evalId: "deliberate-fail/broken", experimentId: "checks/fail" });
  assert.deepEqual(attemptLines(failed, "@1ABC"), [
    "✗ deliberate-fail/broken  checks/fail#0  failed  @1ABC",
    "    turn succeeded · expected completed · received failed · deterministic failure",
  ]);
  const errored = result({ attemptId: "e", verdict: "errored", evalId: "a", experimentId: "x" });
  assert.deepEqual(attemptLines(errored, "@1DEF"), ["✗ a  x#0  errored  @1DEF", "    test-threw: boom"]);
  assert.deepEqual(attemptLines(result({ attemptId: "p" }), "@1X"), []);
});

Deno.test("endLines() renders headline, RESULTS, FAILURES and NEXT exactly", () => {
  const plan = sketchPlan([{ id: "checks/fail", evals: [["deliberate-fail/broken", "pass"]] }, { id: "local", evals: [["greet/hello", "pass"], ["tool/weather", "pass"]] }]);
  const f = result({ attemptId: "f", verdict: "failed", evalId: "deliberate-fail/broken", experimentId: "checks/fail", usage: { inputTokens: 12, outputTokens: 9 } });
  const outcomes: SlotOutcome[] = plan.slots.map((s) =>
    s.evalId === "deliberate-fail/broken" ? { kind: "executed", result: f } : { kind: "executed", result: result({ attemptId: s.evalId, usage: null }) }
  );
  const summary = summarize(plan, outcomes, { runIdOf: (i) => `run-${i}`, interrupted: false });
  assert.deepEqual(endLines(summary, { plan, wallMs: 512, runIds: ["run-0", "run-1"], positionals: [] }), [
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
  ]);
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
  assert.ok(lines.includes("    a  1/3 passed · 1 errored · 1 not run (budget-exhausted) · 1 not needed (early exit)"), lines.join("\n"));
  assert.deepEqual(lines.slice(-4), ["NEXT", "  niceeval show --run r", "  niceeval exp x --rerun", "  niceeval exp x --budget <usd>"]);
});
