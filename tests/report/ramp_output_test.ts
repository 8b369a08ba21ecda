/** The ramp in human and NDJSON output (OUT-1, OUT-5, OUT-J2) and in the live panel (OUT-H7). */
import assert from "node:assert/strict";
import type { RunEvent } from "../../src/_shared/mod.ts";
import {
  createPanelState,
  heartbeatLine,
  rampLine,
  reducePanel,
  renderPanel,
} from "../../src/panel/mod.ts";
import { NdjsonReporter, PermanentLines, planLines } from "../../src/report/mod.ts";
import { sketchPlan } from "../_fakes/plans.ts";
import { panelStart, T0 } from "../panel/_events.ts";

type RampEvent = Extract<RunEvent, { type: "ramp" }>;

function rampEvent(over: Partial<RampEvent>): RampEvent {
  return {
    type: "ramp",
    at: T0 + 30_000,
    cap: 6,
    previousCap: 4,
    from: 4,
    to: 16,
    state: "climbing",
    cause: "saturated",
    reason: null,
    ...over,
  };
}

const plan = sketchPlan([{ id: "x", evals: [["a", "pass"], ["b", "pass"]] }]);

Deno.test("S152 OUT-1: PLAN reads concurrency <from>→<to> (ramp from flag)", () => {
  const ramp = { from: 4, to: 16, source: "flag" as const, held: null };
  assert.deepEqual(planLines({ plan, cap: 4, capAnnotation: "ramp from flag", ramp }), [
    "PLAN",
    "  2 attempts (2 evals × 1 experiment) · concurrency 4→16 (ramp from flag)",
  ]);
});

Deno.test("S154 OUT-1: a hold in force at start ends PLAN line 1 with ramp held: <reason>", () => {
  const ramp = { from: 2, to: 8, source: "config" as const, held: "quota" };
  assert.equal(
    planLines({ plan, cap: 2, capAnnotation: "ramp from config", ramp })[1],
    "  2 attempts (2 evals × 1 experiment) · concurrency 2→8 (ramp from config) · ramp held: quota",
  );
});

Deno.test("OUT-J2: the ramp event and the start line's ramp are serialized with every field", () => {
  const lines: Record<string, unknown>[] = [];
  const reporter = new NdjsonReporter((text) => {
    for (const line of text.trim().split("\n")) lines.push(JSON.parse(line));
  }, { now: () => T0, runIdOf: () => "r" });
  const ramp = { from: 4, to: 16, step: 3, windowMs: 30_000, held: null };
  reporter.start(plan, {
    invocationId: "i",
    startedAt: T0,
    recordRoot: "/r",
    concurrency: 4,
    concurrencySource: "ramp-flag",
    concurrencyProvider: null,
    ramp,
    runs: [],
  });
  reporter.event(rampEvent({}));
  assert.deepEqual(lines[0]!.ramp, ramp);
  assert.equal(lines[0]!.concurrencySource, "ramp-flag");
  assert.deepEqual(lines[1], {
    type: "ramp",
    at: new Date(T0 + 30_000).toISOString(),
    cap: 6,
    previousCap: 4,
    from: 4,
    to: 16,
    state: "climbing",
    cause: "saturated",
    reason: null,
  });
});

Deno.test("S146 OUT-5: plain output prints ramp changes; the live panel's permanent lines do not", () => {
  const out: string[] = [];
  const plain = new PermanentLines(plan, (l) => out.push(l), { rampLines: true });
  plain.event(rampEvent({}));
  plain.event(rampEvent({ cap: 4, previousCap: 6, state: "backing off", cause: "pushback" }));
  plain.event(rampEvent({ cap: 4, previousCap: 4, state: "held", cause: "hold", reason: "quota" }));
  plain.event(
    rampEvent({ cap: 5, previousCap: 8, from: 2, to: 5, state: "at ceiling", cause: "range" }),
  );
  assert.deepEqual(out, [
    "ramp: cap 4 → 6 (climbing)",
    "ramp: cap 6 → 4 (backing off (rate limit))",
    "ramp: held: quota",
    "ramp: cap 8 → 5 (range 2–5)",
  ]);
  const live: string[] = [];
  new PermanentLines(plan, (l) => live.push(l)).event(rampEvent({}));
  assert.deepEqual(live, []);
});

Deno.test("OUT-5 OUT-H7: the panel's ramp line follows ramp events", () => {
  const start = {
    ...panelStart(20, 0),
    ramp: { cap: 4, from: 4, to: 16, state: "steady" as const, reason: null },
  };
  let state = createPanelState(start);
  assert.equal(rampLine(state.ramp!), "ramp cap 4 · range 4–16 · steady");
  state = reducePanel(state, rampEvent({ cap: 9, state: "climbing" }));
  const lines = renderPanel(state, { width: 72, now: T0 + 12_000, color: false, boxed: true });
  assert.ok(lines.some((l) => l.includes("ramp cap 9 · range 4–16 · climbing")), lines.join("\n"));
  state = reducePanel(state, rampEvent({ cap: 7, state: "backing off", cause: "pushback" }));
  assert.equal(rampLine(state.ramp!), "ramp cap 7 · range 4–16 · backing off (rate limit)");
  state = reducePanel(state, rampEvent({ cap: 7, state: "held", cause: "hold", reason: "quota" }));
  assert.equal(rampLine(state.ramp!), "ramp cap 7 · range 4–16 · held: quota");
});

Deno.test("OUT-H7: without a ramp the panel has no ramp line", () => {
  const lines = renderPanel(createPanelState(panelStart(2, 0)), {
    width: 72,
    now: T0,
    color: false,
    boxed: true,
  });
  assert.ok(lines.every((l) => !l.includes("ramp")));
});

Deno.test("OUT-H16: the plain heartbeat names the cap only when given (ramped runs)", () => {
  const state = createPanelState(panelStart(4, 0));
  assert.doesNotMatch(heartbeatLine(state, T0 + 30_000), /cap/);
  assert.match(heartbeatLine(state, T0 + 30_000, 6), / · cap 6$/);
});
