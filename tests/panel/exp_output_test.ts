/**
 * The outputs of `exp` (src/cli/exp_output.ts) on a fake Io and fake time: plain heartbeat
 * (OUT-H16), NDJSON `progress` (OUT-J2), live panel on a terminal (OUT-H1, OUT-H6), and no timer
 * or hidden cursor left behind.
 */
import assert from "node:assert/strict";
import type { SlotOutcome } from "../../src/_shared/mod.ts";
import {
  type ExpOutput,
  humanOutput,
  jsonOutput,
  type OutputContext,
} from "../../src/cli/exp_output.ts";
import type { PlannedRun } from "../../src/cli/plan_run.ts";
import { locatorOf } from "../../src/record/mod.ts";
import { summarize } from "../../src/report/mod.ts";
import { createFakeIo, type FakeIo } from "../_fakes/io.ts";
import { sketchPlan } from "../_fakes/plans.ts";
import { result } from "../_fakes/results.ts";
import { ended, slot, started } from "./_events.ts";

const cursorHide = "\x1b[?25l";
const cursorShow = "\x1b[?25h";
const PLAN = sketchPlan([{ id: "local", evals: [["a", "pass"], ["b", "pass"]] }]);
const A = slot(0, "local", "a");
const B = slot(1, "local", "b");

function context(io: FakeIo): OutputContext {
  const planned = {
    plan: PLAN,
    cap: { cap: 2, source: "config", provider: null },
    capAnnotation: "from config",
    identity: { configHash: new Map(), inputFingerprint: new Map() },
    emptyExperimentIds: [],
    unpublished: [],
    machineBudgets: [],
  } satisfies PlannedRun;
  return {
    io,
    invocationId: "inv-1",
    startedAt: io.clock.now(),
    recordRoot: "/project/.niceeval/record",
    planned,
    runIds: ["run-1"],
    positionals: ["local"],
  };
}

/** Ends the output with a's failure and b's pass. */
function finish(io: FakeIo, output: ExpOutput): void {
  const outcomes: SlotOutcome[] = [
    {
      kind: "executed",
      result: result({ attemptId: "a-0", experimentId: "local", evalId: "a", verdict: "failed" }),
    },
    {
      kind: "executed",
      result: result({ attemptId: "a-1", experimentId: "local", evalId: "b", usage: null }),
    },
  ];
  const summary = summarize(PLAN, outcomes, { runIdOf: () => "run-1", interrupted: false });
  output.end(summary, {
    publishedRunIds: ["run-1"],
    completedAt: io.clock.now(),
    completion: "completed",
    exitCode: 1,
  });
}

Deno.test("OUT-H16 humanOutput() in plain mode prints a heartbeat after 30 s of silence and again after each further 30 s", async () => {
  const io = createFakeIo({ env: { CI: "1" } });
  const output = humanOutput(context(io));
  output.start();
  output.event(started(A, 0));
  await io.clock.tickAsync(30_000);
  await io.clock.tickAsync(15_000);
  output.event(started(B, 45_000));
  output.event(ended(A, 45_000, "failed"));
  await io.clock.tickAsync(29_999);
  const before = io.stdout.text();
  await io.clock.tickAsync(1);
  output.event(ended(B, 75_000, "passed"));
  finish(io, output);
  assert.equal(io.clock.countTimers(), 0, "a finished run leaves no timer behind");
  const heartbeat2 =
    "… 1m 15s · 2 total · 0 reused · 1 running · 0 queued · 0 passed · 1 failed · 0 errored · 0 skipped";
  assert.ok(!before.includes(heartbeat2));
  assert.equal(
    io.stdout.text(),
    [
      "PLAN",
      "  2 attempts · 2 evals × 1 config · concurrency 2 (from config)",
      "… 30s · 2 total · 0 reused · 1 running · 1 queued · 0 passed · 0 failed · 0 errored · 0 skipped",
      `✗ a  local#0  failed  ${locatorOf("a-0")}`,
      "    turn succeeded · expected completed · received failed · deterministic failure",
      heartbeat2,
      "FAILED  1m 15s",
      "  1 passed · 1 failed · 0 errored  (0 reused)",
      "  15 new tok",
      "RESULTS  1 experiment",
      "  local",
      "    a  0/1 passed · 1 failed",
      "    b  1/1 passed",
      "FAILURES  1 failed · 0 errored",
      "  turn succeeded · expected completed · received failed  (1×)",
      "    reason: deterministic failure",
      `    ✗ ${locatorOf("a-0")}  local  a#0`,
      "NEXT",
      "  niceeval show --run run-1",
      "  niceeval exp local --rerun",
      "",
    ].join("\n"),
  );
  assert.equal(io.stderr.text(), "");
});

Deno.test("OUT-J2 jsonOutput() writes a progress line after 30 s without any line and stops with the receipt", async () => {
  const io = createFakeIo({});
  const output = jsonOutput(context(io));
  output.start();
  output.event(started(A, 0));
  await io.clock.tickAsync(30_000);
  output.failed();
  assert.equal(io.clock.countTimers(), 0);
  const lines = io.stdout.text().trim().split("\n").map((line) => JSON.parse(line));
  assert.deepEqual(lines.map((l) => l.type), ["start", "attempt_start", "progress", "receipt"]);
  assert.deepEqual(lines[2], {
    type: "progress",
    at: "2026-11-29T10:00:30.000Z",
    elapsedMs: 30_000,
    total: 2,
    reused: 0,
    running: 1,
    backoff: 0,
    queued: 1,
    passed: 0,
    failed: 0,
    errored: 0,
    skipped: 0,
    cap: 2,
  });
});

Deno.test("OUT-H1 humanOutput() on a terminal draws the panel on stderr only and restores the cursor at the end", async () => {
  const io = createFakeIo({ isTerminal: true, columns: 80 });
  const output = humanOutput(context(io));
  output.start();
  output.event(started(A, 0));
  output.event(started(B, 0));
  await io.clock.tickAsync(1_000);
  output.event(ended(A, 1_000, "failed"));
  output.event(ended(B, 1_000, "passed"));
  finish(io, output);
  assert.equal(io.clock.countTimers(), 0);
  const stderr = io.stderr.text();
  assert.ok(
    stderr.startsWith(cursorHide + "\x1b[2m╭─\x1b[22m \x1b[1mniceeval exp local\x1b[22m"),
    JSON.stringify(stderr),
  );
  assert.ok(stderr.endsWith(cursorShow));
  assert.ok(
    stderr.includes("2 total · 0 reused · 2 running · 0 queued · 0 passed · 0 failed · 0 errored "),
  );
  const stdout = io.stdout.text();
  assert.ok(
    stdout.startsWith("\x1b[2m╭─\x1b[22m \x1b[1mPLAN\x1b[22m \x1b[2m"),
    "PLAN is boxed in colour",
  );
  assert.ok(
    stdout.includes(`\x1b[31m✗\x1b[39m a  local#0  failed  ${locatorOf("a-0")}\n`),
    "failure above the panel",
  );
  assert.ok(
    stdout.includes("\x1b[2m╭─\x1b[22m \x1b[1m\x1b[31mFAILED\x1b[39m\x1b[22m \x1b[2m"),
    "red headline",
  );
  assert.ok(!stdout.includes("\x1b[?25"), "no cursor control on stdout");
});

Deno.test("OUT-H17 humanOutput() with NO_COLOR redraws an unboxed, colourless panel and prints unboxed panels", () => {
  const io = createFakeIo({ isTerminal: true, columns: 80, env: { NO_COLOR: "1" } });
  const output = humanOutput(context(io));
  output.start();
  finish(io, output);
  assert.equal(
    io.stderr.text(),
    cursorHide +
      "niceeval exp local  0.0s\n  2 total · 0 reused · 0 running · 2 queued · 0 passed · 0 failed · 0 errored\n" +
      "\x1b[2A\x1b[G\x1b[J" + cursorShow,
  );
  assert.ok(
    io.stdout.text().startsWith(
      "PLAN\n  2 attempts · 2 evals × 1 config · concurrency 2 (from config)\nFAILED  0.0s\n",
    ),
  );
  assert.ok(!io.stdout.text().includes("\x1b"));
});

Deno.test("humanOutput() registers a terminal restore for a hard exit and drops it once the panel is gone", () => {
  const restores = new Set<() => void>();
  const io: FakeIo = {
    ...createFakeIo({ isTerminal: true, columns: 70, env: { NO_COLOR: "1" } }),
    atExit: (restore) => {
      restores.add(restore);
      return () => restores.delete(restore);
    },
  };
  const output = humanOutput(context(io));
  output.start();
  assert.equal(restores.size, 1);
  for (const restore of restores) restore();
  assert.ok(
    io.stderr.text().endsWith("\x1b[2A\x1b[G\x1b[J" + cursorShow),
    "a hard exit erases the panel and shows the cursor",
  );
  output.forced();
  assert.equal(restores.size, 0);
  assert.equal(
    io.stdout.text().split("\n").at(-2),
    "INTERRUPTED  forced exit: unfinished Runs were left unpublished",
  );
  assert.equal(io.clock.countTimers(), 0);
});
