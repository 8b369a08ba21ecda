/**
 * The live panel as lines (OUT-H7, OUT-H8, OUT-H17): a pure function of the state, the terminal
 * size, the time and the colour switch.
 */
import { formatCost, formatDuration } from "../_shared/mod.ts";
import { padEnd, padStart, widthOf } from "./_text.ts";
import { frameLines, MAX_BOX_WIDTH } from "./_frame.ts";
import { countersLine } from "./counters.ts";
import { estimateRemainingMs, etaText } from "./eta.ts";
import type { AttemptRow, PanelRamp, PanelState, ScopeRow } from "./state.ts";

/** Below this width an Attempt row is `● <evalId> <activity>` (OUT-H17). */
const NARROW_ROW_WIDTH = 40;
/** At most this many ACTIVE rows, and never more than the terminal rows minus 6 (OUT-H7). */
const MAX_ACTIVE_ROWS = 12;
/** Width of the elapsed column: `1m 42s` and `1h 03m` are the widest formats. */
const ELAPSED_WIDTH = 6;
/** The ETA leaves the title note when fewer columns than this would be left for frame and title. */
const MIN_TITLE_WIDTH = 24;

/** Terminal facts and time a frame is rendered for. */
interface RenderOptions {
  /** Terminal columns. */
  readonly width: number;
  /** Epoch ms the elapsed times are computed at. */
  readonly now: number;
  /** ANSI colour on (a terminal without `NO_COLOR`). */
  readonly color: boolean;
  /** Rounded box on (`NO_COLOR` unset and width ≥ 60, OUT-H17). */
  readonly boxed: boolean;
  /** Terminal rows, when known. */
  readonly rows?: number;
}

/** The lines of the live panel for `state`. */
export function renderPanel(state: PanelState, options: RenderOptions): string[] {
  const { width, now } = options;
  const inner = options.boxed ? Math.min(width, MAX_BOX_WIDTH) - 4 : width - 2;
  const head = [countersLine(state.counters, inner)];
  if (state.ramp) head.push(rampLine(state.ramp));
  if (state.interrupted) head.push("interrupted — cleaning up · Ctrl+C again forces exit");
  const sections: { name: string | null; lines: string[] }[] = [{ name: null, lines: head }];
  const active = activeLines(state, {
    now,
    narrow: width < NARROW_ROW_WIDTH,
    limit: Math.max(1, Math.min(MAX_ACTIVE_ROWS, (options.rows ?? Infinity) - 6)),
  });
  if (active.length > 0) sections.push({ name: "ACTIVE", lines: active });
  return frameLines({
    title: state.start.title,
    note: titleNote(state, now, width),
    sections,
    bottomNote: state.costUSD === null ? null : formatCost(state.costUSD),
  }, { width, boxed: options.boxed, color: options.color });
}

/**
 * `<elapsed>[ · ETA <eta>]`: the ETA once an Attempt has settled and while Attempts are left, and
 * only when it leaves room for a title on a narrow terminal (docs/progress.md).
 */
function titleNote(state: PanelState, now: number, width: number): string {
  const elapsed = formatDuration(now - state.start.startedAt);
  const remaining = estimateRemainingMs({
    stats: state.eta,
    runningSince: state.attemptRows.flatMap((r) => r === null ? [] : [r.startedAt]),
    queued: state.counters.queued,
    now,
  });
  if (remaining === null) return elapsed;
  const note = `${elapsed} · ${etaText(remaining)}`;
  return widthOf(note) + MIN_TITLE_WIDTH <= width ? note : elapsed;
}

/** Run-scope rows, then Attempt rows in their positions, then `… <n> more active`. */
function activeLines(
  state: PanelState,
  options: { now: number; narrow: boolean; limit: number },
): string[] {
  const attempts = state.attemptRows.filter((r): r is AttemptRow => r !== null);
  const count = state.scopeRows.length + attempts.length;
  if (count === 0) return [];
  const lines = rowLines(state.scopeRows, attempts, options);
  if (count <= options.limit) return lines;
  const shown = options.limit - 1;
  return [...lines.slice(0, shown), `… ${count - shown} more active`];
}

function rowLines(
  scopes: readonly ScopeRow[],
  attempts: readonly AttemptRow[],
  options: { now: number; narrow: boolean },
): string[] {
  const { now } = options;
  if (options.narrow) {
    return [
      ...scopes.map((s) => `◦ ${s.text} ${s.detail}`.trimEnd()),
      ...attempts.map((a) => `● ${a.evalId} ${activityOf(a, now)}`.trimEnd()),
    ];
  }
  const evalWidth = Math.max(0, ...attempts.map((a) => widthOf(a.evalId)));
  const idWidth = Math.max(0, ...attempts.map((a) => widthOf(idOf(a))));
  const lead = Math.max(
    attempts.length > 0 ? evalWidth + 2 + idWidth : 0,
    ...scopes.map((s) => widthOf(s.text)),
  );
  const tail = (since: number, detail: string) =>
    `  ${padStart(formatDuration(now - since), ELAPSED_WIDTH)}  ${detail}`;
  return [
    ...scopes.map((s) => `◦ ${padEnd(s.text, lead)}${tail(s.since, s.detail)}`.trimEnd()),
    ...attempts.map((a) =>
      `● ${padEnd(`${padEnd(a.evalId, evalWidth)}  ${idOf(a)}`, lead)}${
        tail(a.startedAt, activityOf(a, now))
      }`.trimEnd()
    ),
  ];
}

function idOf(row: AttemptRow): string {
  return `${row.experimentId}#${row.ordinal}`;
}

/** The activity column (OUT-H8); a send backoff reads as RETRY-4 prescribes. */
function activityOf(row: AttemptRow, now: number): string {
  const b = row.backoff;
  if (!b) return row.activity;
  const head = `turn retry ${b.retry}/${b.maxRetries} (${b.reason})`;
  // After the sleep the Attempt waits to re-take a global slot (W15).
  if (now >= b.until) return `${head} — waiting for a slot`;
  return `${head} — waiting ${Math.ceil((b.until - now) / 1000)}s`;
}

/** The ramp line (OUT-5): `ramp cap <cap> · range <from>–<to> · <state>`. */
export function rampLine(ramp: PanelRamp): string {
  return `ramp cap ${ramp.cap} · range ${ramp.from}–${ramp.to} · ${rampStateText(ramp)}`;
}

/** A ramp state as people read it (OUT-5): `backing off (rate limit)`, `held: <reason>`. */
export function rampStateText(ramp: Pick<PanelRamp, "state" | "reason">): string {
  if (ramp.state === "backing off") return "backing off (rate limit)";
  if (ramp.state === "held") return `held: ${ramp.reason ?? ""}`;
  return ramp.state;
}
