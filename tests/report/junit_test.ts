import assert from "node:assert/strict";
import type { SlotOutcome } from "../../src/_shared/mod.ts";
import { junitXml, summarize } from "../../src/report/mod.ts";
import { sketchPlan } from "../_fakes/plans.ts";
import { result } from "../_fakes/results.ts";

const T0 = Date.UTC(2026, 10, 29, 10, 5, 1, 102);

Deno.test("junitXml() maps every result kind to its child and counts (JUNIT-1 … JUNIT-4)", () => {
  const plan = sketchPlan([{ id: "x", evals: [["a", "pass"], ["b", "score"]], attempts: 3 }]);
  const outcomes: SlotOutcome[] = plan.slots.map((s): SlotOutcome => {
    if (s.evalId === "b") {
      return s.ordinal === 0
        ? {
          kind: "executed",
          result: result({
            attemptId: "s",
            kind: "score",
            verdict: "scored",
            score: 2,
            evalId: "b",
            details: { assertions: [], turns: [], phases: [], diagnostics: [], logs: [] },
          }),
        }
        : s.ordinal === 1
        ? { kind: "not-dispatched", reason: "budget-exhausted" }
        : { kind: "not-dispatched", reason: "interrupted" };
    }
    return s.ordinal === 0
      ? { kind: "executed", result: result({ attemptId: "f", verdict: "failed" }) }
      : s.ordinal === 1
      ? { kind: "executed", result: result({ attemptId: "e", verdict: "errored" }) }
      : {
        kind: "executed",
        result: result({ attemptId: "k", verdict: "skipped", skipReason: "not applicable" }),
      };
  });
  const summary = summarize(plan, outcomes, { runIdOf: () => "r", interrupted: false });
  const xml = junitXml(summary, plan, [{
    experimentIndex: 0,
    runId: "r",
    agent: "det",
    model: null,
    startedAt: T0,
    endedAt: T0 + 214,
  }], { startedAt: T0, endedAt: T0 + 214 });
  assert.match(
    xml,
    /^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="niceeval" tests="6" failures="1" errors="2" skipped="2" time="0.214" timestamp="2026-11-29T10:05:01.102Z">/,
  );
  assert.match(
    xml,
    /<testcase name="a \[x#0\]" classname="x" time="1.000">\n {6}<failure type="assertion" message="turn succeeded · expected completed · received failed">/,
  );
  assert.match(
    xml,
    /<error type="test-threw" message="test-threw: boom">phase: test\nboom\nlocator: @1/,
  );
  assert.match(xml, /<skipped message="not applicable"\/>/);
  assert.match(xml, /<system-out>score 2<\/system-out>/);
  assert.match(xml, /<skipped message="not dispatched: budget-exhausted"\/>/);
  assert.match(xml, /<error type="interrupted" message="interrupted before completion"\/>/);
  assert.match(xml, /<property name="model" value=""\/>/);
});

Deno.test("junitXml() escapes attributes and text and replaces characters XML cannot hold (JUNIT-5)", () => {
  const plan = sketchPlan([{ id: `q"<&>'`, evals: [["a", "pass"]] }]);
  const r = result({
    attemptId: "e",
    verdict: "errored",
    error: {
      code: "x",
      phase: "test",
      message: 'bad <tag> & \u0001 "quote"\nnext',
      scope: "attempt",
      location: null,
      stack: null,
    },
  });
  const summary = summarize(plan, [{ kind: "executed", result: r }], {
    runIdOf: () => "r",
    interrupted: false,
  });
  const xml = junitXml(summary, plan, [{
    experimentIndex: 0,
    runId: "r",
    agent: "det",
    model: null,
    startedAt: T0,
    endedAt: T0,
  }], { startedAt: T0, endedAt: T0 });
  assert.match(xml, /<testsuite name="q&quot;&lt;&amp;&gt;&apos;"/);
  assert.match(xml, /message="x: bad &lt;tag&gt; &amp; \uFFFD &quot;quote&quot; next"/);
  assert.match(xml, />phase: test\nbad &lt;tag&gt; &amp; \uFFFD "quote"\nnext\n/);
});
