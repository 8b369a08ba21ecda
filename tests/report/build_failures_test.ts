/**
 * Build failures in reports (sandboxes.md rules 66–71, cli.md OUT-H9, OUT-H14, CMD-13): one entry
 * per (Run, build key) with the remediation text the diagnostic carries since its emission and the
 * affected `evalId#attempt`, instead of one per Attempt.
 */
import assert from "node:assert/strict";
import type { RunEvent, SlotOutcome } from "../../src/_shared/mod.ts";
import type { PlannedSandbox } from "../../src/plan/mod.ts";
import { locatorOf } from "../../src/record/mod.ts";
import { endLines, PermanentLines, runLines, summarize } from "../../src/report/mod.ts";
import {
  buildFailureDetail,
  buildFailureFacts,
} from "../../src/sandbox/providers/docker/build_failure.ts";
import { sketchPlan } from "../_fakes/plans.ts";
import { result } from "../_fakes/results.ts";

const K1 = "1a".repeat(32);
const K2 = "2b".repeat(32);
const LOCKFILE = "Run `pnpm install` locally and commit the updated lockfile.";
const LOG = ' ERR_PNPM_OUTDATED_LOCKFILE  Cannot install with "frozen-lockfile"\n  at step 4';

/** Two experiments (two Runs); evals a and b need K1, c needs K2, d needs nothing. */
function buildPlan() {
  const plan = sketchPlan([
    { id: "x", evals: [["a", "pass"], ["b", "pass"], ["c", "pass"], ["d", "pass"]], attempts: 2 },
    { id: "y", evals: [["a", "pass"]] },
  ]);
  const keys: Record<string, string[]> = { a: [K1], b: [K1], c: [K2], d: [] };
  return {
    ...plan,
    slots: plan.slots.map((s) => ({
      ...s,
      sandbox: { buildKeys: keys[s.evalId]! } as unknown as PlannedSandbox,
    })),
  };
}

/** The diagnostic the scheduler emits for one slot of a failed key, detail made by the provider. */
function buildDiagnostic(experimentId: string, evalId: string, attempt: number, key: string) {
  const error = key === K1 ? "exit code 1" : "context gone";
  const facts = buildFailureFacts({ message: error, logTail: key === K1 ? LOG : "" });
  const detail = buildFailureDetail(facts, { buildKey: key, evalId, attempt });
  return {
    type: "diagnostic",
    at: 0,
    level: "error",
    code: "sandbox-build-failed",
    message: `Cannot build sandbox artifact "${key.slice(0, 16)}": ${error}`,
    experimentId,
    evalId,
    data: { ...detail },
    persist: true,
  } as const satisfies RunEvent;
}

/** Every diagnostic of the run, in an order the slots may close in (reports sort the ids). */
function diagnostics() {
  return [
    buildDiagnostic("x", "b", 0, K1),
    buildDiagnostic("x", "a", 1, K1),
    buildDiagnostic("y", "a", 0, K1),
    buildDiagnostic("x", "a", 0, K1),
    buildDiagnostic("x", "b", 1, K1),
    buildDiagnostic("x", "c", 1, K2),
    buildDiagnostic("x", "c", 0, K2),
  ];
}

Deno.test("rule 71: a failed build key is one permanent line per Run with its count and fix (OUT-H9)", () => {
  const lines: string[] = [];
  const permanent = new PermanentLines(buildPlan(), (line) => lines.push(line));
  for (const d of diagnostics()) permanent.event(d);
  assert.deepEqual(lines, [
    `✗ sandbox-build-failed · x: Cannot build sandbox artifact "${
      K1.slice(0, 16)
    }": exit code 1 (4 attempts errored)`,
    `    fix: ${LOCKFILE}`,
    `✗ sandbox-build-failed · y: Cannot build sandbox artifact "${
      K1.slice(0, 16)
    }": exit code 1 (1 attempt errored)`,
    `    fix: ${LOCKFILE}`,
    `✗ sandbox-build-failed · x: Cannot build sandbox artifact "${
      K2.slice(0, 16)
    }": context gone (2 attempts errored)`,
  ]);
});

Deno.test("rule 71: FAILURES lists one entry per (Run, build key) with the fix and every affected Attempt (OUT-H14)", () => {
  const plan = buildPlan();
  const permanent = new PermanentLines(plan, () => {});
  const events = diagnostics();
  for (const d of events) permanent.event(d);
  const broken = result({ attemptId: "d1", verdict: "errored", evalId: "d", experimentId: "x" });
  const outcomes: SlotOutcome[] = plan.slots.map((s) =>
    s.evalId === "d"
      ? { kind: "executed", result: s.ordinal === 0 ? broken : result({ attemptId: "d2" }) }
      : {
        kind: "errored-undispatched",
        code: "sandbox-build-failed",
        message: events.find((e) =>
          e.experimentId === s.experimentId && e.evalId === s.evalId && e.data.attempt === s.ordinal
        )!.message,
      }
  );
  const summary = summarize(plan, outcomes, { runIdOf: (i) => `run-${i}`, interrupted: false });
  const lines = endLines(summary, {
    plan,
    wallMs: 1000,
    runIds: ["run-0", "run-1"],
    positionals: [],
    buildFailures: permanent.buildFailures,
  });
  const from = lines.findIndex((l) => l.startsWith("FAILURES"));
  const to = lines.indexOf("NEXT");
  const k1 = K1.slice(0, 16);
  const k2 = K2.slice(0, 16);
  assert.deepEqual(lines.slice(from, to), [
    "FAILURES  0 failed · 8 errored",
    `  ✗ x  build ${k1} · 4 attempts`,
    `    error sandbox-build-failed: Cannot build sandbox artifact "${k1}": exit code 1`,
    `    log: ERR_PNPM_OUTDATED_LOCKFILE  Cannot install with "frozen-lockfile"`,
    `    fix: ${LOCKFILE}`,
    "    affected: a#0, a#1, b#0, b#1",
    `  ✗ y  build ${k1} · 1 attempt`,
    `    error sandbox-build-failed: Cannot build sandbox artifact "${k1}": exit code 1`,
    `    log: ERR_PNPM_OUTDATED_LOCKFILE  Cannot install with "frozen-lockfile"`,
    `    fix: ${LOCKFILE}`,
    "    affected: a#0",
    `  ✗ x  build ${k2} · 2 attempts`,
    `    error sandbox-build-failed: Cannot build sandbox artifact "${k2}": context gone`,
    "    affected: c#0, c#1",
    `  error ${broken.error!.code}: ${broken.error!.message}  (1×)`,
    `    ✗ ${locatorOf("d1")}  x  d#0`,
    `    details: niceeval show ${locatorOf("d1")}`,
  ]);
});

Deno.test("rules 70–71: show --run lists the Run's build failures once per build key, from the Record alone (CMD-13)", () => {
  // As the Run's `diagnostic` records keep them: no event envelope, only code, level, message,
  // evalId and data.
  const stored = diagnostics().filter((d) => d.experimentId === "x").map((d) => ({
    code: d.code,
    level: d.level,
    message: d.message,
    evalId: d.evalId,
    data: JSON.parse(JSON.stringify(d.data)),
  }));
  const run = { runId: "r-1", experimentId: "x", startedAt: "2026-12-02T10:00:00.000Z" };
  const lines = runLines({ ...run, diagnostics: stored }, []);
  const k1 = K1.slice(0, 16);
  assert.deepEqual(lines.slice(lines.indexOf("Build failures")), [
    "Build failures",
    `  ✗ build ${k1} · 4 attempts`,
    `    error sandbox-build-failed: Cannot build sandbox artifact "${k1}": exit code 1`,
    `    log: ERR_PNPM_OUTDATED_LOCKFILE  Cannot install with "frozen-lockfile"`,
    `    fix: ${LOCKFILE}`,
    "    affected: a#0, a#1, b#0, b#1",
    `  ✗ build ${K2.slice(0, 16)} · 2 attempts`,
    `    error sandbox-build-failed: Cannot build sandbox artifact "${
      K2.slice(0, 16)
    }": context gone`,
    "    affected: c#0, c#1",
  ]);
  // A Run without build failures has no such section.
  assert.equal(runLines(run, []).includes("Build failures"), false);
});
