/** JUnit XML (cli.md §8): one testsuite per Run, one testcase per planned slot. */
import { formatScore, isoTime, type Redactor } from "../_shared/mod.ts";
import type { Plan } from "../plan/mod.ts";
import { assertionShape, firstFailure, scoreFailureText } from "./human.ts";
import type { RunSummary, SlotReport } from "./summary.ts";

/** What a testsuite needs besides its rows. */
interface JunitRun {
  readonly experimentIndex: number;
  readonly runId: string;
  readonly agent: string;
  readonly model: string | null;
  readonly startedAt: number;
  readonly endedAt: number;
}

interface Tally {
  tests: number;
  failures: number;
  errors: number;
  skipped: number;
}

/** Renders the whole document. */
export function junitXml(
  summary: RunSummary,
  plan: Plan,
  runs: readonly JunitRun[],
  now: {
    startedAt: number;
    endedAt: number;
    /** Applied to every value before it is escaped (JUNIT-5, CLI-8); default: none. */
    redactor?: Redactor | undefined;
  },
): string {
  const esc = escapes(now.redactor);
  const { attr } = esc;
  const total: Tally = { tests: 0, failures: 0, errors: 0, skipped: 0 };
  const suites: string[] = [];
  for (const run of runs) {
    const experiment = plan.experiments[run.experimentIndex]!;
    const rows = summary.rows
      .filter((r) => r.slot.experimentIndex === run.experimentIndex)
      .sort((a, b) => a.slot.evalIndex - b.slot.evalIndex || a.slot.ordinal - b.slot.ordinal);
    const tally: Tally = { tests: 0, failures: 0, errors: 0, skipped: 0 };
    const cases = rows.map((row) => testcase(row, tally, esc));
    for (const key of Object.keys(total) as (keyof Tally)[]) total[key] += tally[key];
    suites.push(
      `  <testsuite name="${attr(experiment.id)}" ${counters(tally)} time="${
        seconds(run.endedAt - run.startedAt)
      }" timestamp="${isoTime(run.startedAt)}">\n` +
        `    <properties>\n` +
        `      <property name="runId" value="${attr(run.runId)}"/>\n` +
        `      <property name="agent" value="${attr(run.agent)}"/>\n` +
        `      <property name="model" value="${attr(run.model ?? "")}"/>\n` +
        `    </properties>\n` +
        cases.join("") +
        `  </testsuite>\n`,
    );
  }
  return `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<testsuites name="niceeval" ${counters(total)} time="${
      seconds(now.endedAt - now.startedAt)
    }" timestamp="${isoTime(now.startedAt)}">\n` +
    suites.join("") +
    `</testsuites>\n`;
}

function testcase(row: SlotReport, tally: Tally, { attr, message, text }: Escapes): string {
  tally.tests++;
  const s = row.slot;
  const open = `    <testcase name="${
    attr(`${s.evalId} [${s.experimentId}#${s.ordinal}]`)
  }" classname="${attr(s.experimentId)}" time="${seconds(row.durationMs ?? 0)}"`;
  const children: string[] = [];
  const out: string[] = [];
  // A score below its passAt is a failure; its score is still shown (docs/scores.md).
  const scored = row.verdict === "scored" || (row.verdict === "failed" && s.kind === "score");
  if (scored) out.push(junitScore(row));
  if (row.state === "carried") out.push(`carried from ${row.locator} (run ${row.originRunId})`);
  if (row.verdict === "failed") {
    tally.failures++;
    const failing = row.result?.details.assertions.filter((a) => a.status === "failed") ?? [];
    const first = row.result ? firstFailure(row.result) : undefined;
    const scoreWhy = s.kind === "score"
      ? scoreFailureText(row.score, row.possible, row.passAt)
      : null;
    const body = [
      ...(scoreWhy === null ? [] : [scoreWhy]),
      ...failing.map((a) => assertionShape(a)),
      ...(row.locator ? [`locator: ${row.locator}`, `details: niceeval show ${row.locator}`] : []),
    ];
    children.push(
      `      <failure type="${scoreWhy === null ? "assertion" : "score"}" message="${
        message(scoreWhy ?? (first ? assertionShape(first, false) : "a gating assertion failed"))
      }">${text(body.join("\n"))}</failure>\n`,
    );
  } else if (row.verdict === "errored") {
    tally.errors++;
    const code = row.result?.error?.code ?? row.reason ?? "errored";
    const msg = row.result?.error?.message ?? row.message ?? "";
    const phase = row.result?.error?.phase ?? "experiment.setup";
    const error = row.result?.error;
    const body = [
      `phase: ${phase}`,
      msg,
      ...(error?.location ? [`location: ${error.location}`] : []),
      ...(error?.stack ? error.stack.split("\n").map((frame) => `    ${frame}`) : []),
      ...(row.locator ? [`locator: ${row.locator}`] : []),
    ];
    children.push(
      `      <error type="${attr(code)}" message="${message(`${code}: ${msg}`)}">${
        text(body.join("\n"))
      }</error>\n`,
    );
  } else if (
    row.verdict === "interrupted" || (row.verdict === null && row.reason === "interrupted")
  ) {
    tally.errors++;
    children.push(`      <error type="interrupted" message="interrupted before completion"/>\n`);
  } else if (row.verdict === "skipped") {
    tally.skipped++;
    children.push(`      <skipped message="${message(row.result?.skipReason ?? "skipped")}"/>\n`);
  } else if (row.verdict === null) {
    tally.skipped++;
    children.push(`      <skipped message="${message(`not dispatched: ${row.reason}`)}"/>\n`);
  }
  if (out.length > 0) children.push(`      <system-out>${text(out.join("\n"))}</system-out>\n`);
  return children.length === 0 ? `${open}/>\n` : `${open}>\n${children.join("")}    </testcase>\n`;
}

/** `score <n>`, with `/<possible> (<p>%)` when the possible score is known (docs/scores.md). */
function junitScore(row: SlotReport): string {
  const earned = row.score ?? 0;
  if (row.possible === null) return `score ${earned}`;
  const pct = row.possible > 0 ? ` (${Math.floor((earned / row.possible) * 100)}%)` : "";
  return `score ${earned}/${formatScore(row.possible)}${pct}`;
}

function counters(t: Tally): string {
  return `tests="${t.tests}" failures="${t.failures}" errors="${t.errors}" skipped="${t.skipped}"`;
}

function seconds(ms: number): string {
  return (Math.max(0, ms) / 1000).toFixed(3);
}

/** Replaces what XML 1.0 cannot hold (C0 controls but tab/LF/CR, U+FFFE/U+FFFF, lone surrogates). */
function clean(value: string): string {
  let out = "";
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        out += value[i]! + value[i + 1]!;
        i++;
      } else out += "\uFFFD";
    } else if ((c >= 0xdc00 && c <= 0xdfff) || c === 0xfffe || c === 0xffff) out += "\uFFFD";
    else if (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) out += "\uFFFD";
    else out += value[i];
  }
  return out;
}

/** The value escapes of one document; each redacts its value first (JUNIT-5, CLI-8). */
interface Escapes {
  attr(value: string): string;
  message(value: string): string;
  text(value: string): string;
}

function escapes(redactor: Redactor | undefined): Escapes {
  if (!redactor || redactor.isEmpty) {
    return { attr: escapeAttr, message: escapeMessage, text: escapeText };
  }
  return {
    attr: (value) => escapeAttr(redactor.redact(value)),
    message: (value) => escapeMessage(redactor.redact(value)),
    text: (value) => escapeText(redactor.redact(value)),
  };
}

function escapeAttr(value: string): string {
  return clean(value).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(
    /"/g,
    "&quot;",
  )
    .replace(/'/g, "&apos;").replace(/\r?\n/g, "&#10;");
}

function escapeMessage(value: string): string {
  const line = value.replace(/\s*\n\s*/g, " ");
  return escapeAttr(line.length > 500 ? line.slice(0, 499) + "…" : line);
}

function escapeText(value: string): string {
  return clean(value).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
