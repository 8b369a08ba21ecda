/**
 * Where eval code threw, end to end (Hardening, defect 9): on `throwing_project`, whose eval does
 * `x.foo!.bar()` two frames deep, the NDJSON stream, the Attempt's record in the Run's
 * `records.log`, `show @locator`, the `--junit` file and the human lines all name
 * `evals/throws.eval.ts:4:17`; a thrown string gets no location.
 */
import assert from "node:assert/strict";
import { ndjson, tempProject } from "../_helpers/cli.ts";
import { readRunFiles } from "../_helpers/record_files.ts";

/** `return x.foo!.bar();` on line 4: V8 reports the column of the property it could not read. */
const LOCATION = "evals/throws.eval.ts:4:17";
const STACK = "at lookUp (evals/throws.eval.ts:4:17)\nat Object.test (evals/throws.eval.ts:11:5)";
const MESSAGE = "Cannot read properties of undefined (reading 'bar')";

Deno.test("niceeval exp: an eval that throws names its file:line:col in every report exits 1", async (t) => {
  await using p = await tempProject("throwing_project");
  const r = await p.run(["exp", "--json", "--junit", "report.xml"]);
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.equal(r.stderr, "");
  const events = ndjson(r.stdout);
  const of = (type: string, evalId: string) =>
    events.find((e) => e.type === type && e.evalId === evalId)!;
  const end = of("attempt_end", "throws");

  await t.step("NDJSON: attempt_end.errorLocation and the error line's location and stack", () => {
    assert.equal(end.errorCode, "test-threw");
    assert.equal(end.errorLocation, LOCATION);
    const error = of("error", "throws");
    assert.deepEqual([error.message, error.location, error.stack], [MESSAGE, LOCATION, STACK]);
    assert.equal(of("attempt_end", "plain").errorLocation, null);
    assert.deepEqual([of("error", "plain").location, of("error", "plain").stack], [null, null]);
  });

  await t.step("Record: the attempt record's error carries location and stack", async () => {
    const run = await readRunFiles(events[0]!.recordRoot as string, end.runId as string);
    const doc = run.attempts.get(end.attemptId as string)!.attempt;
    assert.deepEqual(doc.error, {
      code: "test-threw",
      phase: "test",
      message: MESSAGE,
      scope: "attempt",
      location: LOCATION,
      stack: STACK,
    });
  });

  await t.step("show @locator prints the location and the trimmed stack", async () => {
    const shown = await p.run(["show", end.locator as string]);
    assert.equal(shown.code, 0, shown.stderr);
    const lines = shown.stdout.split("\n");
    const at = lines.findIndex((l) => l.startsWith("  error "));
    assert.deepEqual(lines.slice(at, at + 4), [
      `  error       test-threw (test): ${MESSAGE}`,
      `  location    ${LOCATION}`,
      "  stack       at lookUp (evals/throws.eval.ts:4:17)",
      "              at Object.test (evals/throws.eval.ts:11:5)",
    ]);
  });

  await t.step("--junit: the <error> body names the location and the user frames", async () => {
    const xml = await p.read("report.xml");
    const body = [
      "phase: test",
      MESSAGE,
      `location: ${LOCATION}`,
      "    at lookUp (evals/throws.eval.ts:4:17)",
      "    at Object.test (evals/throws.eval.ts:11:5)",
      `locator: ${end.locator}`,
    ].join("\n");
    assert.ok(xml.includes(`>${body}</error>`), xml);
  });

  await t.step("human output: the errored line and FAILURES end with the location", async () => {
    const human = await p.run(["exp", "--rerun", "all"]);
    assert.equal(human.code, 1, human.stdout + human.stderr);
    assert.ok(human.stdout.includes(`    test-threw: ${MESSAGE} at ${LOCATION}\n`), human.stdout);
    assert.ok(
      human.stdout.includes(`  error test-threw: ${MESSAGE} at ${LOCATION}  (1×)\n`),
      human.stdout,
    );
    assert.ok(human.stdout.includes("    test-threw: not an Error\n"), human.stdout);
  });
});
