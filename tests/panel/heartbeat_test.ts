import assert from "node:assert/strict";
import { HEARTBEAT_SILENCE_MS, heartbeatLine, SilenceTimer } from "../../src/panel/mod.ts";
import { createFakeClock } from "../_fakes/clock.ts";
import { backoff, fold, panelStart, slot, started, T0 } from "./_events.ts";

Deno.test("SilenceTimer fires after 30 s without output and again after each further 30 s (OUT-H16)", async () => {
  const clock = createFakeClock();
  const beats: number[] = [];
  const timer = new SilenceTimer(clock, { onSilence: () => beats.push(clock.now() - T0) });
  timer.touch();
  await clock.tickAsync(HEARTBEAT_SILENCE_MS - 1);
  assert.deepEqual(beats, []);
  await clock.tickAsync(1);
  assert.deepEqual(beats, [30_000]);
  await clock.tickAsync(10_000);
  timer.touch();
  await clock.tickAsync(29_999);
  assert.deepEqual(beats, [30_000], "output restarts the silence");
  await clock.tickAsync(30_001);
  assert.deepEqual(beats, [30_000, 70_000, 100_000]);
  timer.stop();
  timer.touch();
  assert.equal(clock.countTimers(), 0, "a stopped timer leaves nothing behind and ignores touches");
});

Deno.test("SilenceTimer keeps one timer however often it is touched, and counts silence from the last touch", async () => {
  const clock = createFakeClock();
  const beats: number[] = [];
  const timer = new SilenceTimer(clock, { onSilence: () => beats.push(clock.now() - T0) });
  for (let ms = 0; ms < 50_000; ms += 500) {
    timer.touch();
    assert.ok(clock.countTimers() <= 1, `${clock.countTimers()} timers at ${ms} ms`);
    await clock.tickAsync(500);
  }
  assert.deepEqual(beats, [], "output every 500 ms is never silent for 30 s");
  await clock.tickAsync(29_499);
  assert.deepEqual(beats, []);
  await clock.tickAsync(1);
  assert.deepEqual(beats, [79_500]);
  await clock.tickAsync(30_000);
  assert.deepEqual(beats, [79_500, 109_500]);
  timer.stop();
  assert.equal(clock.countTimers(), 0);
});

Deno.test("heartbeatLine() reads … <elapsed> · <counters> with backoff when non-zero (OUT-H16)", () => {
  const a = slot(0, "x", "a");
  const state = fold(panelStart(3, 1), [started(a, 0), backoff(a, 10, "sleeping", 1, 5_000)]);
  assert.equal(
    heartbeatLine(state, T0 + 90_000),
    "… 1m 30s · 3 total · 1 reused · 1 running · 1 backoff · 1 queued · 0 passed · 0 failed · 0 errored · 0 skipped",
  );
});
