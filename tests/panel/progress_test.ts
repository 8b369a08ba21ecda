/**
 * The progress line of plain output and the ETA (issue 18 item 4, docs/progress.md), on a fake
 * clock: which lines are written at which time, with their exact text.
 */
import assert from "node:assert/strict";
import type { AttemptVerdict, RunEvent } from "../../src/_shared/mod.ts";
import { CounterTally, estimateRemainingMs, etaText, PlainProgress } from "../../src/panel/mod.ts";
import { NO_ETA_STATS } from "../../src/panel/eta.ts";
import { createFakeClock } from "../_fakes/clock.ts";
import { ended, panelStart, skipped, slot, started, T0 } from "./_events.ts";

/** Folds `events` (at their times) into a tally watched by a progress; returns `<s>s <line>`. */
async function run(
  start: { total: number; reused: number },
  events: readonly RunEvent[],
  untilMs: number,
): Promise<{ lines: string[]; timers: number }> {
  const clock = createFakeClock(T0);
  const tally = new CounterTally(panelStart(start.total, start.reused));
  const lines: string[] = [];
  const progress = new PlainProgress({
    clock,
    tally,
    write: (line) => lines.push(`${(clock.now() - T0) / 1000}s ${line}`),
  });
  progress.start();
  for (const event of events) {
    await clock.tickAsync(event.at - clock.now());
    tally.event(event);
    progress.update();
  }
  await clock.tickAsync(T0 + untilMs - clock.now());
  const timers = clock.countTimers();
  progress.stop();
  return { lines, timers };
}

/** 30 Attempts, 3 at a time, 3 s each: #9, #19, #29 fail, #14 errors. */
function thirtyInThrees(): RunEvent[] {
  const events: RunEvent[] = [];
  const verdict = (i: number): AttemptVerdict =>
    i % 10 === 9 ? "failed" : i === 14 ? "errored" : "passed";
  for (let wave = 0; wave <= 10; wave++) {
    const at = wave * 3_000;
    for (let i = (wave - 1) * 3; i < wave * 3 && i >= 0; i++) {
      events.push(ended(slot(i, "x", `e${i}`), at, verdict(i)));
    }
    for (let i = wave * 3; i < wave * 3 + 3 && i < 30; i++) {
      events.push(started(slot(i, "x", `e${i}`), at));
    }
  }
  return events;
}

Deno.test("issue 18.4: the plain progress line comes at every tenth of 30 Attempts, with an ETA from settled durations, and never after the last", async () => {
  const { lines, timers } = await run({ total: 30, reused: 0 }, thirtyInThrees(), 60_000);
  assert.deepEqual(lines, [
    "3s 3/30 · 3 passed · 0 failed · 0 errored · ETA 27s",
    "6s 6/30 · 6 passed · 0 failed · 0 errored · ETA 24s",
    "9s 9/30 · 9 passed · 0 failed · 0 errored · ETA 21s",
    "12s 12/30 · 11 passed · 1 failed · 0 errored · ETA 18s",
    "15s 15/30 · 13 passed · 1 failed · 1 errored · ETA 15s",
    "18s 18/30 · 16 passed · 1 failed · 1 errored · ETA 12s",
    "21s 21/30 · 18 passed · 2 failed · 1 errored · ETA 9s",
    "24s 24/30 · 21 passed · 2 failed · 1 errored · ETA 6s",
    "27s 27/30 · 24 passed · 2 failed · 1 errored · ETA 3s",
  ]);
  assert.equal(timers, 0, "no timer is left once every Attempt settled");
});

Deno.test("issue 18.4: the plain progress line comes every 10 s while nothing settles, with ETA — before the first settle", async () => {
  const a = slot(0, "x", "a");
  const b = slot(1, "x", "b");
  const { lines } = await run(
    { total: 5, reused: 1 },
    [
      started(a, 0),
      started(b, 0),
      ended(a, 24_000, "failed"),
      skipped(slot(2, "x", "c"), 24_000, "halted"),
    ],
    41_000,
  );
  assert.deepEqual(lines, [
    "10s 0/4 · 0 passed · 0 failed · 0 errored · ETA —",
    "20s 0/4 · 0 passed · 0 failed · 0 errored · ETA —",
    // 1 of 4 settled (a new tenth): due at once, 2 s after the previous line having passed.
    "24s 1/4 · 0 passed · 1 failed · 0 errored · ETA 24s",
    // The skip is another tenth, but within 2 s of the previous line: it waits for 26 s.
    // One queued Attempt of the mean 24 s left, over the 1.92 lanes busy so far; b overran.
    "26s 2/4 · 0 passed · 1 failed · 0 errored · 1 skipped · ETA 13s",
    "36s 2/4 · 0 passed · 1 failed · 0 errored · 1 skipped · ETA 15s",
  ]);
});

Deno.test("issue 18.4: progress lines are never closer than 2 s however fast Attempts settle", async () => {
  const events: RunEvent[] = [];
  for (let i = 0; i < 10; i++) {
    events.push(started(slot(i, "x", `e${i}`), i * 500));
    events.push(ended(slot(i, "x", `e${i}`), (i + 1) * 500, "passed"));
  }
  const { lines } = await run({ total: 10, reused: 0 }, events, 30_000);
  assert.deepEqual(lines, [
    "2s 3/10 · 3 passed · 0 failed · 0 errored · ETA 3s",
    "4s 7/10 · 7 passed · 0 failed · 0 errored · ETA 1s",
  ]);
});

Deno.test("issue 18.4: a run with nothing to run prints no progress line", async () => {
  const { lines, timers } = await run({ total: 3, reused: 3 }, [], 60_000);
  assert.deepEqual(lines, []);
  assert.equal(timers, 0);
});

Deno.test("issue 18.4: the ETA shares the remaining work among the concurrency reached, never more lanes than Attempts left", () => {
  const stats = { firstStartAt: 0, settled: 4, settledMs: 40_000 };
  // Mean 10 s; 4 lanes were busy all along: 6 queued + 2 running at 4 s → (60 + 12) / 4.
  assert.equal(
    estimateRemainingMs({ stats, runningSince: [6_000, 6_000], queued: 6, now: 10_000 }),
    // busy = 40 + 4 + 4 = 48 s over 10 s of wall time: 4.8 lanes.
    (6 * 10_000 + 2 * 6_000) / 4.8,
  );
  // The last Attempt alone: one lane, whatever the concurrency before.
  assert.equal(
    estimateRemainingMs({ stats, runningSince: [8_000], queued: 0, now: 10_000 }),
    8_000,
  );
  assert.equal(
    estimateRemainingMs({ stats: NO_ETA_STATS, runningSince: [0], queued: 3, now: 5 }),
    null,
  );
  assert.equal(estimateRemainingMs({ stats, runningSince: [], queued: 0, now: 10_000 }), null);
  assert.equal(etaText(null), "ETA —");
  assert.equal(etaText(0), "ETA 1s");
  assert.equal(etaText(7_200), "ETA 8s");
  assert.equal(etaText(59_000), "ETA 59s");
  assert.equal(etaText(133_100), "ETA 2m 14s");
});
