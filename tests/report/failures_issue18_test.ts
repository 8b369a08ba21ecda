/**
 * Issue 18, items 1, 10 and 11 in the reports: FAILURES groups identical errors like failures,
 * no error's code, message or reason is ever cut (only echoed agent text is), a reused failure
 * reads like a fresh one, and `show @locator` keeps a multi-line message under its first line.
 */
import assert from "node:assert/strict";
import type { AttemptError, SlotOutcome } from "../../src/_shared/mod.ts";
import type { CarryDecision } from "../../src/plan/mod.ts";
import { locatorOf } from "../../src/record/mod.ts";
import {
  attemptLines,
  attemptViewLines,
  endLines,
  junitXml,
  summarize,
} from "../../src/report/mod.ts";
import type { AttemptView, RunSummary } from "../../src/report/mod.ts";
import { buildGroupBody } from "../../src/report/build_failures.ts";
import { sketchPlan } from "../_fakes/plans.ts";
import { entry, result } from "../_fakes/results.ts";

/** A reason longer than any cut the reports ever made (300 characters). */
const LONG = "connect ECONNREFUSED 127.0.0.1:9 · retries exhausted (4 tries, network) · " +
  "the server at http://127.0.0.1:9/v1 did not answer; ".repeat(8).trim();
const REFUSED: AttemptError = {
  code: "agent-send-failed",
  phase: "agent.send",
  message: LONG,
  scope: "attempt",
  location: null,
  stack: null,
};
const DENIED: AttemptError = { ...REFUSED, message: "HTTP 401 Incorrect API key provided" };

/** The FAILURES panel of `summary`, up to NEXT. */
function failuresOf(summary: RunSummary, plan: Parameters<typeof endLines>[1]["plan"]): string[] {
  const lines = endLines(summary, { plan, wallMs: 1000, runIds: ["run-1"], positionals: [] });
  return lines.slice(lines.findIndex((l) => l.startsWith("FAILURES")), lines.indexOf("NEXT"));
}

Deno.test("issue 18.1: FAILURES lists 20 identical errors once with (20×), one example locator and the whole message", () => {
  const evals = Array.from({ length: 20 }, (_, i) => [`e${i}`, "pass"] as [string, "pass"]);
  const plan = sketchPlan([{ id: "openai", evals }, { id: "other", evals: [["x", "pass"]] }]);
  const outcomes: SlotOutcome[] = [
    ...evals.map(([evalId], i): SlotOutcome => ({
      kind: "executed",
      result: result({
        attemptId: `a${i}`,
        experimentId: "openai",
        evalId,
        verdict: "errored",
        error: REFUSED,
      }),
    })),
    {
      kind: "executed",
      result: result({
        attemptId: "b",
        experimentId: "other",
        evalId: "x",
        verdict: "errored",
        error: DENIED,
      }),
    },
  ];
  const summary = summarize(plan, outcomes, { runIdOf: () => "run-1", interrupted: false });
  assert.deepEqual(failuresOf(summary, plan), [
    "FAILURES  0 failed · 21 errored",
    `  error agent-send-failed: ${LONG}  (20×)`,
    `    ✗ ${locatorOf("a0")}  openai  e0#0`,
    "    … 19 more",
    `    details: niceeval show ${locatorOf("a0")}`,
    "  error agent-send-failed: HTTP 401 Incorrect API key provided  (1×)",
    `    ✗ ${locatorOf("b")}  other  x#0`,
    `    details: niceeval show ${locatorOf("b")}`,
  ]);
});

Deno.test("issue 18.1: a boxed FAILURES panel goes on over further lines rather than cut an error", () => {
  const plan = sketchPlan([{ id: "openai", evals: [["a", "pass"]] }]);
  const errored = result({
    attemptId: "a",
    experimentId: "openai",
    evalId: "a",
    verdict: "errored",
  });
  const summary = summarize(
    plan,
    [{ kind: "executed", result: { ...errored, error: REFUSED } }],
    { runIdOf: () => "run-1", interrupted: false },
  );
  const lines = endLines(summary, {
    plan,
    wallMs: 1000,
    runIds: ["run-1"],
    positionals: [],
    layout: { boxed: true, width: 80, color: false },
  });
  const from = lines.findIndex((l) => l.includes(" FAILURES "));
  const to = lines.findIndex((l, i) => i > from && l.startsWith("╰"));
  const rows = lines.slice(from + 1, to).map((l) => l.slice(2, -2).trimEnd());
  assert.ok(rows.every((row) => !row.endsWith("…")), rows.join("\n"));
  assert.equal(
    rows.slice(0, rows.findIndex((row) => row.includes("✗"))).map((row) => row.trim()).join(" ")
      .replace(/\s+/g, " "),
    `error agent-send-failed: ${LONG} (1×)`.replace(/\s+/g, " "),
  );
});

Deno.test("issue 18.1: errors without an Attempt group by code and message, without locator or details line", () => {
  const plan = sketchPlan([{ id: "boxed", evals: [["a", "pass"], ["b", "pass"]], attempts: 2 }]);
  const setup: SlotOutcome = {
    kind: "errored-undispatched",
    code: "experiment-setup-failed",
    message: "setup threw:\n  database not reachable",
  };
  const summary = summarize(plan, [setup, setup, setup, setup], {
    runIdOf: () => "run-1",
    interrupted: false,
  });
  assert.deepEqual(failuresOf(summary, plan), [
    "FAILURES  0 failed · 4 errored",
    "  error experiment-setup-failed: setup threw: database not reachable  (4×)",
    "    ✗ boxed  a#0",
    "    … 3 more",
  ]);
});

Deno.test("issue 18.1: the permanent line keeps an error's whole message; only a received value is cut", () => {
  const errored = result({ attemptId: "e", verdict: "errored", error: REFUSED });
  assert.deepEqual(attemptLines(errored, "@1E"), [
    "✗ e1  exp#0  errored  @1E",
    `    agent-send-failed: ${LONG}`,
  ]);
  const agentText = "Hello! ".repeat(60).trim();
  const reason = "the judge explained at length why the reply is wrong: ".repeat(8).trim();
  const failed = result({
    attemptId: "f",
    verdict: "failed",
    details: {
      assertions: [entry({
        criterion: 'includes("Goodbye")',
        status: "failed",
        result: "mismatched",
        expected: "Goodbye",
        received: agentText,
        reason,
      })],
      turns: [],
      phases: [],
      diagnostics: [],
      logs: [],
    },
  });
  assert.deepEqual(attemptLines(failed, "@1F"), [
    "✗ e1  exp#0  failed  @1F",
    `    includes("Goodbye") · expected Goodbye · received ${agentText.slice(0, 299)}… · ${reason}`,
  ]);
});

Deno.test("issue 18.1: a build failure's error is whole; only the echoed log line is cut", () => {
  const message = `Cannot build sandbox artifact: ${"step failed; ".repeat(40).trim()}`;
  const log = `ERR_PNPM_OUTDATED_LOCKFILE ${"x".repeat(400)}`;
  const lines = buildGroupBody({
    run: "x",
    buildKey: "0123456789abcdef",
    code: "sandbox-build-failed",
    phase: "sandbox.build",
    message,
    errorCode: "ERR_PNPM_OUTDATED_LOCKFILE",
    excerpt: log,
    remediation: null,
    attempts: ["a#0"],
  }, { indent: "  " });
  assert.deepEqual(lines, [
    `  error sandbox-build-failed: ${message}`,
    `  log: ${log.slice(0, 299)}…`,
    "  affected: a#0",
  ]);
});

/** A carried failed slot of eval `a`, ordinal 0, from Attempt `c` of run `r0`. */
const CARRIED: CarryDecision = {
  action: "carry",
  source: {
    runId: "r0",
    attemptId: "c",
    originRunId: "r0",
    verdict: "failed",
    durationMs: 1000,
    score: null,
  },
};

/** The report of a run where `a#0` failed fresh and `a#1` is the same failure, reused. */
function freshAndReused(): { plan: ReturnType<typeof sketchPlan>; summary: RunSummary } {
  const plan = sketchPlan(
    [{ id: "x", evals: [["a", "pass"]], attempts: 2 }],
    (_e, _id, ordinal) => ordinal === 1 ? CARRIED : undefined,
  );
  const fresh = result({ attemptId: "f", experimentId: "x", evalId: "a", verdict: "failed" });
  const summarized = summarize(plan, [{ kind: "executed", result: fresh }, { kind: "carried" }], {
    runIdOf: () => "run-1",
    interrupted: false,
  });
  // What withCarriedResults() reads back from the origin Run: the same failure, Attempt `c`.
  const reused = { ...fresh, attemptId: "c", ordinal: 1 };
  const rows = summarized.rows.map((row) =>
    row.state === "carried" ? { ...row, result: reused } : row
  );
  return { plan, summary: { ...summarized, rows } };
}

Deno.test("issue 18.10: FAILURES groups a reused failure with the fresh ones of its shape, marked (reused from @…)", () => {
  const { plan, summary } = freshAndReused();
  assert.deepEqual(failuresOf(summary, plan), [
    "FAILURES  2 failed · 0 errored",
    "  turn succeeded · expected completed · received failed  (2×)",
    "    reason: deterministic failure",
    `    ✗ ${locatorOf("f")}  x  a#0`,
    `    ✗ ${locatorOf("c")}  x  a#1  (reused from ${locatorOf("c")})`,
  ]);
});

Deno.test("issue 18.10: JUnit gives a reused failure the failure message and body of a fresh one (JUNIT-3)", () => {
  const { plan, summary } = freshAndReused();
  const xml = junitXml(summary, plan, [{
    experimentIndex: 0,
    runId: "run-1",
    agent: "det",
    model: null,
    startedAt: 0,
    endedAt: 1000,
  }], { startedAt: 0, endedAt: 1000 });
  const failure = (locator: string) =>
    `<failure type="assertion" message="turn succeeded · expected completed · received failed">` +
    `turn succeeded · expected completed · received failed · deterministic failure\n` +
    `locator: ${locator}\ndetails: niceeval show ${locator}</failure>`;
  assert.ok(xml.includes(failure(locatorOf("f"))), xml);
  assert.ok(
    xml.includes(
      `${failure(locatorOf("c"))}\n      <system-out>carried from ${
        locatorOf("c")
      } (run r0)</system-out>`,
    ),
    xml,
  );
});

function view(message: string): AttemptView {
  return {
    locator: "@1T",
    verdict: "errored",
    experimentId: "x",
    agent: "det",
    model: null,
    evalId: "a",
    ordinal: 0,
    runId: "r",
    startedAt: "2026-11-29T10:00:00.000Z",
    durationMs: 5,
    usage: null,
    estimatedCostUSD: null,
    error: { code: "test-threw", phase: "test", message, location: "evals/a.eval.ts:3:9" },
    assertions: [],
    turns: [],
  };
}

Deno.test("issue 18.11: show @locator indents each further line of a multi-line error message under the first", () => {
  const message = "upstream unavailable\nHTTP 503 from http://127.0.0.1:9/v1\n\n  retry later";
  assert.deepEqual(attemptViewLines(view(message)).slice(5, 11), [
    "  error       test-threw (test): upstream unavailable",
    "              HTTP 503 from http://127.0.0.1:9/v1",
    "",
    "                retry later",
    "  location    evals/a.eval.ts:3:9",
    "Assertions",
  ]);
});
