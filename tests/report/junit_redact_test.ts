import assert from "node:assert/strict";
import { Redactor, type SlotOutcome } from "../../src/_shared/mod.ts";
import { junitXml, summarize } from "../../src/report/mod.ts";
import { sketchPlan } from "../_fakes/plans.ts";
import { result } from "../_fakes/results.ts";

const T0 = Date.UTC(2026, 10, 29, 10, 5, 1, 102);
const SECRET = `pw"SECRET<&>value`;

Deno.test("junitXml() redacts every value before escaping and cutting it (JUNIT-5, CLI-8)", () => {
  const plan = sketchPlan([{ id: "x", evals: [["a", "pass"]], attempts: 2 }]);
  // Unredacted, the message attribute would be cut at 500 characters inside the first secret.
  const message = `${"m".repeat(470)} ${SECRET} and again ${SECRET}`;
  const outcomes: SlotOutcome[] = plan.slots.map((s): SlotOutcome => {
    const errored = result({ attemptId: "e", verdict: "errored" });
    return s.ordinal === 0
      ? { kind: "executed", result: { ...errored, error: { ...errored.error!, message } } }
      : {
        kind: "executed",
        result: result({ attemptId: "k", verdict: "skipped", skipReason: `skip ${SECRET}` }),
      };
  });
  const summary = summarize(plan, outcomes, { runIdOf: () => "r", interrupted: false });
  const run = { experimentIndex: 0, runId: "r", agent: "det", model: null };
  const xml = junitXml(summary, plan, [{ ...run, startedAt: T0, endedAt: T0 + 1 }], {
    startedAt: T0,
    endedAt: T0 + 1,
    redactor: new Redactor([SECRET]),
  });
  assert.ok(!xml.includes("SECRET"), xml);
  assert.match(xml, /<skipped message="skip \*\*\*"\/>/);
  assert.match(xml, /message="test-threw: m+ \*\*\* and again \*\*\*">/);
  assert.match(xml, /m \*\*\* and again \*\*\*\nlocator: /);
});
