/**
 * Where user code threw, in every report: the permanent line and FAILURES (` at <file:line:col>`),
 * NDJSON (`attempt_end.errorLocation`, `error.location` and `error.stack`), JUnit `<error>` and
 * `show @locator`. Errors without a location render as before.
 */
import assert from "node:assert/strict";
import type { AttemptError, SlotOutcome } from "../../src/_shared/mod.ts";
import { locatorOf } from "../../src/record/mod.ts";
import {
  attemptLines,
  attemptViewLines,
  endLines,
  junitXml,
  NdjsonReporter,
  summarize,
} from "../../src/report/mod.ts";
import type { AttemptView } from "../../src/report/mod.ts";
import { sketchPlan } from "../_fakes/plans.ts";
import { result } from "../_fakes/results.ts";

const T0 = Date.UTC(2026, 10, 29, 10, 0, 0);
const THREW: AttemptError = {
  code: "test-threw",
  phase: "test",
  message: "Cannot read properties of undefined (reading 'bar')",
  scope: "attempt",
  location: "evals/throws.eval.ts:4:9",
  stack: "at helper (evals/throws.eval.ts:4:9)\nat Object.test (evals/throws.eval.ts:9:5)",
};
const threw = result({
  attemptId: "t",
  experimentId: "x",
  evalId: "a",
  verdict: "errored",
  error: THREW,
});

Deno.test("attemptLines() ends an errored Attempt's second line with where user code threw", () => {
  assert.deepEqual(attemptLines(threw, "@1T"), [
    "✗ a  x#0  errored  @1T",
    "    test-threw: Cannot read properties of undefined (reading 'bar') at evals/throws.eval.ts:4:9",
  ]);
});

Deno.test("endLines() FAILURES ends an errored Attempt's error line with where user code threw", () => {
  const plan = sketchPlan([{ id: "x", evals: [["a", "pass"]] }]);
  const summary = summarize(plan, [{ kind: "executed", result: threw }], {
    runIdOf: () => "run-1",
    interrupted: false,
  });
  const lines = endLines(summary, { plan, wallMs: 1000, runIds: ["run-1"], positionals: [] });
  const at = lines.indexOf(`    ✗ ${locatorOf("t")}  x  a#0`);
  assert.deepEqual(lines.slice(at - 1, at + 2), [
    "  error test-threw: Cannot read properties of undefined (reading 'bar') at evals/throws.eval.ts:4:9  (1×)",
    `    ✗ ${locatorOf("t")}  x  a#0`,
    `    details: niceeval show ${locatorOf("t")}`,
  ]);
});

Deno.test("NdjsonReporter adds errorLocation to attempt_end and location and stack to the error line", () => {
  const lines: Record<string, unknown>[] = [];
  const reporter = new NdjsonReporter((text) => {
    for (const line of text.trimEnd().split("\n")) lines.push(JSON.parse(line));
  }, { now: () => T0, runIdOf: () => "run-1" });
  const slot = { position: 0, experimentId: "x", evalId: "a", ordinal: 0 };
  reporter.event({ type: "attempt_end", at: T0, slot, result: threw });
  const untraced = { ...THREW, location: null, stack: null };
  reporter.event({ type: "attempt_end", at: T0, slot, result: { ...threw, error: untraced } });
  reporter.event({ type: "slot_errored", at: T0, slot, code: "c", phase: "p", message: "m" });
  assert.deepEqual(lines.map((l) => [l.type, l.errorLocation, l.location, l.stack]), [
    ["attempt_end", "evals/throws.eval.ts:4:9", undefined, undefined],
    ["error", undefined, "evals/throws.eval.ts:4:9", THREW.stack],
    ["attempt_end", null, undefined, undefined],
    ["error", undefined, null, null],
    ["error", undefined, null, null],
  ]);
  const keys = Object.keys(lines[0]!);
  assert.equal(keys[keys.indexOf("errorCode") + 1], "errorLocation");
});

Deno.test("junitXml() puts the location and the trimmed stack in the <error> body", () => {
  const plan = sketchPlan([{ id: "x", evals: [["a", "pass"]] }]);
  const outcomes: SlotOutcome[] = [{ kind: "executed", result: threw }];
  const summary = summarize(plan, outcomes, { runIdOf: () => "r", interrupted: false });
  const xml = junitXml(summary, plan, [{
    experimentIndex: 0,
    runId: "r",
    agent: "det",
    model: null,
    startedAt: T0,
    endedAt: T0 + 1,
  }], { startedAt: T0, endedAt: T0 + 1 });
  const body = [
    "phase: test",
    "Cannot read properties of undefined (reading 'bar')",
    "location: evals/throws.eval.ts:4:9",
    "    at helper (evals/throws.eval.ts:4:9)",
    "    at Object.test (evals/throws.eval.ts:9:5)",
    `locator: ${locatorOf("t")}`,
  ].join("\n");
  assert.ok(xml.includes(`>${body}</error>`), xml);
});

function view(error: AttemptView["error"]): AttemptView {
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
    error,
    assertions: [],
    turns: [],
  };
}

Deno.test("attemptViewLines() prints the location and the trimmed stack under the error", () => {
  assert.deepEqual(attemptViewLines(view(THREW)).slice(5, 9), [
    "  error       test-threw (test): Cannot read properties of undefined (reading 'bar')",
    "  location    evals/throws.eval.ts:4:9",
    "  stack       at helper (evals/throws.eval.ts:4:9)",
    "              at Object.test (evals/throws.eval.ts:9:5)",
  ]);
});

Deno.test("attemptViewLines() prints only the error line for a Record written without location", () => {
  const old = { code: "test-threw", phase: "test", message: "boom", scope: "attempt" };
  assert.deepEqual(attemptViewLines(view(old)).slice(5, 7), [
    "  error       test-threw (test): boom",
    "Assertions",
  ]);
});
