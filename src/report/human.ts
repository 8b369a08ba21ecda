/**
 * Plain (unboxed) human output of `exp` (cli.md §5): PLAN, permanent lines, end panels.
 * Every function returns lines; writers decide where they go.
 */
import { formatCost, formatDuration, formatScore, formatTokens, plural } from "../_shared/mod.ts";
import type { JsonValue } from "../_shared/mod.ts";
import type { AttemptResult } from "../_shared/mod.ts";
import type { SealedAssertion } from "../expect/mod.ts";
import type { Plan } from "../plan/mod.ts";
import { isGap, type RunSummary, type SlotReport } from "./summary.ts";

/** What the PLAN panel shows. */
export interface PlanInfo {
  readonly plan: Plan;
  readonly cap: number;
  readonly capAnnotation: string;
  readonly dry?: boolean;
}

/** The PLAN panel (OUT-H5), unboxed. */
export function planLines(info: PlanInfo): string[] {
  const { plan } = info;
  const capped = plan.experiments
    .filter((e) => e.maxConcurrency !== null)
    .map((e) => ` · ${e.id} ≤${e.maxConcurrency}`)
    .join("");
  const lines = [
    info.dry ? "PLAN (dry run)" : "PLAN",
    `  ${plural(plan.total, "attempt")} · ${plural(plan.evalCount, "eval")} × ${
      plural(plan.experiments.length, "config")
    } · concurrency ${info.cap} (${info.capAnnotation})${capped}`,
  ];
  if (plan.reused > 0) {
    lines.push(`  ${plan.reused} of ${plan.total} carried in from cache · ${plan.toRun} to run`);
  }
  return lines;
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

/** The two permanent lines of a failed or errored Attempt (OUT-H9), or none. */
export function attemptLines(result: AttemptResult, locator: string): string[] {
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
      `    ${result.error.code}: ${oneLine(result.error.message)}`,
    ];
  }
  return [];
}

/** Headline, RESULTS, FAILURES and NEXT (OUT-H11 … OUT-H15), unboxed. */
export function endLines(
  summary: RunSummary,
  options: {
    plan: Plan;
    wallMs: number;
    runIds: readonly string[];
    positionals: readonly string[];
  },
): string[] {
  return [
    ...headlineLines(summary, options.wallMs),
    ...resultsLines(summary, options.plan),
    ...failuresLines(summary),
    ...nextLines(summary, options.runIds, options.positionals),
  ];
}

function headlineLines(summary: RunSummary, wallMs: number): string[] {
  const c = summary.counts;
  const parts = summary.hasPass && summary.hasScore
    ? [`${c.passed} passed`, `${c.failed} failed`, `${c.scored} scored`, `${c.errored} errored`]
    : summary.hasScore
    ? [`${c.scored} scored`, `${c.skipped} skipped`, `${c.errored} errored`]
    : [`${c.passed} passed`, `${c.failed} failed`, `${c.errored} errored`];
  if (summary.hasPass && c.skipped > 0) parts.push(`${c.skipped} skipped`);
  if (c.unstarted > 0) parts.push(`${c.unstarted} unstarted`);
  if (c.interrupted > 0) parts.push(`${c.interrupted} interrupted`);
  const lines = [
    `${summary.headline}  ${formatDuration(wallMs)}`,
    `  ${parts.join(" · ")}  (${c.reused} reused)`,
  ];
  const executed = summary.rows.some((r) => r.state === "executed");
  if (executed) {
    lines.push(
      `  ${formatTokens(summary.newTokens)} new tok${
        summary.costUSD !== null ? ` · ${formatCost(summary.costUSD)}` : ""
      }`,
    );
  }
  return lines;
}

function resultsLines(summary: RunSummary, plan: Plan): string[] {
  const lines = [`RESULTS  ${plural(plan.experiments.length, "experiment")}`];
  for (const experiment of plan.experiments.slice(0, 5)) {
    lines.push(`  ${experiment.id}`);
    const evals = experiment.evals;
    const width = Math.max(...evals.slice(0, 20).map((e) => e.id.length));
    for (const e of evals.slice(0, 20)) {
      const rows = summary.rows.filter((r) =>
        r.slot.experimentIndex === experiment.index && r.slot.evalId === e.id
      );
      lines.push(`    ${e.id.padEnd(width)}  ${evalResultText(rows)}`);
    }
    if (evals.length > 20) lines.push(`    … ${evals.length - 20} more evals`);
  }
  if (plan.experiments.length > 5) {
    lines.push(`  … ${plan.experiments.length - 5} more experiments · niceeval show`);
  }
  return lines;
}

/** The RESULTS wording of one (experiment, eval) (OUT-H13). */
export function evalResultText(rows: readonly SlotReport[]): string {
  const count = (pred: (r: SlotReport) => boolean) => rows.filter(pred).length;
  const notNeeded = count((r) => r.reason === "early-exit" && r.verdict === null);
  const n = rows.length - notNeeded;
  const gaps = rows.filter(isGap);
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
    tail.push(`${gaps.length} not run (${[...new Set(gaps.map((g) => g.reason))].join(", ")})`);
  }
  if (notNeeded > 0) tail.push(`${notNeeded} not needed (early exit)`);
  return [head, ...tail].join(" · ");
}

function failuresLines(summary: RunSummary): string[] {
  const failed = summary.rows.filter((r) => r.verdict === "failed");
  const errored = summary.rows.filter((r) => r.verdict === "errored");
  if (failed.length === 0 && errored.length === 0) return [];
  const lines = [`FAILURES  ${failed.length} failed · ${errored.length} errored`];
  const groups = new Map<string, { reason: string | null; rows: SlotReport[] }>();
  for (const row of failed) {
    const first = row.result ? firstFailure(row.result) : undefined;
    const shape = first ? assertionShape(first, false) : "carried failure (details: niceeval show)";
    const group = groups.get(shape) ?? { reason: first?.reason ?? null, rows: [] };
    group.rows.push(row);
    groups.set(shape, group);
  }
  for (const [shape, group] of [...groups].slice(0, 5)) {
    lines.push(`  ${shape}  (${group.rows.length}×)`);
    if (group.reason) lines.push(`    reason: ${oneLine(group.reason)}`);
    for (const row of group.rows.slice(0, 3)) {
      lines.push(
        `    ✗ ${
          row.locator ?? "—"
        }  ${row.slot.experimentId}  ${row.slot.evalId}#${row.slot.ordinal}`,
      );
    }
    if (group.rows.length > 3) lines.push(`    … ${group.rows.length - 3} more`);
  }
  for (const row of errored.slice(0, 10)) {
    const code = row.result?.error?.code ?? row.reason ?? "errored";
    const message = row.result?.error?.message ?? row.message ?? "";
    if (row.locator) {
      lines.push(
        `  ✗ ${row.locator}  ${row.slot.experimentId}  ${row.slot.evalId}#${row.slot.ordinal}`,
      );
      lines.push(`    error ${code}: ${oneLine(message)}`);
      lines.push(`    details: niceeval show ${row.locator}`);
    } else {
      lines.push(`  ✗ ${row.slot.experimentId}  ${row.slot.evalId}#${row.slot.ordinal}`);
      lines.push(`    error ${code}: ${oneLine(message)}`);
    }
  }
  return lines;
}

function nextLines(
  summary: RunSummary,
  runIds: readonly string[],
  positionals: readonly string[],
): string[] {
  const lines = ["NEXT"];
  if (runIds.length === 1) lines.push(`  niceeval show --run ${runIds[0]}`);
  else {
    lines.push("  niceeval show");
    for (const id of runIds.slice(0, 3)) lines.push(`  niceeval show --run ${id}`);
  }
  const exp = ["niceeval exp", ...positionals].join(" ");
  if (summary.counts.failed > 0 || summary.counts.errored > 0) lines.push(`  ${exp} --rerun`);
  if (summary.rows.some((r) => r.reason === "budget-exhausted")) {
    lines.push(`  ${exp} --budget <usd>`);
  }
  if (summary.headline === "INTERRUPTED") lines.push(`  ${exp}`);
  return lines;
}

/** A JSON value as shown in human output: strings bare, everything else as JSON. */
export function showValue(value: JsonValue): string {
  return typeof value === "string" ? oneLine(value) : JSON.stringify(value);
}

function oneLine(text: string): string {
  const flat = text.replace(/\s*\n\s*/g, " ").trim();
  return flat.length > 300 ? flat.slice(0, 299) + "…" : flat;
}
