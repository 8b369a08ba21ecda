/**
 * Human output of `exp` (cli.md §5): PLAN, permanent lines, end panels. Panels come out as
 * {@link BoxPanel}s; `*Lines` functions lay them out (unboxed unless a layout says otherwise).
 * Writers decide where the lines go.
 */
import { formatCost, formatDuration, formatScore, formatTokens, plural } from "../_shared/mod.ts";
import type { JsonValue } from "../_shared/mod.ts";
import type { AttemptResult } from "../_shared/mod.ts";
import type { SealedAssertion } from "../expect/mod.ts";
import type { Plan } from "../plan/mod.ts";
import { type BoxLayout, type BoxPanel, padWidth, panelsLines, textWidth, UNBOXED } from "./box.ts";
import {
  type BuildFailureGroup,
  type BuildFailureGroups,
  buildGroupBody,
  groupSize,
} from "./build_failures.ts";
import { type Headline, isGap, type RunSummary, type SlotReport } from "./summary.ts";

/** An adaptive ramp as PLAN shows it (OUT-1); passed only when the run ramps. */
interface PlanRamp {
  readonly from: number;
  readonly to: number;
  readonly source: "flag" | "config";
  /** Reason of a hold in force at start, else null. */
  readonly held: string | null;
}

/** What the PLAN panel shows. */
interface PlanInfo {
  readonly plan: Plan;
  readonly cap: number;
  readonly capAnnotation: string;
  readonly dry?: boolean;
  /** The ramp, when the run ramps; the concurrency part then reads `<from>→<to>`. */
  readonly ramp?: PlanRamp | null;
  /** Machine sandbox budgets below G (MSB-7), in the order to show. */
  readonly machineBudgets?: readonly { readonly provider: string; readonly limit: number }[];
}

/** The PLAN panel (OUT-H5, OUT-1, OUT-2). */
function planPanel(info: PlanInfo): BoxPanel {
  const { plan } = info;
  const capped = plan.experiments
    .filter((e) => e.maxConcurrency !== null)
    .map((e) => ` · ${e.id} ≤${e.maxConcurrency}`)
    .join("");
  const budgets = (info.machineBudgets ?? [])
    .map((b) => ` · ${b.provider} sandboxes ≤${b.limit} on this host`)
    .join("");
  const body = [
    `${plural(plan.total, "attempt")} · ${plural(plan.evalCount, "eval")} × ${
      plural(plan.experiments.length, "config")
    } · ${concurrencyText(info)}${capped}${budgets}`,
  ];
  if (plan.reused > 0) {
    body.push(`${plan.reused} of ${plan.total} carried in from cache · ${plan.toRun} to run`);
  }
  return { title: info.dry ? "PLAN (dry run)" : "PLAN", note: null, body };
}

function concurrencyText(info: PlanInfo): string {
  const { ramp } = info;
  if (!ramp) return `concurrency ${info.cap} (${info.capAnnotation})`;
  const held = ramp.held === null ? "" : ` · ramp held: ${ramp.held}`;
  return `concurrency ${ramp.from}→${ramp.to} (ramp from ${ramp.source})${held}`;
}

/** The PLAN panel as lines; unboxed unless `layout` says otherwise. */
export function planLines(info: PlanInfo, layout: BoxLayout = UNBOXED): string[] {
  return panelsLines([planPanel(info)], layout);
}

/** `criterion · expected e · received r[ · reason]` of one failing assertion. */
export function assertionShape(a: SealedAssertion, withReason = true): string {
  const parts = [a.criterion];
  if (a.expected !== null) parts.push(`expected ${showValue(a.expected)}`);
  if (a.received !== null) parts.push(`received ${showValue(a.received)}`);
  if (withReason && a.reason) parts.push(a.reason);
  return parts.join(" · ");
}

/** The first failing gating assertion of a failed Attempt. */
export function firstFailure(result: AttemptResult): SealedAssertion | undefined {
  return result.details.assertions.find((a) => a.status === "failed");
}

/** True when {@link attemptLines} has lines for the Attempt: it failed, or errored with an error. */
export function hasAttemptLines(result: AttemptResult): boolean {
  return result.verdict === "failed" || (result.verdict === "errored" && Boolean(result.error));
}

/** The two permanent lines of a failed or errored Attempt (OUT-H9), or none. */
export function attemptLines(result: AttemptResult, locator: string): string[] {
  if (!hasAttemptLines(result)) return [];
  const head = `✗ ${result.evalId}  ${result.experimentId}#${result.ordinal}`;
  if (result.verdict === "failed") {
    const first = firstFailure(result);
    return [
      `${head}  failed  ${locator}`,
      `    ${first ? assertionShape(first) : "a gating assertion failed"}`,
    ];
  }
  if (result.verdict === "errored" && result.error) {
    return [
      `${head}  errored  ${locator}`,
      `    ${result.error.code}: ${oneLine(result.error.message)}${atLocation(result.error)}`,
    ];
  }
  return [];
}

/** What the end panels need besides the summary. */
interface EndOptions {
  readonly plan: Plan;
  readonly wallMs: number;
  readonly runIds: readonly string[];
  readonly positionals: readonly string[];
  /** Layout of {@link endLines}; unboxed when absent. */
  readonly layout?: BoxLayout;
  /**
   * The run's build failures by experiment id (`PermanentLines.buildFailures`): FAILURES lists
   * the Attempts of one (Run, build key) as one entry (sandboxes.md rule 71).
   */
  readonly buildFailures?: BuildFailureGroups;
}

/** Headline, RESULTS, FAILURES (only when something failed or errored) and NEXT (OUT-H11). */
function endPanels(summary: RunSummary, options: EndOptions): BoxPanel[] {
  const failures = failuresPanel(summary, options.buildFailures);
  return [
    headlinePanel(summary, options.wallMs),
    resultsPanel(summary, options.plan),
    ...(failures ? [failures] : []),
    nextPanel(summary, options.runIds, options.positionals),
  ];
}

/** The end panels as lines; unboxed unless `options.layout` says otherwise. */
export function endLines(summary: RunSummary, options: EndOptions): string[] {
  return panelsLines(endPanels(summary, options), options.layout ?? UNBOXED);
}

const HEADLINE_TONE: Readonly<Record<Headline, "good" | "bad" | "warn">> = {
  INTERRUPTED: "warn",
  ERRORED: "bad",
  INCOMPLETE: "warn",
  FAILED: "bad",
  PASSED: "good",
  SCORED: "good",
  COMPLETED: "good",
};

/** The headline panel (OUT-H12). */
function headlinePanel(summary: RunSummary, wallMs: number): BoxPanel {
  const c = summary.counts;
  const parts = summary.hasPass && summary.hasScore
    ? [`${c.passed} passed`, `${c.failed} failed`, `${c.scored} scored`, `${c.errored} errored`]
    : summary.hasScore
    ? [`${c.scored} scored`, `${c.skipped} skipped`, `${c.errored} errored`]
    : [`${c.passed} passed`, `${c.failed} failed`, `${c.errored} errored`];
  if (summary.hasPass && c.skipped > 0) parts.push(`${c.skipped} skipped`);
  if (c.unstarted > 0) parts.push(`${c.unstarted} unstarted`);
  if (c.interrupted > 0) parts.push(`${c.interrupted} interrupted`);
  const body = [`${parts.join(" · ")}  (${c.reused} reused)`];
  if (summary.rows.some((r) => r.state === "executed")) {
    const cost = summary.costUSD !== null ? ` · ${formatCost(summary.costUSD)}` : "";
    body.push(`${formatTokens(summary.newTokens)} new tok${cost}`);
  }
  return {
    title: summary.headline,
    note: formatDuration(wallMs),
    body,
    tone: HEADLINE_TONE[summary.headline],
  };
}

/** RESULTS (OUT-H13): at most 5 experiments, at most 20 evals each. */
function resultsPanel(summary: RunSummary, plan: Plan): BoxPanel {
  const body: string[] = [];
  for (const experiment of plan.experiments.slice(0, 5)) {
    body.push(experiment.id);
    const evals = experiment.evals.slice(0, 20);
    const width = Math.max(...evals.map((e) => textWidth(e.id)));
    for (const e of evals) {
      const rows = summary.rows.filter((r) =>
        r.slot.experimentIndex === experiment.index && r.slot.evalId === e.id
      );
      body.push(`  ${padWidth(e.id, width)}  ${evalResultText(rows)}`);
    }
    if (experiment.evals.length > 20) body.push(`  … ${experiment.evals.length - 20} more evals`);
  }
  if (plan.experiments.length > 5) {
    body.push(`… ${plan.experiments.length - 5} more experiments · niceeval show`);
  }
  return { title: "RESULTS", note: plural(plan.experiments.length, "experiment"), body };
}

/** The RESULTS wording of one (experiment, eval) (OUT-H13). */
function evalResultText(rows: readonly SlotReport[]): string {
  const count = (pred: (r: SlotReport) => boolean) => rows.filter(pred).length;
  const notNeeded = count((r) => r.reason === "early-exit" && r.verdict === null);
  const n = rows.length - notNeeded;
  // An Attempt interrupted while it ran is an interrupted slot too (STOP-6).
  const gaps = rows.filter((r) => isGap(r) || r.verdict === "interrupted");
  const tail: string[] = [];
  const failed = count((r) => r.verdict === "failed");
  const errored = count((r) => r.verdict === "errored");
  const skipped = count((r) => r.verdict === "skipped");
  let head: string;
  if (rows[0]?.slot.kind === "score") {
    const scored = rows.filter((r) => r.verdict === "scored");
    const mean = scored.length > 0
      ? scored.reduce((sum, r) => sum + (r.score ?? 0), 0) / scored.length
      : 0;
    head = `score ${formatScore(mean)} · ${scored.length}/${n} complete`;
  } else {
    head = `${count((r) => r.verdict === "passed")}/${n} passed`;
    if (failed > 0) tail.push(`${failed} failed`);
  }
  if (errored > 0) tail.push(`${errored} errored`);
  if (skipped > 0) tail.push(`${skipped} skipped`);
  if (gaps.length > 0) {
    const reasons = new Set(
      gaps.map((g) => g.verdict === "interrupted" ? "interrupted" : g.reason),
    );
    tail.push(`${gaps.length} not run (${[...reasons].join(", ")})`);
  }
  if (notNeeded > 0) tail.push(`${notNeeded} not needed (early exit)`);
  return [head, ...tail].join(" · ");
}

/**
 * FAILURES (OUT-H14), or null when nothing failed or errored. Attempts errored by one failed build
 * key are one entry: the key, the error, its log line and remediation, and the affected Attempts.
 */
function failuresPanel(
  summary: RunSummary,
  builds: BuildFailureGroups | undefined,
): BoxPanel | null {
  const failed = summary.rows.filter((r) => r.verdict === "failed");
  const errored = summary.rows.filter((r) => r.verdict === "errored");
  if (failed.length === 0 && errored.length === 0) return null;
  const body: string[] = [];
  const groups = new Map<string, { reason: string | null; rows: SlotReport[] }>();
  for (const row of failed) {
    const first = row.result ? firstFailure(row.result) : undefined;
    const shape = first ? assertionShape(first, false) : "carried failure (details: niceeval show)";
    const group = groups.get(shape) ?? { reason: first?.reason ?? null, rows: [] };
    group.rows.push(row);
    groups.set(shape, group);
  }
  for (const [shape, group] of [...groups].slice(0, 5)) {
    body.push(`${shape}  (${group.rows.length}×)`);
    if (group.reason) body.push(`  reason: ${oneLine(group.reason)}`);
    for (const row of group.rows.slice(0, 3)) {
      const { experimentId, evalId, ordinal } = row.slot;
      body.push(`  ✗ ${row.locator ?? "—"}  ${experimentId}  ${evalId}#${ordinal}`);
    }
    if (group.rows.length > 3) body.push(`  … ${group.rows.length - 3} more`);
  }
  const entries: (SlotReport | BuildFailureGroup)[] = [];
  const listed = new Set<BuildFailureGroup>();
  for (const row of errored) {
    const { experimentId, evalId, ordinal } = row.slot;
    const group = row.state === "errored-undispatched"
      ? builds?.of(experimentId, evalId, ordinal)
      : undefined;
    if (group === undefined) entries.push(row);
    else if (!listed.has(group)) {
      listed.add(group);
      entries.push(group);
    }
  }
  for (const entry of entries.slice(0, 10)) {
    if (!("slot" in entry)) {
      body.push(`✗ ${entry.run}  build ${entry.buildKey} · ${groupSize(entry)}`);
      body.push(...buildGroupBody(entry, { indent: "  " }));
      continue;
    }
    const row = entry;
    const code = row.result?.error?.code ?? row.reason ?? "errored";
    const message = row.result?.error?.message ?? row.message ?? "";
    const at = row.result?.error ? atLocation(row.result.error) : "";
    const { experimentId, evalId, ordinal } = row.slot;
    body.push(`✗ ${row.locator ? `${row.locator}  ` : ""}${experimentId}  ${evalId}#${ordinal}`);
    body.push(`  error ${code}: ${oneLine(message)}${at}`);
    if (row.locator) body.push(`  details: niceeval show ${row.locator}`);
  }
  return { title: "FAILURES", note: `${failed.length} failed · ${errored.length} errored`, body };
}

/** NEXT (OUT-H15). */
function nextPanel(
  summary: RunSummary,
  runIds: readonly string[],
  positionals: readonly string[],
): BoxPanel {
  const body: string[] = [];
  if (runIds.length === 1) body.push(`niceeval show --run ${runIds[0]}`);
  else {
    body.push("niceeval show");
    for (const id of runIds.slice(0, 3)) body.push(`niceeval show --run ${id}`);
  }
  const exp = ["niceeval exp", ...positionals].join(" ");
  if (summary.counts.failed > 0 || summary.counts.errored > 0) body.push(`${exp} --rerun`);
  if (summary.rows.some((r) => r.reason === "budget-exhausted")) {
    body.push(`${exp} --budget <usd>`);
  }
  if (summary.headline === "INTERRUPTED") body.push(exp);
  return { title: "NEXT", note: null, body };
}

/** ` at <file:line:col>` of an error thrown by user code, else "". */
function atLocation(error: { readonly location?: string | null }): string {
  return error.location ? ` at ${oneLine(error.location)}` : "";
}

/** A JSON value as shown in human output: strings bare, everything else as JSON. */
function showValue(value: JsonValue): string {
  return typeof value === "string" ? oneLine(value) : JSON.stringify(value);
}

function oneLine(text: string): string {
  const flat = text.replace(/\s*\n\s*/g, " ").trim();
  return flat.length > 300 ? flat.slice(0, 299) + "…" : flat;
}
