/**
 * The panel reducer: folds one run event into a new {@link PanelState} (RUN-1 … RUN-3, OUT-3,
 * OUT-4, RETRY-4). Pure: the input state is never changed.
 */
import type { AttemptVerdict, RunEvent } from "../_shared/mod.ts";
import { etaSettled, etaStarted } from "./eta.ts";
import type { AttemptRow, Counters, PanelState, ScopeRow } from "./state.ts";

/** Which counter a settled verdict moves to; interrupted Attempts count as skipped (INT-1). */
export const VERDICT_COUNTER: Readonly<Record<AttemptVerdict, keyof Counters>> = {
  passed: "passed",
  scored: "passed",
  failed: "failed",
  errored: "errored",
  skipped: "skipped",
  interrupted: "skipped",
};

/** Returns the state after `event`. */
export function reducePanel(state: PanelState, event: RunEvent): PanelState {
  switch (event.type) {
    case "attempt_start":
      return startAttempt(state, {
        position: event.slot.position,
        evalId: event.slot.evalId,
        experimentId: event.slot.experimentId,
        ordinal: event.slot.ordinal,
        startedAt: event.at,
        activity: "",
        backoff: null,
      });
    case "attempt_end":
      return endAttempt(state, event.slot.position, event);
    case "activity":
      return updateRow(state, event.slot.position, (row) => ({ ...row, activity: event.text }));
    case "backoff":
      return backoff(state, event);
    case "not_dispatched":
      return { ...state, counters: move(state.counters, "queued", "skipped") };
    case "slot_errored":
      return { ...state, counters: move(state.counters, "queued", "errored") };
    case "experiment_setup":
    case "experiment_teardown":
      return hook(state, event);
    case "hook_progress": {
      const key = `${event.hook}:${event.experimentId}`;
      const scopeRows = state.scopeRows.map((r) =>
        r.key === key ? { ...r, detail: event.text } : r
      );
      return { ...state, scopeRows };
    }
    case "wait":
      return wait(state, event);
    case "interrupted":
      return { ...state, interrupted: true };
    case "diagnostic":
      return state;
    case "ramp": {
      const { cap, from, to, state: rampState, reason } = event;
      return { ...state, ramp: { cap, from, to, state: rampState, reason } };
    }
  }
}

/** The OUT-4 texts of run-scope waits. */
function waitText(e: Extract<RunEvent, { type: "wait" }>): string {
  switch (e.scope) {
    case "state-lease":
      return `waiting for sharedState ${e.key}${
        e.detail === "retained" ? " · needs recovery" : ""
      }`;
    case "lane":
      return `waiting for ${e.key.replace(/^custom:/, "")} lane`;
    case "machine-slot":
      return `waiting for machine sandbox budget · ${e.key}${e.detail ? ` ${e.detail}` : ""}`;
    case "orphan-recovery":
      return `recovering orphaned teardown · ${e.key}`;
    case "judge-precheck":
      return "prechecking judge config";
  }
}

/** A wait row appears on `started` (keeping its first time when only its text changes) and goes on `ended`. */
function wait(state: PanelState, e: Extract<RunEvent, { type: "wait" }>): PanelState {
  const key = `wait:${e.scope}:${e.key}`;
  const existing = state.scopeRows.find((r) => r.key === key);
  const others = state.scopeRows.filter((r) => r.key !== key);
  if (e.state === "ended") return existing ? { ...state, scopeRows: others } : state;
  const row: ScopeRow = { key, text: waitText(e), since: existing?.since ?? e.at, detail: "" };
  return {
    ...state,
    scopeRows: existing ? state.scopeRows.map((r) => r.key === key ? row : r) : [...others, row],
  };
}

function startAttempt(state: PanelState, row: AttemptRow): PanelState {
  const rows = [...state.attemptRows];
  const hole = rows.indexOf(null);
  if (hole >= 0) rows[hole] = row;
  else rows.push(row);
  return {
    ...state,
    attemptRows: rows,
    counters: move(state.counters, "queued", "running"),
    eta: etaStarted(state.eta, row.startedAt),
  };
}

function endAttempt(
  state: PanelState,
  position: number,
  event: Extract<RunEvent, { type: "attempt_end" }>,
): PanelState {
  const { result } = event;
  const index = state.attemptRows.findIndex((r) => r?.position === position);
  const row = state.attemptRows[index];
  const rows = [...state.attemptRows];
  if (index >= 0) rows[index] = null;
  while (rows.length > 0 && rows[rows.length - 1] === null) rows.pop();
  let counters = move(state.counters, "running", VERDICT_COUNTER[result.verdict]);
  // A backoff cut short (deadline, interrupt) stays counted until the Attempt settles (RUN-2).
  if (row?.backoff) counters = { ...counters, backoff: counters.backoff - 1 };
  const costUSD = result.estimatedCostUSD === null
    ? state.costUSD
    : (state.costUSD ?? 0) + result.estimatedCostUSD;
  const eta = row ? etaSettled(state.eta, event.at - row.startedAt) : state.eta;
  return { ...state, attemptRows: rows, counters, costUSD, eta };
}

function backoff(state: PanelState, e: Extract<RunEvent, { type: "backoff" }>): PanelState {
  const row = state.attemptRows.find((r) => r?.position === e.slot.position);
  if (!row) return state;
  if (e.state === "sleeping") {
    const view = {
      reason: e.reason,
      retry: e.retry,
      maxRetries: e.maxRetries,
      until: e.at + e.delayMs,
    };
    const next = updateRow(state, e.slot.position, (r) => ({ ...r, backoff: view }));
    const delta = row.backoff ? 0 : 1;
    return { ...next, counters: { ...next.counters, backoff: next.counters.backoff + delta } };
  }
  if (!row.backoff) return state;
  const next = updateRow(state, e.slot.position, (r) => ({ ...r, backoff: null }));
  return { ...next, counters: { ...next.counters, backoff: next.counters.backoff - 1 } };
}

function hook(
  state: PanelState,
  e: Extract<RunEvent, { type: "experiment_setup" | "experiment_teardown" }>,
): PanelState {
  const name = e.type === "experiment_setup" ? "setup" : "teardown";
  const key = `${name}:${e.experimentId}`;
  const others = state.scopeRows.filter((r) => r.key !== key);
  if (e.status !== "started") return { ...state, scopeRows: others };
  const row: ScopeRow = {
    key,
    text: `experiment ${name} · ${e.experimentId}`,
    since: e.at,
    detail: "",
  };
  return { ...state, scopeRows: [...others, row] };
}

function updateRow(
  state: PanelState,
  position: number,
  change: (row: AttemptRow) => AttemptRow,
): PanelState {
  const attemptRows = state.attemptRows.map((r) => r?.position === position ? change(r) : r);
  return { ...state, attemptRows };
}

function move(counters: Counters, from: keyof Counters, to: keyof Counters): Counters {
  return { ...counters, [from]: counters[from] - 1, [to]: counters[to] + 1 };
}
