import assert from "node:assert/strict";
import type { RunEvent } from "../../src/_shared/mod.ts";
import {
  countersBalanced,
  createPanelState,
  type PanelState,
  reducePanel,
} from "../../src/panel/mod.ts";
import {
  activity,
  backoff,
  diagnostic,
  ended,
  fold,
  interrupted,
  panelStart,
  progress,
  setup,
  skipped,
  slot,
  started,
} from "./_events.ts";

const A = slot(0, "x", "a");
const B = slot(1, "x", "b");
const C = slot(2, "x", "c");
const D = slot(3, "y", "a");
const E = slot(4, "y", "b");
const F = slot(5, "y", "c");
const G = slot(6, "y", "d");

Deno.test("S40 reducePanel() keeps total = reused + running + queued + passed + failed + errored + skipped after every event", () => {
  // 9 planned, 2 carried: carry, skips, an undispatched error, backoff and an interrupt.
  const events: RunEvent[] = [
    started(A, 0),
    started(B, 0),
    backoff(B, 100, "sleeping", 1, 2_000),
    started(C, 150),
    skipped(D, 200, "early-exit"),
    skipped(G, 250, "budget-exhausted"),
    { type: "slot_errored", at: 0, slot: E, code: "experiment-setup-failed", message: "boom" },
    ended(A, 300, "passed"),
    backoff(B, 2_100, "resumed", 1, 2_000),
    ended(B, 2_200, "failed"),
    interrupted(2_300),
    skipped(F, 2_300, "interrupted"),
    ended(C, 2_400, "interrupted"),
  ];
  let state: PanelState = createPanelState(panelStart(9, 2));
  assert.ok(countersBalanced(state.counters));
  for (const event of events) {
    state = reducePanel(state, event);
    assert.ok(countersBalanced(state.counters), `${event.type}: ${JSON.stringify(state.counters)}`);
  }
  assert.deepEqual(state.counters, {
    total: 9,
    reused: 2,
    running: 0,
    backoff: 0,
    queued: 0,
    passed: 1,
    failed: 1,
    errored: 1,
    skipped: 4,
  });
  assert.equal(state.interrupted, true);
});

Deno.test("S39 reducePanel() counts Attempts in send backoff as running and backoff until they resume (RUN-2)", () => {
  const state = fold(panelStart(4, 0, { cap: 2 }), [
    started(A, 0),
    started(B, 0),
    backoff(A, 10, "sleeping", 1, 1_000),
    backoff(B, 10, "sleeping", 1, 1_000),
    started(C, 10),
    started(D, 10),
  ]);
  assert.deepEqual([state.counters.running, state.counters.backoff], [4, 2]);
  const resumed = fold(panelStart(4, 0), [
    started(A, 0),
    backoff(A, 10, "sleeping", 1, 1_000),
    backoff(A, 1_010, "resumed", 1, 1_000),
  ]);
  assert.deepEqual([resumed.counters.running, resumed.counters.backoff], [1, 0]);
  assert.equal(resumed.attemptRows[0]?.backoff, null);
});

Deno.test("reducePanel() keeps a backoff cut short counted until its Attempt settles", () => {
  const state = fold(panelStart(1, 0), [started(A, 0), backoff(A, 10, "sleeping", 1, 60_000)]);
  assert.equal(state.counters.backoff, 1);
  const settled = reducePanel(state, ended(A, 20, "errored"));
  assert.deepEqual([settled.counters.running, settled.counters.backoff], [0, 0]);
});

Deno.test("reducePanel() fills the position a settled Attempt freed before appending rows (OUT-H7)", () => {
  const state = fold(panelStart(4, 0), [
    started(A, 0),
    started(B, 0),
    started(C, 0),
    ended(B, 10, "passed"),
    started(D, 20),
    ended(A, 30, "passed"),
  ]);
  assert.deepEqual(state.attemptRows.map((r) => r?.evalId ?? null), [null, "a", "c"]);
  assert.deepEqual(state.attemptRows.map((r) => r?.experimentId ?? null), [null, "y", "x"]);
  const trimmed = fold(panelStart(2, 0), [started(A, 0), started(B, 0), ended(B, 5, "passed")]);
  assert.equal(trimmed.attemptRows.length, 1, "trailing holes are dropped");
});

Deno.test("reducePanel() shows an experiment setup with its latest progress while it runs (S23, OUT-4)", () => {
  const running = fold(panelStart(2, 0), [
    setup("e1", 0, "started"),
    progress("e1", 500, "starting tunnel"),
  ]);
  assert.deepEqual(running.scopeRows, [
    {
      key: "setup:e1",
      text: "experiment setup · e1",
      since: running.start.startedAt,
      detail: "starting tunnel",
    },
  ]);
  assert.equal(running.counters.queued, 2);
  assert.deepEqual(reducePanel(running, setup("e1", 900, "done")).scopeRows, []);
  assert.deepEqual(reducePanel(running, setup("e1", 900, "failed", "no db")).scopeRows, []);
});

Deno.test("reducePanel() sums estimated costs and keeps the latest activity of each Attempt", () => {
  const state = fold(panelStart(3, 0), [
    started(A, 0),
    started(B, 0),
    started(C, 0),
    activity(C, 5, "running eval · tool: make test"),
    ended(A, 10, "passed", 0.25),
    ended(B, 20, "scored", null),
  ]);
  assert.equal(state.costUSD, 0.25);
  assert.equal(
    state.attemptRows.find((r) => r?.evalId === "c")?.activity,
    "running eval · tool: make test",
  );
  assert.equal(state.counters.passed, 2, "a scored Attempt counts as passed");
  assert.equal(fold(panelStart(1, 0), [started(A, 0), ended(A, 1, "passed")]).costUSD, null);
});

Deno.test("reducePanel() ignores diagnostics and never changes the state it was given", () => {
  const before = fold(panelStart(2, 0), [started(A, 0)]);
  const copy = structuredClone(before);
  reducePanel(before, ended(A, 5, "failed"));
  reducePanel(before, backoff(A, 5, "sleeping", 1, 10));
  assert.deepEqual(before, copy);
  assert.equal(reducePanel(before, diagnostic(5, "warning", "x", "y")), before);
});
