import assert from "node:assert/strict";
import { DefinitionError, UsageError } from "../../src/_shared/errors.ts";
import {
  compareCodeUnits,
  type DiscoveryIssue,
  importIssue,
  sortIssues,
  throwOnErrors,
} from "../../src/discovery/issues.ts";
import { walked } from "./_fixtures.ts";

function issue(
  file: string,
  code = "discovery.import-failed",
  extra: Partial<DiscoveryIssue> = {},
) {
  return { file, code, level: "error" as const, message: `${code} in ${file}`, ...extra };
}

function thrown(issues: DiscoveryIssue[]): UsageError {
  try {
    throwOnErrors(issues);
  } catch (error) {
    assert.ok(error instanceof UsageError);
    return error;
  }
  assert.fail("expected a UsageError");
}

Deno.test("compareCodeUnits() compares UTF-16 code units, not locale order (rule 1.3.3)", () => {
  const sorted = ["b", "a", "B", "10", "2", "é", "_x"].sort(compareCodeUnits);
  assert.deepEqual(sorted, ["10", "2", "B", "_x", "a", "b", "é"]);
});

Deno.test("sortIssues() sorts by file and keeps the order within one file (rule 1.6)", () => {
  const issues = [
    issue("experiments/x.ts", "one"),
    issue("evals/b.eval.ts", "two"),
    issue("evals/a.eval.ts", "three"),
    issue("evals/b.eval.ts", "four"),
  ];
  assert.deepEqual(sortIssues(issues).map((i) => i.code), ["three", "two", "four", "one"]);
});

Deno.test("throwOnErrors() does nothing when only warnings remain", () => {
  throwOnErrors([issue("evals/a.eval.ts", "discovery.empty-dataset", { level: "warning" })]);
  throwOnErrors([]);
});

Deno.test("throwOnErrors() lists every error sorted by file with one hint (ERR-5)", () => {
  const e = thrown([
    issue("evals/z.eval.ts", "discovery.duplicate-id", { hint: "rename" }),
    issue("evals/a.eval.ts", "discovery.empty-dataset", { level: "warning" }),
    issue("evals/m.eval.ts", "discovery.import-failed", { hint: "fix it" }),
  ]);
  assert.equal(e.code, "discovery.import-failed");
  assert.equal(e.message, "evals/m.eval.ts: discovery.import-failed in evals/m.eval.ts");
  assert.deepEqual(e.extraLines, [
    "evals/z.eval.ts: discovery.duplicate-id in evals/z.eval.ts [discovery.duplicate-id]",
  ]);
  assert.equal(e.hint, "fix the files listed above, then run the command again");
});

Deno.test("throwOnErrors() keeps an issue's own hint when all errors share it", () => {
  const one = thrown([issue("evals/a.eval.ts", "x", { hint: "do this" })]);
  assert.equal(one.hint, "do this");
  assert.deepEqual(one.extraLines, []);
  const same = thrown([
    issue("evals/a.eval.ts", "x", { hint: "do this" }),
    issue("evals/b.eval.ts", "x", { hint: "do this" }),
  ]);
  assert.equal(same.hint, "do this");
});

Deno.test("importIssue() maps a DefinitionError to invalid-definition and others to import-failed", () => {
  const file = walked("evals/a.eval.ts");
  const definition = importIssue(
    file,
    new DefinitionError(
      "definition.invalid-value",
      "timeoutMs",
      "timeoutMs must be a positive integer, got 0",
    ),
  );
  assert.deepEqual(
    [definition.code, definition.message],
    ["discovery.invalid-definition", "timeoutMs must be a positive integer, got 0"],
  );
  // A DefinitionError of another API copy is recognised by its name (no instanceof).
  const foreign = Object.assign(new Error("bad\nsecond"), { name: "DefinitionError" });
  assert.equal(importIssue(file, foreign).code, "discovery.invalid-definition");
  assert.equal(importIssue(file, foreign).message, "bad");
  const failed = importIssue(file, "plain");
  assert.deepEqual([failed.code, failed.message], [
    "discovery.import-failed",
    "cannot load: plain",
  ]);
  assert.equal(failed.file, "evals/a.eval.ts");
});
