/** Exact frames of the live panel (cli.md OUT-H7, OUT-H8, OUT-H17) at fixed widths and fake times. */
import assert from "node:assert/strict";
import { type PanelState, renderPanel } from "../../src/panel/mod.ts";
import {
  activity,
  backoff,
  ended,
  fold,
  interrupted,
  panelStart,
  progress,
  setup,
  skipped,
  slot,
  started,
  T0,
} from "./_events.ts";

/** `fast` and `slow` (maxConcurrency 1): 10 planned, 2 carried, one failure, one cost estimate. */
function mixedRun(): PanelState {
  return fold(panelStart(10, 2, { positionals: ["fast", "slow"] }), [
    started(slot(0, "fast", "cart/add-item"), 0),
    started(slot(1, "slow", "cart/add-item"), 0),
    started(slot(2, "fast", "cart/checkout"), 1000),
    activity(slot(0, "fast", "cart/add-item"), 1500, "running eval · tool: make test"),
    activity(slot(1, "slow", "cart/add-item"), 1600, "creating sandbox"),
    ended(slot(2, "fast", "cart/checkout"), 4000, "failed", 0.12),
    started(slot(3, "fast", "refund/policy-long-name"), 4000),
    activity(slot(3, "fast", "refund/policy-long-name"), 4100, "evaluating assertions"),
  ]);
}

Deno.test("renderPanel() draws a mixed run with a capped experiment at 100 columns (OUT-H7)", () => {
  assert.deepEqual(
    renderPanel(mixedRun(), { width: 100, now: T0 + 8200, color: false, boxed: true }),
    [
      "╭─ niceeval exp fast slow ───────────────────────────────────────────────────────── 8.2s · ETA 5s ─╮",
      "│ 10 total · 2 reused · 3 running · 4 queued · 0 passed · 1 failed · 0 errored · 0 skipped         │",
      "├─ ACTIVE ─────────────────────────────────────────────────────────────────────────────────────────┤",
      "│ ● cart/add-item            fast#0    8.2s  running eval · tool: make test                        │",
      "│ ● cart/add-item            slow#0    8.2s  creating sandbox                                      │",
      "│ ● refund/policy-long-name  fast#0    4.2s  evaluating assertions                                 │",
      "╰───────────────────────────────────────────────────────────────────────────────────────── ~$0.12 ─╯",
    ],
  );
});

Deno.test("renderPanel() caps the box at 120 columns on a 200-column terminal (OUT-H2)", () => {
  const lines = renderPanel(mixedRun(), { width: 200, now: T0 + 8200, color: false, boxed: true });
  assert.deepEqual(lines, [
    "╭─ niceeval exp fast slow ───────────────────────────────────────────────────────────────────────────── 8.2s · ETA 5s ─╮",
    "│ 10 total · 2 reused · 3 running · 4 queued · 0 passed · 1 failed · 0 errored · 0 skipped                             │",
    "├─ ACTIVE ─────────────────────────────────────────────────────────────────────────────────────────────────────────────┤",
    "│ ● cart/add-item            fast#0    8.2s  running eval · tool: make test                                            │",
    "│ ● cart/add-item            slow#0    8.2s  creating sandbox                                                          │",
    "│ ● refund/policy-long-name  fast#0    4.2s  evaluating assertions                                                     │",
    "╰───────────────────────────────────────────────────────────────────────────────────────────────────────────── ~$0.12 ─╯",
  ]);
  assert.ok(lines.every((line) => [...line].length === 120));
});

Deno.test("issue 18.5: renderPanel() at 40 columns is unboxed, drops reused and queued before the failed count and cuts the title before the note", () => {
  const lines = renderPanel(mixedRun(), { width: 40, now: T0 + 8200, color: false, boxed: false });
  assert.deepEqual(lines, [
    "niceeval exp fa…  8.2s · ETA 5s · ~$0.12",
    "  10 total · 3 running · 1 failed",
    "  ACTIVE",
    "  ● cart/add-item            fast#0    …",
    "  ● cart/add-item            slow#0    …",
    "  ● refund/policy-long-name  fast#0    …",
  ]);
  assert.ok(lines.every((line) => [...line].length <= 40), "nothing wraps");
});

Deno.test("renderPanel() below 40 columns shows Attempt rows as ● <evalId> <activity> (OUT-H17)", () => {
  assert.deepEqual(
    renderPanel(mixedRun(), { width: 39, now: T0 + 8200, color: false, boxed: false }),
    [
      "niceeval exp f…  8.2s · ETA 5s · ~$0.12",
      "  10 total · 3 running · 1 failed",
      "  ACTIVE",
      "  ● cart/add-item running eval · tool:…",
      "  ● cart/add-item creating sandbox",
      "  ● refund/policy-long-name evaluating…",
    ],
  );
});

Deno.test("S39 S41 renderPanel() explains running above the cap with backoff and counts the retry wait down (RUN-5, RETRY-4)", () => {
  // G = 2: two Attempts sleep in send backoff, two more took their slots.
  const state = fold(panelStart(6, 0, { positionals: ["compare"], cap: 2 }), [
    started(slot(0, "compare", "refund/policy"), 0),
    started(slot(1, "compare", "refund/late"), 0),
    backoff(slot(0, "compare", "refund/policy"), 1000, "sleeping", 1, 3000),
    started(slot(2, "compare", "refund/early"), 1000),
    backoff(slot(1, "compare", "refund/late"), 2000, "sleeping", 2, 8000),
    started(slot(3, "compare", "refund/other"), 2000),
  ]);
  assert.deepEqual(renderPanel(state, { width: 80, now: T0 + 2000, color: false, boxed: true }), [
    "╭─ niceeval exp compare ──────────────────────────────────────────────── 2.0s ─╮",
    "│ 6 total · 0 reused · 4 running · 2 backoff · 2 queued · 0 passed · 0 failed  │",
    "├─ ACTIVE ─────────────────────────────────────────────────────────────────────┤",
    "│ ● refund/policy  compare#0    2.0s  turn retry 1/4 (rate_limit) — waiting 2s │",
    "│ ● refund/late    compare#0    2.0s  turn retry 2/4 (rate_limit) — waiting 8s │",
    "│ ● refund/early   compare#0    1.0s                                           │",
    "│ ● refund/other   compare#0    0.0s                                           │",
    "╰──────────────────────────────────────────────────────────────────────────────╯",
  ]);
  // After its sleep an Attempt waits to re-take a global slot (W15); the other counts down.
  assert.deepEqual(renderPanel(state, { width: 120, now: T0 + 4500, color: false, boxed: true }), [
    "╭─ niceeval exp compare ──────────────────────────────────────────────────────────────────────────────────────── 4.5s ─╮",
    "│ 6 total · 0 reused · 4 running · 2 backoff · 2 queued · 0 passed · 0 failed · 0 errored · 0 skipped                  │",
    "├─ ACTIVE ─────────────────────────────────────────────────────────────────────────────────────────────────────────────┤",
    "│ ● refund/policy  compare#0    4.5s  turn retry 1/4 (rate_limit) — waiting for a slot                                 │",
    "│ ● refund/late    compare#0    4.5s  turn retry 2/4 (rate_limit) — waiting 6s                                         │",
    "│ ● refund/early   compare#0    3.5s                                                                                   │",
    "│ ● refund/other   compare#0    2.5s                                                                                   │",
    "╰──────────────────────────────────────────────────────────────────────────────────────────────────────────────────────╯",
  ]);
});

Deno.test("S23 renderPanel() shows a setup wait as a run-scope row above Attempt rows while its Attempts stay queued (OUT-4)", () => {
  const state = fold(panelStart(6, 0, { cap: 2 }), [
    setup("e1", 0, "started"),
    started(slot(2, "e2", "a"), 0),
    started(slot(3, "e2", "b"), 0),
    progress("e1", 300, "starting tunnel"),
  ]);
  assert.deepEqual(renderPanel(state, { width: 80, now: T0 + 42_000, color: false, boxed: true }), [
    "╭─ niceeval exp ───────────────────────────────────────────────────────── 42s ─╮",
    "│ 6 total · 0 reused · 2 running · 4 queued · 0 passed · 0 failed · 0 errored  │",
    "├─ ACTIVE ─────────────────────────────────────────────────────────────────────┤",
    "│ ◦ experiment setup · e1     42s  starting tunnel                             │",
    "│ ● a  e2#0                   42s                                              │",
    "│ ● b  e2#0                   42s                                              │",
    "╰──────────────────────────────────────────────────────────────────────────────╯",
  ]);
});

Deno.test("renderPanel() moves budget-stopped slots from queued to skipped and keeps the cost note (STOP-5)", () => {
  const state = fold(panelStart(4, 0, { positionals: ["paid"] }), [
    started(slot(0, "paid", "a"), 0),
    ended(slot(0, "paid", "a"), 5000, "passed", 0.6),
    skipped(slot(1, "paid", "b"), 5000, "budget-exhausted"),
    skipped(slot(2, "paid", "c"), 5000, "budget-exhausted"),
    skipped(slot(3, "paid", "d"), 5000, "budget-exhausted"),
  ]);
  assert.deepEqual(renderPanel(state, { width: 80, now: T0 + 5000, color: false, boxed: true }), [
    "╭─ niceeval exp paid ─────────────────────────────────────────────────── 5.0s ─╮",
    "│ 4 total · 0 reused · 0 running · 0 queued · 1 passed · 0 failed · 3 skipped  │",
    "╰───────────────────────────────────────────────────────────────────── ~$0.60 ─╯",
  ]);
});

function interruptedRun(): PanelState {
  return fold(panelStart(3, 0, { positionals: ["local"] }), [
    started(slot(0, "local", "greet/hello"), 0),
    activity(slot(0, "local", "greet/hello"), 100, "running eval"),
    interrupted(1200),
    skipped(slot(1, "local", "math/0000"), 1200, "interrupted"),
    skipped(slot(2, "local", "math/0001"), 1200, "interrupted"),
    activity(slot(0, "local", "greet/hello"), 1300, "cleaning up"),
  ]);
}

Deno.test("renderPanel() of an interrupted run says cleanup runs and a second Ctrl+C forces exit (INT-1)", () => {
  assert.deepEqual(
    renderPanel(interruptedRun(), { width: 80, now: T0 + 1500, color: false, boxed: true }),
    [
      "╭─ niceeval exp local ────────────────────────────────────────────────── 1.5s ─╮",
      "│ 3 total · 0 reused · 1 running · 0 queued · 0 passed · 0 failed · 2 skipped  │",
      "│ interrupted — cleaning up · Ctrl+C again forces exit                         │",
      "├─ ACTIVE ─────────────────────────────────────────────────────────────────────┤",
      "│ ● greet/hello  local#0    1.5s  cleaning up                                  │",
      "╰──────────────────────────────────────────────────────────────────────────────╯",
    ],
  );
});

Deno.test("renderPanel() with NO_COLOR is unboxed and free of escape sequences (OUT-H17)", () => {
  const lines = renderPanel(interruptedRun(), {
    width: 80,
    now: T0 + 1500,
    color: false,
    boxed: false,
  });
  assert.deepEqual(lines, [
    "niceeval exp local  1.5s",
    "  3 total · 0 reused · 1 running · 0 queued · 0 passed · 0 failed · 2 skipped",
    "  interrupted — cleaning up · Ctrl+C again forces exit",
    "  ACTIVE",
    "  ● greet/hello  local#0    1.5s  cleaning up",
  ]);
  assert.ok(!lines.join("").includes("\x1b"));
});

Deno.test("renderPanel() with colour dims the frame, bolds titles and colours the row marker", () => {
  assert.deepEqual(
    renderPanel(interruptedRun(), { width: 60, now: T0 + 1500, color: true, boxed: true }),
    [
      "\x1b[2m╭─\x1b[22m \x1b[1mniceeval exp local\x1b[22m \x1b[2m────────────────────────────── 1.5s ─╮\x1b[22m",
      "\x1b[2m│\x1b[22m 3 total · 1 running · 0 queued · 0 passed · 2 skipped    \x1b[2m│\x1b[22m",
      "\x1b[2m│\x1b[22m interrupted — cleaning up · Ctrl+C again forces exit     \x1b[2m│\x1b[22m",
      "\x1b[2m├─\x1b[22m \x1b[1mACTIVE\x1b[22m \x1b[2m─────────────────────────────────────────────────┤\x1b[22m",
      "\x1b[2m│\x1b[22m \x1b[36m●\x1b[39m greet/hello  local#0    1.5s  cleaning up              \x1b[2m│\x1b[22m",
      "\x1b[2m╰──────────────────────────────────────────────────────────╯\x1b[22m",
    ],
  );
});

Deno.test("renderPanel() shows at most min(12, rows − 6) ACTIVE rows, then … <n> more active (OUT-H7)", () => {
  const state = fold(
    panelStart(20, 0),
    Array.from(
      { length: 15 },
      (_, i) => started(slot(i, "x", `e${String(i).padStart(2, "0")}`), i * 100),
    ),
  );
  assert.deepEqual(
    renderPanel(state, { width: 60, now: T0 + 3000, color: false, boxed: true, rows: 12 }),
    [
      "╭─ niceeval exp ──────────────────────────────────── 3.0s ─╮",
      "│ 20 total · 0 reused · 15 running · 5 queued · 0 passed   │",
      "├─ ACTIVE ─────────────────────────────────────────────────┤",
      "│ ● e00  x#0    3.0s                                       │",
      "│ ● e01  x#0    2.9s                                       │",
      "│ ● e02  x#0    2.8s                                       │",
      "│ ● e03  x#0    2.7s                                       │",
      "│ ● e04  x#0    2.6s                                       │",
      "│ … 10 more active                                         │",
      "╰──────────────────────────────────────────────────────────╯",
    ],
  );
  const tall = renderPanel(state, { width: 60, now: T0 + 3000, color: false, boxed: true });
  assert.equal(tall.length, 3 + 12 + 1, "12 ACTIVE lines when the terminal rows are unknown");
  assert.equal(tall.at(-2), "│ … 4 more active                                          │");
});
