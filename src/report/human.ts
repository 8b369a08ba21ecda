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
  const body = [`${planSize(plan)} · ${concurrencyText(info)}${capped}${budgets}`];
  if (plan.reused > 0) {
    body.push(`${plan.reused} of ${plan.total} reused from earlier runs · ${plan.toRun} to run`);
  }
  return { title: info.dry ? "PLAN (dry run)" : "PLAN", note: null, body };
}

/**
 * `<N> attempts (<E> evals × <C> experiments[ × <A> attempts each])` when every experiment runs
 * the same evals the same number of times; otherwise `(<E> evals across <C> experiments[, <A>
 * attempts each])`, which never claims a product that does not hold (issue 18.6).
 */
function planSize(plan: Plan): string {
  const { experiments } = plan;
  const evals = plural(plan.evalCount, "eval");
  const count = plural(experiments.length, "experiment");
  const attempts = new Set(experiments.map((e) => e.attempts));
  const each = attempts.size === 1 ? [...attempts][0]! : 0;
  const sameEvals = experiments.every((e) => e.evals.length === plan.evalCount);
  const shape = sameEvals && each > 0
    ? `${evals} × ${count}${each > 1 ? ` × ${each} attempts each` : ""}`
    : `${evals} across ${count}${each > 1 ? `, ${each} attempts each` : ""}`;
  return `${plural(plan.total, "attempt")} (${shape})`;
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

/**
 * `criterion · expected e · received r[ · reason]` of one failing assertion. Only the received
 * value, which echoes what the agent produced, is ever cut.
 */
export function assertionShape(a: SealedAssertion, withReason = true): string {
  const parts = [oneLine(a.criterion)];
  if (a.expected !== null) parts.push(`expected ${showValue(a.expected)}`);
  if (a.received !== null) parts.push(`received ${echoed(showValue(a.received))}`);
  if (withReason && a.reason) parts.push(oneLine(a.reason));
  return parts.join(" · ");
}

/** The first failing gating assertion of a failed Attempt. */
export function firstFailure(result: Pick<AttemptResult, "details">): SealedAssertion | undefined {
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
    const why = result.kind === "score"
      ? scoreFailureText(result.score, result.possible ?? null, result.passAt ?? null)
      : first
      ? assertionShape(first)
      : "a gating assertion failed";
    return [`${head}  failed  ${locator}`, `    ${why}`];
  }
  if (result.verdict === "errored" && result.error) {
    return [
      `${head}  errored  ${locator}`,
      `    ${errorText(result.error)}`,
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
  /**
   * Flags the NEXT lines repeat so that they address the same results (issue 18.11): `show` gets
   * `--record <root>`, `exp` gets `--record`, `--attempts` and the selection flags. None if absent.
   */
  readonly nextFlags?: NextFlags | undefined;
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
  const commands = nextCommands(options.positionals, options.nextFlags);
  return [
    headlinePanel(summary, options.wallMs),
    resultsPanel(summary, options.plan, commands.show),
    ...(failures ? [failures] : []),
    nextPanel(summary, options.runIds, commands),
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
    ? [
      `${c.scored} scored`,
      // A score below its passAt is failed (docs/scores.md): named only when there is one.
      ...(c.failed > 0 ? [`${c.failed} failed`] : []),
      `${c.skipped} skipped`,
      `${c.errored} errored`,
    ]
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

/** Most experiment lines in RESULTS; the rest is one `… <n> more experiments` line. */
const RESULTS_EXPERIMENTS = 10;
/** Most eval lines in RESULTS, over all experiments; each cut experiment says how many are left. */
const RESULTS_EVALS = 20;

/**
 * RESULTS (issue 18.9, replacing OUT-H13's eval table): one line per experiment (pass rate or
 * score, counts, duration, tokens and cost), each followed by its evals that did not all pass, at
 * most {@link RESULTS_EVALS} eval lines in all. The full table is `niceeval show`.
 */
function resultsPanel(summary: RunSummary, plan: Plan, show: string): BoxPanel {
  const body: string[] = [];
  const shown = plan.experiments.slice(0, RESULTS_EXPERIMENTS);
  const idWidth = Math.max(...shown.map((e) => textWidth(e.id)));
  let room = RESULTS_EVALS;
  const byExperiment = Map.groupBy(summary.rows, (r) => r.slot.experimentIndex);
  for (const experiment of shown) {
    const rows = byExperiment.get(experiment.index) ?? [];
    body.push(`${padWidth(experiment.id, idWidth)}  ${experimentResultText(rows)}`);
    const byEval = Map.groupBy(rows, (r) => r.slot.evalId);
    const open = experiment.evals.flatMap((e) => {
      const evalRows = byEval.get(e.id) ?? [];
      return allPassed(evalRows) ? [] : [{ id: e.id, rows: evalRows }];
    });
    const listed = open.slice(0, room);
    room -= listed.length;
    const width = Math.max(0, ...listed.map((e) => textWidth(e.id)));
    for (const e of listed) body.push(`  ${padWidth(e.id, width)}  ${evalResultText(e.rows)}`);
    if (open.length > listed.length) body.push(`  … ${open.length - listed.length} more · ${show}`);
  }
  const more = plan.experiments.length - shown.length;
  if (more > 0) body.push(`… ${plural(more, "more experiment")} · ${show}`);
  return { title: "RESULTS", note: plural(plan.experiments.length, "experiment"), body };
}

/** True when every needed ordinal of an eval passed (or scored): RESULTS then lists no line. */
function allPassed(rows: readonly SlotReport[]): boolean {
  return rows.every((r) =>
    r.verdict === "passed" || r.verdict === "scored" ||
    (r.verdict === null && r.reason === "early-exit")
  );
}

/**
 * One experiment's RESULTS line: the eval wording over all its pass slots (with the pass rate) and
 * over all its score slots, then reused count, the span of its executed Attempts, their tokens and
 * estimated cost.
 */
function experimentResultText(rows: readonly SlotReport[]): string {
  const pass = rows.filter((r) => r.slot.kind === "pass");
  const score = rows.filter((r) => r.slot.kind === "score");
  const parts: string[] = [];
  if (pass.length > 0) parts.push(withPassRate(evalResultText(pass), pass));
  if (score.length > 0) parts.push(evalResultText(score));
  const reused = rows.filter((r) => r.state === "carried").length;
  if (reused > 0) parts.push(`${reused} reused`);
  // One pass, one result at a time: a compact row rebuilds its result on each read.
  let executed = 0;
  let start = Infinity;
  let end = -Infinity;
  let tokens = 0;
  let cost: number | null = null;
  for (const row of rows) {
    const r = row.state === "executed" ? row.result : null;
    if (!r) continue;
    executed++;
    start = Math.min(start, r.startedAt);
    end = Math.max(end, r.endedAt);
    tokens += (r.usage?.inputTokens ?? 0) + (r.usage?.outputTokens ?? 0);
    if (r.estimatedCostUSD !== null) cost = (cost ?? 0) + r.estimatedCostUSD;
  }
  if (executed > 0) {
    parts.push(formatDuration(end - start), `${formatTokens(tokens)} new tok`);
    if (cost !== null) parts.push(formatCost(cost));
  }
  return parts.join(" · ");
}

/** `k/N passed` of {@link evalResultText} with the pass rate, rounded down: `k/N passed (p%)`. */
function withPassRate(text: string, rows: readonly SlotReport[]): string {
  const needed = rows.filter((r) => !(r.verdict === null && r.reason === "early-exit")).length;
  const passed = rows.filter((r) => r.verdict === "passed").length;
  if (needed === 0) return text;
  const head = `${passed}/${needed} passed`;
  const rate = Math.floor((passed / needed) * 100);
  return text.startsWith(head) ? `${head} (${rate}%)${text.slice(head.length)}` : text;
}

/**
 * `score <mean earned>/<mean possible> (<p>%)` over the scored rows (docs/scores.md): the maximum
 * and percentage only when every row knows its possible score; `score —` when nothing was scored
 * (OUT-H13: no mean over zero scores).
 */
function scoreText(scored: readonly SlotReport[]): string {
  if (scored.length === 0) return "score —";
  const earned = scored.reduce((sum, r) => sum + (r.score ?? 0), 0);
  const mean = formatScore(earned / scored.length);
  if (scored.some((r) => r.possible === null)) return `score ${mean}`;
  const possible = scored.reduce((sum, r) => sum + (r.possible ?? 0), 0);
  const pct = possible > 0 ? ` (${Math.floor((earned / possible) * 100)}%)` : "";
  return `score ${mean}/${formatScore(possible / scored.length)}${pct}`;
}

/**
 * Why a score Attempt failed (docs/scores.md): `score 0.5/2 (25%) below passAt 1.5`, the maximum
 * and percentage only when its possible score is known.
 */
export function scoreFailureText(
  score: number | null,
  possible: number | null,
  passAt: number | null,
): string {
  const earned = score ?? 0;
  const of = possible === null
    ? ""
    : `/${formatScore(possible)}${
      possible > 0 ? ` (${Math.floor((earned / possible) * 100)}%)` : ""
    }`;
  return `score ${formatScore(earned)}${of} below passAt${
    passAt === null ? "" : ` ${formatScore(passAt)}`
  }`;
}

/** `below passAt <p>` when the rows share one passAt, else `below passAt`. */
function belowPassAtText(rows: readonly SlotReport[]): string {
  const thresholds = new Set(rows.flatMap((r) => r.passAt === null ? [] : [r.passAt]));
  return thresholds.size === 1
    ? `below passAt ${formatScore([...thresholds][0]!)}`
    : "below passAt";
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
    const scored = rows.filter((r) => r.verdict === "scored" || r.verdict === "failed");
    head = `${scoreText(scored)} · ${scored.length}/${n} complete`;
    if (failed > 0) tail.push(`${failed} failed (${belowPassAtText(rows)})`);
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
 * FAILURES (OUT-H14), or null when nothing failed or errored. Failed Attempts are grouped by the
 * shape of their first failing assertion, errored ones by their error (code, message and where it
 * was thrown): a head line with `(<n>×)`, then up to 3 (failures) or 1 (errors) example Attempts
 * and `… <n> more`. Reused results read like fresh ones, marked `(reused from @<locator>)`.
 * Attempts errored by one failed build key are one entry: the key, the error, its log line and
 * remediation, and the affected Attempts. Nothing here is cut but echoed agent text.
 */
function failuresPanel(
  summary: RunSummary,
  builds: BuildFailureGroups | undefined,
): BoxPanel | null {
  const failed = summary.rows.filter((r) => r.verdict === "failed");
  const errored = summary.rows.filter((r) => r.verdict === "errored");
  if (failed.length === 0 && errored.length === 0) return null;
  const body: string[] = [];
  for (const group of [...failureGroups(failed).values()].slice(0, 5)) {
    body.push(`${group.head}  (${group.rows.length}×)`);
    if (group.reason) body.push(`  reason: ${oneLine(group.reason)}`);
    body.push(...exampleLines(group.rows, 3));
  }
  for (const entry of errorEntries(errored, builds).slice(0, 10)) {
    if (!("rows" in entry)) {
      body.push(`✗ ${entry.run}  build ${entry.buildKey} · ${groupSize(entry)}`);
      body.push(...buildGroupBody(entry, { indent: "  " }));
      continue;
    }
    body.push(`${entry.head}  (${entry.rows.length}×)`, ...exampleLines(entry.rows, 1));
    const example = entry.rows.find((row) => row.locator !== null);
    if (example) body.push(`  details: niceeval show ${example.locator}`);
  }
  return { title: "FAILURES", note: `${failed.length} failed · ${errored.length} errored`, body };
}

/** Attempts of FAILURES that one head line stands for. */
interface RowGroup {
  readonly head: string;
  readonly reason: string | null;
  readonly rows: SlotReport[];
}

/** Failed rows by the shape of their first failing assertion, in the order of their first row. */
function failureGroups(failed: readonly SlotReport[]): Map<string, RowGroup> {
  const groups = new Map<string, RowGroup>();
  for (const row of failed) {
    const score = row.slot.kind === "score";
    const first = row.result && !score ? firstFailure(row.result) : undefined;
    const head = score
      ? `score ${belowPassAtText([row])}`
      : first
      ? assertionShape(first, false)
      : "a gating assertion failed";
    let group = groups.get(head);
    if (!group) groups.set(head, group = { head, reason: first?.reason ?? null, rows: [] });
    group.rows.push(row);
  }
  return groups;
}

/**
 * Errored rows as FAILURES lists them, in the order of their first row: rows with the same error
 * as one group, and the rows errored by one failed build key as that key's build group.
 */
function errorEntries(
  errored: readonly SlotReport[],
  builds: BuildFailureGroups | undefined,
): (RowGroup | BuildFailureGroup)[] {
  const entries: (RowGroup | BuildFailureGroup)[] = [];
  const byError = new Map<string, RowGroup>();
  const listed = new Set<BuildFailureGroup>();
  for (const row of errored) {
    const { experimentId, evalId, ordinal } = row.slot;
    const build = row.state === "errored-undispatched"
      ? builds?.of(experimentId, evalId, ordinal)
      : undefined;
    if (build !== undefined) {
      if (!listed.has(build)) entries.push(build);
      listed.add(build);
      continue;
    }
    const error = row.result?.error;
    const head = `error ${
      error ? errorText(error) : `${row.reason ?? "errored"}: ${oneLine(row.message ?? "")}`
    }`;
    let group = byError.get(head);
    if (!group) {
      byError.set(head, group = { head, reason: null, rows: [] });
      entries.push(group);
    }
    group.rows.push(row);
  }
  return entries;
}

/**
 * The first `limit` rows of a group as `  ✗ @<locator>  <experimentId>  <evalId>#<o>`, marked
 * `  (reused from @<locator>)` when reused, then `… <n> more`.
 */
function exampleLines(rows: readonly SlotReport[], limit: number): string[] {
  const lines = rows.slice(0, limit).map((row) => {
    const { experimentId, evalId, ordinal } = row.slot;
    const reused = row.state === "carried" ? `  (reused from ${row.locator})` : "";
    const locator = row.locator ? `${row.locator}  ` : "";
    return `  ✗ ${locator}${experimentId}  ${evalId}#${ordinal}${reused}`;
  });
  if (rows.length > limit) lines.push(`  … ${rows.length - limit} more`);
  return lines;
}

/** Flags the NEXT lines repeat, as argv words (unquoted). */
interface NextFlags {
  /** Appended to `niceeval show` lines: `--record <root>` when the run used one. */
  readonly show: readonly string[];
  /** Appended to `niceeval exp` lines: `--record`, `--attempts` and selection flags as given. */
  readonly exp: readonly string[];
}

/** The `niceeval show` and `niceeval exp <positionals>` prefixes of NEXT, shell-quoted. */
function nextCommands(
  positionals: readonly string[],
  flags: NextFlags | undefined,
): { show: string; exp: string } {
  return {
    show: ["niceeval", "show", ...(flags?.show ?? [])].map(shellWord).join(" "),
    exp: ["niceeval", "exp", ...positionals, ...(flags?.exp ?? [])].map(shellWord).join(" "),
  };
}

/** NEXT (OUT-H15), every line carrying the run's `--record` (and `exp` lines its `--attempts`). */
function nextPanel(
  summary: RunSummary,
  runIds: readonly string[],
  commands: { show: string; exp: string },
): BoxPanel {
  const { show, exp } = commands;
  const body: string[] = [];
  if (runIds.length === 1) body.push(`${show} --run ${runIds[0]}`);
  else {
    body.push(show);
    for (const id of runIds.slice(0, 3)) body.push(`${show} --run ${id}`);
  }
  if (summary.counts.failed > 0 || summary.counts.errored > 0) body.push(`${exp} --rerun`);
  if (summary.rows.some((r) => r.reason === "budget-exhausted")) {
    body.push(`${exp} --budget <usd>`);
  }
  if (summary.headline === "INTERRUPTED") body.push(exp);
  return { title: "NEXT", note: null, body };
}

/** Characters a shell word may hold unquoted. */
const SHELL_SAFE_REGEXP = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** `word` as one POSIX shell word: bare when safe, else single-quoted. */
function shellWord(word: string): string {
  return SHELL_SAFE_REGEXP.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** Echoed agent text (a received value) is cut to this many characters; nothing else is. */
const ECHO_LIMIT = 300;

/** `<code>: <message>[ at <file:line:col>]` of an error, whole, on one line. */
function errorText(error: NonNullable<AttemptResult["error"]>): string {
  return `${error.code}: ${oneLine(error.message)}${atLocation(error)}`;
}

/** ` at <file:line:col>` of an error thrown by user code, else "". */
function atLocation(error: { readonly location?: string | null }): string {
  return error.location ? ` at ${oneLine(error.location)}` : "";
}

/** A JSON value as shown in human output: strings bare, everything else as JSON; never cut. */
function showValue(value: JsonValue): string {
  return typeof value === "string" ? oneLine(value) : JSON.stringify(value);
}

/** `text` on one line: line breaks and the space around them become one space; never cut. */
function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").trim();
}

/** Echoed agent text, cut to {@link ECHO_LIMIT} characters with `…`. */
function echoed(text: string): string {
  const chars = [...text];
  return chars.length > ECHO_LIMIT ? chars.slice(0, ECHO_LIMIT - 1).join("") + "…" : text;
}
