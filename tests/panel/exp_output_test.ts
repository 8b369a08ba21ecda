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

/** The end panel of the run where `a` failed (Attempt `locator`) and `b` passed. */
function endPanel(duration: string, locator: string): string[] {
  return [
    `FAILED  ${duration}`,
    "  1 passed · 1 failed · 0 errored  (0 reused)",
    "  15 new tok",
    "RESULTS  1 experiment",
    "  local  1/2 passed (50%) · 1 failed · 1.0s · 15 new tok",
    "    a  0/1 passed · 1 failed",
    "FAILURES  1 failed · 0 errored",
    "  turn succeeded · expected completed · received failed  (1×)",
    "    reason: deterministic failure",
    `    ✗ ${locator}  local  a#0`,
    "NEXT",
    "  niceeval show --run run-1",
    "  niceeval exp local --rerun",
  ];
}

function context(io: FakeIo): OutputContext {
  const planned = {
    plan: PLAN,
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

Deno.test("issue 18.4 OUT-H16 humanOutput() in plain mode prints a progress line every 10 s while Attempts run, and the heartbeat after 30 s of silence once all settled", async () => {
  const io = createFakeIo({ env: { CI: "1" } });
  const output = humanOutput(context(io));
  output.start();
  output.event(started(A, 0));
  await io.clock.tickAsync(45_000);
  output.event(started(B, 45_000));
  output.event(ended(A, 45_000, "failed"));
  await io.clock.tickAsync(25_000);
  output.event(ended(B, 70_000, "passed"));
  // The last line was the progress line at 65 s: the heartbeat is due at 95 s.
  await io.clock.tickAsync(24_999);
  const before = io.stdout.text();
  await io.clock.tickAsync(5_001);
  finish(io, output);
  assert.equal(io.clock.countTimers(), 0, "a finished run leaves no timer behind");
  const heartbeat =
    "… 1m 35s · 2 total · 0 reused · 0 running · 0 queued · 1 passed · 1 failed · 0 errored · 0 skipped";
  assert.ok(!before.includes(heartbeat));
  assert.equal(
    io.stdout.text(),
    [
      "PLAN",
      "  2 attempts (2 evals × 1 experiment) · concurrency 2 (from config)",
      "0/2 · 0 passed · 0 failed · 0 errored · ETA —",
      "0/2 · 0 passed · 0 failed · 0 errored · ETA —",
      "0/2 · 0 passed · 0 failed · 0 errored · ETA —",
      "0/2 · 0 passed · 0 failed · 0 errored · ETA —",
      `✗ a  local#0  failed  ${locatorOf("a-0")}`,
      "    turn succeeded · expected completed · received failed · deterministic failure",
      // Half of the Attempts settled: a line at once, then every 10 s.
      "1/2 · 0 passed · 1 failed · 0 errored · ETA 45s",
      "1/2 · 0 passed · 1 failed · 0 errored · ETA 35s",
      "1/2 · 0 passed · 1 failed · 0 errored · ETA 25s",
      // No progress line once the last Attempt settled; the heartbeat covers the silence after.
      heartbeat,
      ...endPanel("1m 40s", locatorOf("a-0")),
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

/** Dim, bold, cyan and red as picocolors spells them. */
const dim = (text: string) => `\x1b[2m${text}\x1b[22m`;
const bold = (text: string) => `\x1b[1m${text}\x1b[22m`;
const cyan = (text: string) => `\x1b[36m${text}\x1b[39m`;
const red = (text: string) => `\x1b[31m${text}\x1b[39m`;
/** A body line of an 80-column box: `│ <text padded to 76> │`. */
const body = (text: string) => `${dim("│")} ${text} ${dim("│")}\n`;
const BOTTOM = dim(`╰${"─".repeat(78)}╯`) + "\n";
/** Cursor up `lines`, to column 1, erase down. */
const erase = (lines: number) => `\x1b[${lines}A\x1b[G\x1b[J`;

/** Records every write of stdout and stderr in one list, so their interleaving is checked too. */
function writeLog(io: FakeIo): (readonly ["out" | "err", string])[] {
  const log: (readonly ["out" | "err", string])[] = [];
  for (const [name, sink] of [["out", io.stdout], ["err", io.stderr]] as const) {
    const write = sink.write;
    sink.write = (text) => {
      log.push([name, text]);
      write(text);
    };
  }
  return log;
}

Deno.test("OUT-H1 humanOutput() on a terminal draws the panel on stderr only, erases it for each stdout line and restores the cursor at the end", async () => {
  const io = createFakeIo({ isTerminal: true, columns: 80 });
  const log = writeLog(io);
  const output = humanOutput(context(io));
  output.start();
  output.event(started(A, 0));
  output.event(started(B, 0));
  await io.clock.tickAsync(1_000);
  output.event(ended(A, 1_000, "failed"));
  output.event(ended(B, 1_000, "passed"));
  finish(io, output);
  assert.equal(io.clock.countTimers(), 0);
  const top = (elapsed: string) =>
    `${dim("╭─")} ${bold("niceeval exp local")} ${dim(`${"─".repeat(50)} ${elapsed} ─╮`)}\n`;
  const counters = (running: number, queued: number) =>
    body(
      `2 total · 0 reused · ${running} running · ${queued} queued · 0 passed · 0 failed · 0 errored `,
    );
  const active = (elapsed: string) =>
    `${dim("├─")} ${bold("ACTIVE")} ${dim(`${"─".repeat(69)}┤`)}\n` +
    body(`${cyan("●")} a  local#0    ${elapsed}${" ".repeat(56)}`) +
    body(`${cyan("●")} b  local#0    ${elapsed}${" ".repeat(56)}`);
  const locator = locatorOf("a-0");
  assert.deepEqual(log, [
    [
      "out",
      `${dim("╭─")} ${bold("PLAN")} ${dim(`${"─".repeat(71)}╮`)}\n` +
      body("2 attempts (2 evals × 1 experiment) · concurrency 2 (from config)           ") +
      BOTTOM,
    ],
    ["err", "\x1b[?25l" + top("0.0s") + counters(0, 2) + BOTTOM],
    ["err", erase(3) + top("0.2s") + counters(2, 0) + active("0.2s") + BOTTOM],
    ["err", erase(6) + top("1.0s") + counters(2, 0) + active("1.0s") + BOTTOM],
    ["err", erase(6)],
    [
      "out",
      `${red("✗")} a  local#0  failed  ${locator}\n` +
      // 81 columns on an 80-column terminal: broken between words (issue 18.5).
      "    turn succeeded · expected completed · received failed ·\n" +
      "      deterministic failure\n",
    ],
    ["err", "\x1b[?25h"],
    [
      "out",
      `${dim("╭─")} ${bold(red("FAILED"))} ${dim(`${"─".repeat(62)} 1.0s ─╮`)}\n` +
      body("1 passed · 1 failed · 0 errored  (0 reused)                                 ") +
      body("15 new tok                                                                  ") +
      BOTTOM +
      `${dim("╭─")} ${bold("RESULTS")} ${dim(`${"─".repeat(53)} 1 experiment ─╮`)}\n` +
      body("local  1/2 passed (50%) · 1 failed · 1.0s · 15 new tok                      ") +
      body("  a  0/1 passed · 1 failed                                                  ") +
      BOTTOM +
      `${dim("╭─")} ${bold("FAILURES")} ${dim(`${"─".repeat(44)} 1 failed · 0 errored ─╮`)}\n` +
      body("turn succeeded · expected completed · received failed  (1×)                 ") +
      body("  reason: deterministic failure                                             ") +
      body(`  ${red("✗")} ${locator}  local  a#0                                              `) +
      BOTTOM +
      `${dim("╭─")} ${bold("NEXT")} ${dim(`${"─".repeat(71)}╮`)}\n` +
      body("niceeval show --run run-1                                                   ") +
      body("niceeval exp local --rerun                                                  ") +
      BOTTOM,
    ],
  ]);
});

Deno.test("OUT-H17 humanOutput() with NO_COLOR redraws an unboxed, colourless panel and prints unboxed panels", async () => {
  const io = createFakeIo({ isTerminal: true, columns: 80, env: { NO_COLOR: "1" } });
  const log = writeLog(io);
  const output = humanOutput(context(io));
  output.start();
  output.event(started(A, 0));
  output.event(started(B, 0));
  await io.clock.tickAsync(1_000);
  output.event(ended(A, 1_000, "failed"));
  output.event(ended(B, 1_000, "passed"));
  finish(io, output);
  const panel = (elapsed: string) =>
    `niceeval exp local  ${elapsed}\n` +
    "  2 total · 0 reused · 2 running · 0 queued · 0 passed · 0 failed · 0 errored\n" +
    `  ACTIVE\n  ● a  local#0    ${elapsed}\n  ● b  local#0    ${elapsed}\n`;
  const locator = locatorOf("a-0");
  assert.deepEqual(log, [
    ["out", "PLAN\n  2 attempts (2 evals × 1 experiment) · concurrency 2 (from config)\n"],
    [
      "err",
      cursorHide + "niceeval exp local  0.0s\n" +
      "  2 total · 0 reused · 0 running · 2 queued · 0 passed · 0 failed · 0 errored\n",
    ],
    ["err", erase(2) + panel("0.2s")],
    ["err", erase(5) + panel("1.0s")],
    ["err", erase(5)],
    [
      "out",
      `✗ a  local#0  failed  ${locator}\n` +
      // 81 columns on an 80-column terminal: broken between words (issue 18.5).
      "    turn succeeded · expected completed · received failed ·\n" +
      "      deterministic failure\n",
    ],
    ["err", cursorShow],
    [
      "out",
      [
        ...endPanel("1.0s", locator),
        "",
      ].join("\n"),
    ],
  ]);
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
  const panel = cursorHide + "niceeval exp local  0.0s\n" +
    "  2 total · 0 reused · 0 running · 2 queued · 0 passed · 0 failed\n";
  assert.equal(
    io.stderr.text(),
    panel + erase(2) + cursorShow,
    "a hard exit erases the panel and shows the cursor",
  );
  output.forced();
  assert.equal(restores.size, 0);
  assert.equal(io.stderr.text(), panel + erase(2) + cursorShow, "nothing more on stderr");
  assert.equal(
    io.stdout.text(),
    "PLAN\n  2 attempts (2 evals × 1 experiment) · concurrency 2 (from config)\n" +
      "INTERRUPTED  forced exit: unfinished Runs were left unpublished\n",
  );
  assert.equal(io.clock.countTimers(), 0);
});
