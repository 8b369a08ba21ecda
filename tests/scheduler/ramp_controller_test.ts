/** The ramp's window controller alone on fake time: every row of RAMP-4 and every fact of RAMP-5. */
import assert from "node:assert/strict";
import type { AttemptResult, RunEvent } from "../../src/_shared/mod.ts";
import {
  RampController,
  type RampControlRead,
  type RampSettings,
} from "../../src/scheduler/ramp.ts";
import { RAMP_PROBE_AFTER_WINDOWS } from "../../src/scheduler/constants.ts";
import { createFakeClock } from "../_fakes/clock.ts";
import { result } from "../_fakes/results.ts";

const W = 10_000;

/** A controller over a fake gate whose held and queued counts the test sets. */
function rig(settings: Partial<RampSettings> = {}, control?: () => RampControlRead) {
  const clock = createFakeClock();
  const events: RunEvent[] = [];
  const gate = { cap: 0, held: 0, queued: 10 };
  const ramp = new RampController(
    { from: 2, to: 8, step: 2, windowMs: W, ...settings },
    {
      clock,
      emit: (e) => events.push(e),
      setCap: (cap) => void (gate.cap = cap),
      held: () => gate.held,
      queued: () => gate.queued,
      ...(control ? { readControl: control } : {}),
    },
  );
  /** Sets the held count (as the gate would report a change). */
  const hold = (n: number) => {
    gate.held = n;
    ramp.observe();
  };
  const rampEvents = () => events.filter((e) => e.type === "ramp");
  /** Fills the cap and lets one whole window pass. */
  const saturatedWindow = async () => {
    hold(ramp.cap);
    await clock.tickAsync(W);
  };
  return { clock, events, gate, ramp, hold, rampEvents, saturatedWindow };
}

function errored(message: string, code = "agent-send-failed"): AttemptResult {
  return result({
    attemptId: "a",
    verdict: "errored",
    outcome: "errored",
    error: { code, phase: "agent.send", message, scope: "attempt", location: null, stack: null },
  });
}

Deno.test("RAMP-3: the cap starts at from; nothing moves before the first grant", async () => {
  const r = rig();
  assert.equal(r.ramp.cap, 2);
  r.hold(2);
  await r.clock.tickAsync(5 * W);
  assert.equal(r.ramp.cap, 2);
  assert.equal(r.gate.cap, 0); // never set
  assert.deepEqual(r.rampEvents(), []);
});

Deno.test("RAMP-4 step 5: a clean saturated window climbs by step with a climbing event", async () => {
  const r = rig();
  r.ramp.start();
  await r.saturatedWindow();
  assert.equal(r.gate.cap, 4);
  const [event] = r.rampEvents();
  assert.deepEqual(
    { ...event, at: 0 },
    {
      type: "ramp",
      at: 0,
      cap: 4,
      previousCap: 2,
      from: 2,
      to: 8,
      state: "climbing",
      cause: "saturated",
      reason: null,
    },
  );
});

Deno.test("RAMP-4 windows are contiguous from the first grant", async () => {
  const r = rig();
  await r.clock.tickAsync(1234);
  r.ramp.start();
  const startedAt = r.clock.now();
  r.hold(2);
  await r.clock.tickAsync(W);
  r.hold(4);
  await r.clock.tickAsync(W);
  assert.deepEqual(r.rampEvents().map((e) => e.at - startedAt), [W, 2 * W]);
});

Deno.test("S139 RAMP-5: under 90% of the window at the cap is not saturated", async () => {
  const r = rig();
  r.ramp.start();
  r.hold(2);
  await r.clock.tickAsync(W * 0.85);
  r.hold(1);
  await r.clock.tickAsync(W * 0.15);
  assert.equal(r.ramp.cap, 2);
  assert.equal(r.ramp.status().state, "steady");
  assert.deepEqual(r.rampEvents(), []);
});

Deno.test("RAMP-5: exactly 90% of the window at the cap is saturated", async () => {
  const r = rig();
  r.ramp.start();
  r.hold(1);
  await r.clock.tickAsync(W * 0.1);
  r.hold(2);
  await r.clock.tickAsync(W * 0.9);
  assert.equal(r.ramp.cap, 4);
});

Deno.test("RAMP-5: a full window with nothing queued at its end is not saturated", async () => {
  const r = rig();
  r.ramp.start();
  r.gate.queued = 0;
  await r.saturatedWindow();
  assert.equal(r.ramp.cap, 2);
});

Deno.test("S140 RAMP-4 step 5: an errored settlement in a saturated window blocks the increase", async () => {
  const r = rig();
  r.ramp.start();
  r.hold(2);
  r.ramp.settled(errored("boom", "test-failed"));
  await r.clock.tickAsync(W);
  assert.equal(r.ramp.cap, 2);
  await r.saturatedWindow(); // the counter was reset
  assert.equal(r.ramp.cap, 4);
});

Deno.test("S141 RAMP-5: 3 network retries at cap 4 are a surge; 2 are not", async () => {
  const r = rig({ from: 4, to: 12 });
  r.ramp.start();
  r.hold(4);
  for (let i = 0; i < 3; i++) r.ramp.retried("network");
  await r.clock.tickAsync(W);
  assert.equal(r.ramp.cap, 4);
  for (let i = 0; i < 2; i++) r.ramp.retried("network");
  await r.clock.tickAsync(W);
  assert.equal(r.ramp.cap, 6);
});

Deno.test("RAMP-5: the surge threshold is ceil(cap / 4) above 12", async () => {
  const r = rig({ from: 16, to: 32 });
  r.ramp.start();
  r.hold(16);
  for (let i = 0; i < 3; i++) r.ramp.retried("network");
  await r.clock.tickAsync(W);
  assert.equal(r.ramp.cap, 18); // 3 < max(3, ceil(16 / 4))
  r.hold(18);
  for (let i = 0; i < 5; i++) r.ramp.retried("network");
  await r.clock.tickAsync(W);
  assert.equal(r.ramp.cap, 18); // 5 ≥ max(3, ceil(18 / 4))
});

Deno.test("S142 RAMP-4 fast pushback: the first rejection steps down at once; a rejection before any new grant does not", async () => {
  const r = rig({ from: 2, to: 8, step: 2 });
  r.ramp.start();
  for (const _ of [1, 2]) await r.saturatedWindow(); // 2 → 4 → 6
  assert.equal(r.ramp.cap, 6);
  r.hold(6);
  r.ramp.retried("rate_limit");
  assert.equal(r.ramp.cap, 4);
  assert.equal(r.gate.cap, 4);
  const last = r.rampEvents().at(-1)!;
  assert.deepEqual([last.state, last.cause, last.previousCap], ["backing off", "pushback", 6]);
  await r.clock.tickAsync(W); // the window end does not step down again for it
  assert.equal(r.ramp.cap, 4);
  // Nothing was granted since: the next rejection answers a request sent under cap 6.
  r.ramp.retried("rate_limit");
  await r.clock.tickAsync(W);
  assert.equal(r.ramp.cap, 4);
  assert.equal(r.ramp.status().state, "backing off");
});

Deno.test("RAMP-4 fast pushback: at most one step-down per window; a rejection after a grant steps down in the next", async () => {
  const r = rig({ from: 2, to: 12, step: 4 });
  r.ramp.start();
  for (const _ of [1, 2]) await r.saturatedWindow(); // 2 → 6 → 10
  r.ramp.retried("rate_limit");
  assert.equal(r.ramp.cap, 6);
  r.hold(5);
  r.hold(6); // a grant under the lowered cap
  r.ramp.retried("rate_limit");
  assert.equal(r.ramp.cap, 6, "one step-down per window");
  await r.clock.tickAsync(W);
  assert.equal(r.ramp.cap, 6);
  r.hold(5);
  r.hold(6);
  r.ramp.retried("rate_limit");
  assert.equal(r.ramp.cap, 2);
  const causes = r.rampEvents().filter((e) => e.cause === "pushback").map((e) => e.cap);
  assert.deepEqual(causes, [6, 2]);
});

Deno.test("RAMP-4 fast pushback: no climb back for RAMP_PROBE_AFTER_WINDOWS windows, then probes one at a time; a failed probe goes back one", async () => {
  const r = rig({ from: 2, to: 32, step: 6 });
  r.ramp.start();
  for (const _ of [1, 2]) await r.saturatedWindow(); // 2 → 8 → 14
  assert.equal(r.ramp.cap, 14);
  r.ramp.retried("rate_limit");
  assert.equal(r.ramp.cap, 8);
  await r.clock.tickAsync(W); // the step-down window
  const caps: number[] = [];
  for (let i = 0; i < RAMP_PROBE_AFTER_WINDOWS + 2; i++) {
    await r.saturatedWindow();
    caps.push(r.ramp.cap);
  }
  const quiet = Array(RAMP_PROBE_AFTER_WINDOWS - 1).fill(8);
  assert.deepEqual(caps, [...quiet, 9, 10, 11]);
  r.hold(11);
  r.ramp.retried("rate_limit");
  assert.equal(r.ramp.cap, 10);
  assert.equal(r.rampEvents().at(-1)!.cause, "pushback");
});

Deno.test("RETRY-2 deviation: a ramped run sleeps a rate_limit retry for the server's hint", () => {
  const r = rig();
  assert.equal(r.ramp.backoffMs("rate_limit", 1000), 1000);
  assert.equal(r.ramp.backoffMs("rate_limit", 120_000), 60_000);
  assert.equal(r.ramp.backoffMs("rate_limit", 0), null);
  assert.equal(r.ramp.backoffMs("network", 1000), null);
});

Deno.test("S143 RAMP-4 step 3: pushback then a clean saturated window: no decrease, no increase in the first", async () => {
  const r = rig();
  r.ramp.start();
  r.hold(2);
  r.ramp.retried("rate_limit");
  await r.clock.tickAsync(W);
  assert.equal(r.ramp.cap, 2);
  assert.equal(r.ramp.status().streak, 1);
  await r.clock.tickAsync(W);
  assert.equal(r.ramp.cap, 4);
  assert.equal(r.ramp.status().streak, 0);
});

Deno.test("RAMP-5: a send rejected for good with rate_limit is pushback", async () => {
  const r = rig({ from: 2, to: 8 });
  r.ramp.start();
  await r.saturatedWindow();
  assert.equal(r.ramp.cap, 4);
  const terminal = errored("HTTP 429 · retries exhausted (4 tries, rate_limit)");
  r.ramp.settled(terminal);
  await r.clock.tickAsync(W);
  r.ramp.settled(terminal);
  await r.clock.tickAsync(W);
  assert.equal(r.ramp.cap, 2);
  assert.equal(r.ramp.status().state, "backing off");
});

Deno.test("S144 RAMP-4: constant saturation never exceeds to; constant pushback never drops below from", async () => {
  const r = rig({ from: 3, to: 8, step: 2 });
  r.ramp.start();
  for (let i = 0; i < 6; i++) await r.saturatedWindow();
  assert.equal(r.ramp.cap, 8);
  assert.equal(r.ramp.status().state, "at ceiling");
  for (let i = 0; i < 12; i++) {
    r.ramp.retried("rate_limit");
    await r.clock.tickAsync(W);
    assert.ok(r.ramp.cap >= 3);
  }
  assert.equal(r.ramp.cap, 3);
  assert.ok(r.rampEvents().every((e) => e.cap >= 3 && e.cap <= 8));
});

Deno.test("RAMP-4 step 6: at ceiling, steady and held are the resting states", async () => {
  const r = rig({ from: 2, to: 4, step: 2 });
  r.ramp.start();
  await r.saturatedWindow();
  assert.equal(r.ramp.status().state, "climbing");
  await r.saturatedWindow();
  assert.equal(r.ramp.status().state, "at ceiling");
  const states = r.rampEvents().map((e) => e.state);
  assert.deepEqual(states, ["climbing", "at ceiling"]);
});

Deno.test("RAMP-4 step 7: no event when cap, range and state stay", async () => {
  const r = rig();
  r.ramp.start();
  r.hold(1);
  await r.clock.tickAsync(3 * W);
  assert.deepEqual(r.rampEvents(), []);
});

Deno.test("S149 RAMP-12 RAMP-4 step 1: a range override raises the cap into it at the next window", async () => {
  let control: RampControlRead = { hold: null, range: null };
  const r = rig({ from: 2, to: 8 }, () => control);
  r.ramp.start();
  r.hold(1);
  control = { hold: null, range: { from: 4, to: 8 } };
  await r.clock.tickAsync(W);
  assert.equal(r.gate.cap, 4);
  const last = r.rampEvents().at(-1)!;
  assert.deepEqual([last.from, last.to, last.cause], [4, 8, "range"]);
});

Deno.test("RAMP-12: a range whose to is below the cap lowers it; reset restores the configured range", async () => {
  let control: RampControlRead = { hold: null, range: null };
  const r = rig({ from: 2, to: 8 }, () => control);
  r.ramp.start();
  for (const _ of [1, 2, 3]) await r.saturatedWindow();
  assert.equal(r.ramp.cap, 8);
  control = { hold: null, range: { from: 2, to: 5 } };
  await r.clock.tickAsync(W);
  assert.equal(r.gate.cap, 5);
  control = { hold: null, range: null };
  await r.clock.tickAsync(W);
  assert.deepEqual([r.ramp.status().from, r.ramp.status().to], [2, 8]);
});

Deno.test("RAMP-8: a hold freezes increases and reports held with its reason", async () => {
  let control: RampControlRead = { hold: { reason: "quota" }, range: null };
  const r = rig({}, () => control);
  assert.equal(r.ramp.status().state, "held");
  r.ramp.start();
  for (const _ of [1, 2]) await r.saturatedWindow();
  assert.equal(r.ramp.cap, 2);
  control = { hold: null, range: null };
  await r.saturatedWindow();
  assert.equal(r.ramp.cap, 4);
  const last = r.rampEvents().at(-1)!;
  assert.equal(last.state, "climbing");
});

Deno.test("RAMP-8: a hold placed later emits a held event with cause hold", async () => {
  let control: RampControlRead = { hold: null, range: null };
  const r = rig({}, () => control);
  r.ramp.start();
  r.hold(1);
  control = { hold: { reason: "quota" }, range: null };
  await r.clock.tickAsync(W);
  const [event] = r.rampEvents();
  assert.deepEqual([event!.state, event!.cause, event!.reason], ["held", "hold", "quota"]);
});

Deno.test("S151 RAMP-8: held, pushback in two consecutive windows still steps down", async () => {
  let control: RampControlRead = { hold: null, range: null };
  const r = rig({ from: 2, to: 8 }, () => control);
  r.ramp.start();
  await r.saturatedWindow();
  assert.equal(r.ramp.cap, 4);
  control = { hold: { reason: "quota" }, range: null };
  r.ramp.retried("rate_limit");
  await r.clock.tickAsync(W);
  r.ramp.retried("rate_limit");
  await r.clock.tickAsync(W);
  assert.equal(r.ramp.cap, 2);
});

Deno.test("S150 RAMP-9: an invalid control file warns once and keeps range and hold", async () => {
  let control: RampControlRead = { hold: { reason: "quota" }, range: { from: 3, to: 6 } };
  const r = rig({ from: 2, to: 8 }, () => control);
  r.ramp.start();
  control = { invalid: "Unexpected token" };
  for (const _ of [1, 2, 3]) await r.saturatedWindow();
  const warnings = r.events.filter((e) =>
    e.type === "diagnostic" && e.code === "ramp-control-invalid"
  );
  assert.equal(warnings.length, 1);
  const s = r.ramp.status();
  assert.deepEqual([s.cap, s.from, s.to, s.heldReason], [3, 3, 6, "quota"]);
});

Deno.test("S154 RAMP-9: a hold in force at start holds from the first window", async () => {
  const r = rig({}, () => ({ hold: { reason: "night" }, range: null }));
  assert.deepEqual([r.ramp.status().state, r.ramp.status().heldReason], ["held", "night"]);
  r.ramp.start();
  for (const _ of [1, 2, 3]) await r.saturatedWindow();
  assert.equal(r.ramp.cap, 2);
});

Deno.test("RAMP-4: stop() ends the windows and leaves no timer", async () => {
  const r = rig();
  r.ramp.start();
  assert.equal(r.clock.countTimers(), 1);
  r.ramp.stop();
  assert.equal(r.clock.countTimers(), 0);
  await r.saturatedWindow();
  assert.equal(r.ramp.cap, 2);
});
