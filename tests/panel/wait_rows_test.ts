/** Run-scope wait rows of the live panel (scheduling.md OUT-4, WAIT-4, MSB-7). */
import assert from "node:assert/strict";
import { renderPanel } from "../../src/panel/mod.ts";
import { fold, panelStart, slot, started, T0, wait } from "./_events.ts";

Deno.test("renderPanel() shows lease, lane, machine-budget and orphan-recovery waits above Attempt rows (OUT-4)", () => {
  const state = fold(panelStart(5, 0, { cap: 2 }), [
    wait("orphan-recovery", "shared", 0, "started"),
    wait("state-lease", "db/main", 1000, "started"),
    wait("lane", "custom:vm", 2000, "started"),
    wait("machine-slot", "docker", 3000, "started", "4/4"),
    started(slot(0, "other", "a"), 3000),
    wait("orphan-recovery", "shared", 4000, "ended"),
    wait("state-lease", "db/main", 5000, "started", "retained"),
  ]);
  assert.deepEqual(renderPanel(state, { width: 90, now: T0 + 10_000, color: false, boxed: true }), [
    "╭─ niceeval exp ─────────────────────────────────────────────────────────────────── 10s ─╮",
    "│ 5 total · 0 reused · 1 running · 4 queued · 0 passed · 0 failed · 0 errored            │",
    "├─ ACTIVE ───────────────────────────────────────────────────────────────────────────────┤",
    "│ ◦ waiting for sharedState db/main · needs recovery    9.0s                             │",
    "│ ◦ waiting for vm lane                                 8.0s                             │",
    "│ ◦ waiting for machine sandbox budget · docker 4/4     7.0s                             │",
    "│ ● a  other#0                                          7.0s                             │",
    "╰────────────────────────────────────────────────────────────────────────────────────────╯",
  ]);
});

Deno.test("reducePanel() drops a wait row on its end and ignores an end without a start", () => {
  const state = fold(panelStart(1, 0), [
    wait("lane", "local", 0, "ended"),
    wait("lane", "local", 100, "started"),
    wait("lane", "local", 200, "ended"),
  ]);
  assert.deepEqual(state.scopeRows, []);
});

Deno.test("renderPanel() shows `prechecking judge config` while the judge precheck runs (OUT-4)", () => {
  const during = fold(panelStart(2, 0), [wait("judge-precheck", "judge", 0, "started")]);
  assert.deepEqual(renderPanel(during, { width: 90, now: T0 + 1_500, color: false, boxed: true }), [
    "╭─ niceeval exp ────────────────────────────────────────────────────────────────── 1.5s ─╮",
    "│ 2 total · 0 reused · 0 running · 2 queued · 0 passed · 0 failed · 0 errored            │",
    "├─ ACTIVE ───────────────────────────────────────────────────────────────────────────────┤",
    "│ ◦ prechecking judge config    1.5s                                                     │",
    "╰────────────────────────────────────────────────────────────────────────────────────────╯",
  ]);
  const after = fold(panelStart(2, 0), [
    wait("judge-precheck", "judge", 0, "started"),
    wait("judge-precheck", "judge", 2_000, "ended"),
  ]);
  assert.deepEqual(after.scopeRows, []);
});
