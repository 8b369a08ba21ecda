import assert from "node:assert/strict";
import type { RunEvent } from "../../src/_shared/mod.ts";
import {
  type Counters,
  CounterTally,
  createPanelState,
  type PanelState,
  reducePanel,
} from "../../src/panel/mod.ts";
import { countersBalanced } from "../../src/panel/counters.ts";
import { createSeededRandom } from "../_fakes/random.ts";
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
    {
      type: "slot_errored",
      at: 0,
      slot: E,
      code: "experiment-setup-failed",
      phase: "experiment.setup",
      message: "boom",
    },
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

/**
 * One seeded random run: slots are started, retried, settled or left undispatched in random
 * order, with run-scope events in between. The model counts on its own, so the reducer is
 * compared with an independent tally after every event, not only with its own sum.
 */
function randomRun(seed: number): { start: ReturnType<typeof panelStart>; steps: Step[] } {
  const random = createSeededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random.next() * items.length)]!;
  const total = 5 + Math.floor(random.next() * 30);
  const reused = Math.floor(random.next() * 4);
  const start = panelStart(total, reused);
  const queued = Array.from({ length: total - reused }, (_, i) => slot(i, `x${i % 3}`, `e${i}`));
  const running = new Map<number, { ref: ReturnType<typeof slot>; backoff: boolean }>();
  const tally: { -readonly [K in keyof Counters]: number } = {
    ...createPanelState(start).counters,
  };
  const steps: Step[] = [];
  let ms = 0;
  const emit = (event: RunEvent, change: Partial<Record<keyof Counters, number>> = {}) => {
    for (const [k, d] of Object.entries(change)) tally[k as keyof Counters] += d;
    steps.push({
      event,
      counters: { ...tally },
      running: [...running.values()].map((r) => r.ref.evalId).sort(),
    });
  };
  let interruptedYet = false;
  while (queued.length > 0 || running.size > 0) {
    ms += Math.floor(random.next() * 500);
    const roll = random.next();
    const live = [...running.values()];
    if (queued.length > 0 && (roll < 0.35 || live.length === 0)) {
      const ref = queued.splice(Math.floor(random.next() * queued.length), 1)[0]!;
      if (random.next() < 0.8) {
        running.set(ref.position, { ref, backoff: false });
        emit(started(ref, ms), { queued: -1, running: +1 });
      } else if (random.next() < 0.5) {
        emit(skipped(ref, ms, pick(["early-exit", "budget-exhausted", "halted"] as const)), {
          queued: -1,
          skipped: +1,
        });
      } else {
        emit({
          type: "slot_errored",
          at: ms,
          slot: ref,
          code: "setup-failed",
          phase: "experiment.setup",
          message: "no",
        }, {
          queued: -1,
          errored: +1,
        });
      }
    } else if (roll < 0.55 && live.length > 0) {
      const row = pick(live);
      if (!row.backoff) {
        row.backoff = true;
        emit(backoff(row.ref, ms, "sleeping", 1, 1_000), { backoff: +1 });
      } else if (random.next() < 0.5) {
        row.backoff = false;
        emit(backoff(row.ref, ms, "resumed", 1, 1_000), { backoff: -1 });
      } else {
        emit(backoff(row.ref, ms, "sleeping", 2, 2_000));
      }
    } else if (roll < 0.65 && live.length > 0) {
      emit(activity(pick(live).ref, ms, pick(["running eval", "cleaning up"])));
    } else if (roll < 0.7) {
      emit(pick(
        [
          setup("x0", ms, "started"),
          setup("x0", ms, "done"),
          progress("x0", ms, "seeding"),
          diagnostic(ms, "warning", "w", "careful"),
          {
            type: "wait",
            at: ms,
            scope: "lane",
            key: "vm",
            experimentId: null,
            state: "started",
            detail: null,
          },
        ] satisfies RunEvent[],
      ));
    } else if (roll < 0.72 && !interruptedYet) {
      interruptedYet = true;
      emit(interrupted(ms));
    } else if (live.length > 0) {
      const row = pick(live);
      running.delete(row.ref.position);
      const verdict = pick(
        ["passed", "scored", "failed", "errored", "skipped", "interrupted"] as const,
      );
      const into = verdict === "scored"
        ? "passed"
        : verdict === "interrupted"
        ? "skipped"
        : verdict;
      emit(ended(row.ref, ms, verdict), {
        running: -1,
        [into]: +1,
        ...(row.backoff ? { backoff: -1 } : {}),
      });
    }
  }
  return { start, steps };
}

interface Step {
  readonly event: RunEvent;
  readonly counters: Counters;
  readonly running: readonly string[];
}

Deno.test("S40 reducePanel() matches an independent tally after every event of 200 seeded random runs (RUN-3, RUN-2)", () => {
  for (let seed = 1; seed <= 200; seed++) {
    const { start, steps } = randomRun(seed);
    let state = createPanelState(start);
    for (const [i, step] of steps.entries()) {
      state = reducePanel(state, step.event);
      const where = `seed ${seed}, event ${i} (${step.event.type})`;
      assert.deepEqual(state.counters, step.counters, where);
      assert.ok(countersBalanced(state.counters), where);
      assert.deepEqual(
        state.attemptRows.flatMap((r) => r ? [r.evalId] : []).sort(),
        step.running,
        `${where}: one ACTIVE row per running Attempt`,
      );
    }
    assert.equal(state.counters.running + state.counters.queued, 0, `seed ${seed} ends settled`);
  }
});

Deno.test("CounterTally counts exactly as reducePanel() after every event of 200 seeded random runs", () => {
  for (let seed = 1; seed <= 200; seed++) {
    const { start, steps } = randomRun(seed);
    const tally = new CounterTally(start);
    for (const [i, step] of steps.entries()) {
      tally.event(step.event);
      assert.deepEqual(
        tally.counters,
        step.counters,
        `seed ${seed}, event ${i} (${step.event.type})`,
      );
    }
  }
});

Deno.test("CounterTally ignores backoffs of Attempts not running and a repeated sleep, like reducePanel()", () => {
  const events: RunEvent[] = [
    backoff(A, 0, "sleeping", 1, 1_000),
    started(A, 10),
    backoff(A, 20, "sleeping", 1, 1_000),
    backoff(A, 30, "sleeping", 2, 1_000),
    started(B, 40),
    backoff(B, 50, "resumed", 1, 1_000),
    ended(A, 60, "errored"),
    backoff(A, 70, "resumed", 2, 1_000),
    skipped(C, 80, "halted"),
    interrupted(90),
    diagnostic(90, "info", "x", "y"),
  ];
  let state = createPanelState(panelStart(4, 1));
  const tally = new CounterTally(panelStart(4, 1));
  for (const event of events) {
    state = reducePanel(state, event);
    tally.event(event);
    assert.deepEqual(tally.counters, state.counters, event.type);
  }
  assert.deepEqual(tally.counters, {
    total: 4,
    reused: 1,
    running: 1,
    backoff: 0,
    queued: 0,
    passed: 0,
    failed: 0,
    errored: 1,
    skipped: 1,
  });
});
