/** Run-event builders for panel tests: slots by (experiment, eval, ordinal), times in ms from T0. */
import type { AttemptVerdict, RunEvent, SlotRef, WaitScope } from "../../src/_shared/mod.ts";
import {
  createPanelState,
  type PanelStart,
  type PanelState,
  reducePanel,
} from "../../src/panel/mod.ts";
import { result } from "../_fakes/results.ts";

/** The fake clock's default start (2026-11-29T10:00:00.000Z). */
export const T0 = Date.UTC(2026, 10, 29, 10, 0, 0);

/** A slot reference; `position` identifies the slot. */
export function slot(position: number, experimentId: string, evalId: string, ordinal = 0): SlotRef {
  return { position, experimentId, evalId, ordinal };
}

/** `attempt_start` at T0 + `ms`. */
export function started(s: SlotRef, ms: number): RunEvent {
  return { type: "attempt_start", at: T0 + ms, slot: s, attemptId: `a-${s.position}` };
}

/** `attempt_end` at T0 + `ms` with `verdict` and an optional cost estimate. */
export function ended(
  s: SlotRef,
  ms: number,
  verdict: AttemptVerdict,
  costUSD: number | null = null,
): RunEvent {
  return {
    type: "attempt_end",
    at: T0 + ms,
    slot: s,
    result: result({
      attemptId: `a-${s.position}`,
      experimentId: s.experimentId,
      evalId: s.evalId,
      ordinal: s.ordinal,
      verdict,
      estimatedCostUSD: costUSD,
    }),
  };
}

/** `activity` at T0 + `ms`. */
export function activity(s: SlotRef, ms: number, text: string): RunEvent {
  return { type: "activity", at: T0 + ms, slot: s, text };
}

/** A send backoff event (`retry`/4, `rate_limit`). */
export function backoff(
  s: SlotRef,
  ms: number,
  state: "sleeping" | "resumed",
  retry: number,
  delayMs: number,
): RunEvent {
  return {
    type: "backoff",
    at: T0 + ms,
    slot: s,
    state,
    reason: "rate_limit",
    retry,
    maxRetries: 4,
    delayMs,
  };
}

/** `not_dispatched` at T0 + `ms`. */
export function skipped(
  s: SlotRef,
  ms: number,
  reason: Extract<RunEvent, { type: "not_dispatched" }>["reason"],
): RunEvent {
  return { type: "not_dispatched", at: T0 + ms, slot: s, reason };
}

/** `experiment_setup` at T0 + `ms`. */
export function setup(
  experimentId: string,
  ms: number,
  status: "started" | "done" | "failed",
  message: string | null = null,
): RunEvent {
  return {
    type: "experiment_setup",
    at: T0 + ms,
    experimentId,
    status,
    durationMs: status === "started" ? null : ms,
    message,
  };
}

/** `hook_progress` of a setup hook. */
export function progress(experimentId: string, ms: number, text: string): RunEvent {
  return { type: "hook_progress", at: T0 + ms, experimentId, hook: "setup", text };
}

/** A diagnostic. */
export function diagnostic(
  ms: number,
  level: "info" | "warning" | "error",
  code: string,
  message: string,
  extra: { experimentId?: string; evalId?: string; data?: Record<string, number> } = {},
): RunEvent {
  return {
    type: "diagnostic",
    at: T0 + ms,
    level,
    code,
    message,
    experimentId: extra.experimentId ?? null,
    evalId: extra.evalId ?? null,
    data: extra.data ?? null,
    persist: true,
  };
}

/** The first interrupt. */
export function interrupted(ms: number): RunEvent {
  return { type: "interrupted", at: T0 + ms, signal: "SIGINT" };
}

/** Panel start info: `niceeval exp <positionals>`, started at T0. */
export function panelStart(
  total: number,
  reused: number,
  options: { positionals?: string[]; cap?: number } = {},
): PanelStart {
  return {
    title: ["niceeval exp", ...(options.positionals ?? [])].join(" "),
    startedAt: T0,
    total,
    reused,
    cap: options.cap ?? 4,
  };
}

/** Folds `events` into a fresh state. */
export function fold(start: PanelStart, events: readonly RunEvent[]): PanelState {
  return events.reduce(reducePanel, createPanelState(start));
}

/** A run-scope wait event (OUT-4 rows). */
export function wait(
  scope: WaitScope,
  key: string,
  ms: number,
  state: "started" | "ended",
  detail: string | null = null,
): RunEvent {
  return { type: "wait", at: T0 + ms, scope, key, experimentId: null, state, detail };
}
