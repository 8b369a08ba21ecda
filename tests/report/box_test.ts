/** Boxed and unboxed permanent panels (cli.md OUT-H2, OUT-H3, OUT-H5). */
import assert from "node:assert/strict";
import type { CarryDecision } from "../../src/plan/mod.ts";
import { boxLines, fitWidth, paintMarker, UNBOXED, wrapWidth } from "../../src/report/box.ts";
import { planLines } from "../../src/report/mod.ts";
import { sketchPlan } from "../_fakes/plans.ts";

const CARRIED: CarryDecision = {
  action: "carry",
  source: {
    runId: "r",
    attemptId: "x",
    originRunId: "r",
    verdict: "passed",
    durationMs: 5,
    score: null,
  },
};

Deno.test("S12 planLines() draws the boxed PLAN of cli.md §5.2 exactly at 96 columns (OUT-H5, OUT-1, OUT-2)", () => {
  const evals = Array.from({ length: 40 }, (_, i) => [`e${i}`, "pass"] as const);
  let carried = 0;
  const plan = sketchPlan(
    [{ id: "fast", evals }, { id: "medium", evals }, { id: "slow", evals, maxConcurrency: 2 }],
    () => carried++ < 30 ? CARRIED : undefined,
  );
  const lines = planLines({
    plan,
    cap: 4,
    capAnnotation: "unused with a ramp",
    ramp: { from: 4, to: 16, source: "config", held: null },
  }, { boxed: true, width: 96, color: false });
  assert.deepEqual(lines, [
    "╭─ PLAN ───────────────────────────────────────────────────────────────────────────────────────╮",
    "│ 120 attempts (40 evals × 3 experiments) · concurrency 4→16 (ramp from config) · slow ≤2      │",
    "│ 30 of 120 reused from earlier runs · 90 to run                                               │",
    "╰──────────────────────────────────────────────────────────────────────────────────────────────╯",
  ]);
});

Deno.test("planLines() shows a hold in force at start and machine sandbox budgets (OUT-1, MSB-7)", () => {
  const plan = sketchPlan([{ id: "x", evals: [["a", "pass"]] }]);
  assert.deepEqual(
    planLines({
      plan,
      cap: 8,
      capAnnotation: "from docker default",
      ramp: { from: 2, to: 8, source: "flag", held: "provider quota" },
      machineBudgets: [{ provider: "docker", limit: 4 }],
    }),
    [
      "PLAN",
      "  1 attempt (1 eval × 1 experiment) · concurrency 2→8 (ramp from flag) · ramp held: provider quota · docker sandboxes ≤4 on this host",
    ],
  );
});

Deno.test("boxLines() without a box prints the title, two spaces, the note, and never cuts the body (OUT-H3)", () => {
  const long = "x".repeat(150);
  assert.deepEqual(boxLines({ title: "FAILED", note: "0.5s", body: ["1 failed", long] }, UNBOXED), [
    "FAILED  0.5s",
    "  1 failed",
    `  ${long}`,
  ]);
  assert.deepEqual(boxLines({ title: "NEXT", note: null, body: [] }, UNBOXED), ["NEXT"]);
});

Deno.test("issue 18.5: boxLines() spans min(width, 120) columns, breaks long body lines at spaces and cuts only a word wider than the box (OUT-H2)", () => {
  const panel = {
    title: "NEXT",
    note: null,
    body: ["niceeval show --run " + "0123456789".repeat(15)],
  };
  const wide = boxLines(panel, { boxed: true, width: 200, color: false });
  assert.ok(wide.every((line) => [...line].length === 120), wide.join("\n"));
  assert.equal(wide[1], `│ niceeval show --run${" ".repeat(97)} │`);
  assert.equal(wide[2], `│   ${"0123456789".repeat(11)}012… │`);
  const narrow = boxLines({ title: "RESULTS", note: "1 experiment", body: ["local"] }, {
    boxed: true,
    width: 60,
    color: false,
  });
  assert.deepEqual(narrow, [
    "╭─ RESULTS ───────────────────────────────── 1 experiment ─╮",
    "│ local                                                    │",
    "╰──────────────────────────────────────────────────────────╯",
  ]);
});

Deno.test("boxLines() in colour dims the frame, colours the headline by tone and the ✗ marker red", () => {
  assert.deepEqual(
    boxLines({ title: "PASSED", note: "1.2s", body: ["✗ x", "ok"], tone: "good" }, {
      boxed: true,
      width: 60,
      color: true,
    }),
    [
      `\x1b[2m╭─\x1b[22m \x1b[1m\x1b[32mPASSED\x1b[39m\x1b[22m \x1b[2m${
        "─".repeat(42)
      } 1.2s ─╮\x1b[22m`,
      "\x1b[2m│\x1b[22m \x1b[31m✗\x1b[39m x                                                      \x1b[2m│\x1b[22m",
      "\x1b[2m│\x1b[22m ok                                                       \x1b[2m│\x1b[22m",
      "\x1b[2m╰──────────────────────────────────────────────────────────╯\x1b[22m",
    ],
  );
  assert.deepEqual(
    boxLines({ title: "INCOMPLETE", note: "3s", body: [], tone: "warn" }, {
      boxed: false,
      width: 80,
      color: true,
    }),
    ["\x1b[1m\x1b[33mINCOMPLETE\x1b[39m\x1b[22m  3s"],
  );
});

Deno.test("fitWidth() counts terminal columns, so wide characters are cut by width, not by length", () => {
  assert.equal(fitWidth("評価評価評価", 7), "評価評…");
  assert.equal(fitWidth("abc", 3), "abc");
  assert.equal(fitWidth("abcd", 3), "ab…");
  assert.equal(fitWidth("abcd", 0), "");
  assert.equal(paintMarker("! careful", false), "! careful");
  assert.equal(paintMarker("  ! careful", true), "  \x1b[33m!\x1b[39m careful");
});

Deno.test("issue 18.5: wrapWidth() breaks after a · when that fills half the line, never after a number, never inside a word", () => {
  const headline = "  4 passed · 1 failed · 1 scored · 0 errored  (0 reused)";
  assert.deepEqual(wrapWidth(headline, 50), [
    "  4 passed · 1 failed · 1 scored ·",
    "    0 errored  (0 reused)",
  ]);
  assert.deepEqual(wrapWidth("  local  4/4 passed (100%) · 0.0s · 21 new tok", 40), [
    "  local  4/4 passed (100%) · 0.0s ·",
    "    21 new tok",
  ]);
  // Without a · the break is at the last space that keeps a number with its word.
  assert.deepEqual(wrapWidth("  running 12 attempts of experiment x", 24), [
    "  running 12 attempts of",
    "    experiment x",
  ]);
  assert.deepEqual(wrapWidth("  eval 12 attempts", 15), ["  eval", "    12 attempts"]);
  const id = "5d1c2b7e-8f3a-4c6d-9e0f-1a2b3c4d5e6f";
  assert.deepEqual(wrapWidth(`niceeval show --run ${id}`, 30), ["niceeval show --run", `  ${id}`]);
  assert.deepEqual(wrapWidth("short", 3), ["short"], "a word wider than the width stays whole");
});
