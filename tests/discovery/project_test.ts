import assert from "node:assert/strict";
import { UsageError } from "../../src/_shared/errors.ts";
import { discoverProject } from "../../src/discovery/mod.ts";
import { loadNative } from "../../src/loader/mod.ts";
import { fixture } from "./_fixtures.ts";

async function failure(name: string): Promise<UsageError> {
  try {
    await discoverProject(fixture(name), { load: loadNative });
  } catch (error) {
    assert.ok(error instanceof UsageError, String(error));
    return error;
  }
  assert.fail("expected a UsageError");
}

Deno.test("discoverProject() returns evals, groups, experiments and warnings", async () => {
  const project = await discoverProject(fixture("discovery_project"), { load: loadNative });
  assert.equal(project.evals.length, 10);
  assert.deepEqual(project.groups.map((g) => g.id), ["group"]);
  assert.deepEqual(project.experiments.map((e) => e.id), [
    "base",
    "models/openai/gpt-5.4-mini",
    "models/openai/gpt-5.4",
  ]);
  assert.deepEqual(project.warnings.map((w) => w.file), [
    "evals/data/empty.eval.ts",
    "evals/data/empty_record.eval.ts",
  ]);
});

Deno.test("discoverProject() skips experiments when asked to", async () => {
  const project = await discoverProject(fixture("broken_discovery_project"), {
    load: loadNative,
    experiments: false,
  }).catch((error: UsageError) => error);
  assert.ok(project instanceof UsageError);
  assert.ok(![project.message, ...project.extraLines].some((l) => l.startsWith("experiments/")));
});

Deno.test("discoverProject() reports every bad file together, sorted by file (rule 1.6)", async () => {
  const e = await failure("broken_discovery_project");
  const lines = [`${e.message} [${e.code}]`, ...e.extraLines];
  const files = lines.map((line) => line.slice(0, line.indexOf(": ")));
  assert.deepEqual(files, [
    "evals/a.eval.ts",
    "evals/a/b.eval.ts",
    "evals/bad_def.eval.ts",
    "evals/bad_key.eval.ts",
    "evals/folder/eval.ts",
    "evals/lookalike.eval.ts",
    "evals/mixed_array.eval.ts",
    "evals/no_default.eval.ts",
    "evals/other_version.eval.ts",
    "evals/syntax.eval.ts",
    "evals/throws.eval.ts",
    "evals/tsx.eval.tsx",
    "evals/unresolved.eval.ts",
    "evals/wrong_kind.eval.ts",
    "experiments/bad_option.ts",
    "experiments/dup.experiment.ts",
    "experiments/dup.ts",
    "experiments/list.ts",
    "experiments/not_experiment.ts",
  ]);
  assert.deepEqual(lines.map((line) => /\[([a-z.-]+)\]$/.exec(line)?.[1]), [
    "discovery.duplicate-id",
    "discovery.duplicate-id",
    "discovery.invalid-definition",
    "discovery.invalid-dataset-key",
    "discovery.unsupported-entry",
    "discovery.invalid-export",
    "discovery.invalid-export",
    "discovery.invalid-export",
    "discovery.invalid-export",
    "discovery.import-failed",
    "discovery.import-failed",
    "discovery.unsupported-entry",
    "discovery.import-failed",
    "discovery.invalid-export",
    "discovery.invalid-definition",
    "discovery.duplicate-id",
    "discovery.duplicate-id",
    "experiment-id-reserved",
    "discovery.invalid-export",
  ]);
  assert.equal(
    lines[14],
    "experiments/bad_option.ts: maxConcurrency must be a positive integer, got 0 [discovery.invalid-definition]",
  );
  assert.ok(lines.every((line) => !line.includes("\n")));
  assert.equal(e.hint, "fix the files listed above, then run the command again");
});

Deno.test("issue 20: discoverProject() loads every file it imports through one loadAll, in discovery order", async () => {
  const root = fixture("discovery_project");
  const calls: string[][] = [];
  let single = 0;
  const load = Object.assign((path: string) => {
    single++;
    return loadNative(path);
  }, {
    loadAll: (paths: readonly string[]) => {
      calls.push([...paths]);
      return loadNative.loadAll!(paths);
    },
  });
  const project = await discoverProject(root, { load });
  assert.equal(single, 0);
  assert.equal(calls.length, 1);
  // Entries, then groups, then experiment candidates: the order file-by-file discovery imports
  // them in; helpers without a default export are imported too, type declarations are not.
  assert.deepEqual(calls[0]!.map((path) => path.slice(root.length + 1)), [
    "evals/10-a.eval.ts",
    "evals/2-b.eval.ts",
    "evals/data/empty.eval.ts",
    "evals/data/empty_record.eval.ts",
    "evals/data/keyed.eval.ts",
    "evals/data/rows.eval.ts",
    "evals/group/a.eval.ts",
    "evals/group/b.eval.ts",
    "evals/group/eval-group.ts",
    "experiments/base.ts",
    "experiments/helpers.ts",
    "experiments/models/openai/gpt-5.4-mini.ts",
    "experiments/models/openai/gpt-5.4.experiment.ts",
  ]);
  assert.equal(project.evals.length, 10);
});

Deno.test("issue 20: discoverProject() reports the one file whose loadAll outcome failed", async () => {
  const root = fixture("discovery_project");
  const failing = Object.assign((path: string) => loadNative(path), {
    loadAll: async (paths: readonly string[]) => {
      const outcomes = await loadNative.loadAll!(paths);
      return outcomes.map((outcome, i) =>
        paths[i]!.endsWith("experiments/base.ts")
          ? { ok: false as const, error: new Error("base failed alone") }
          : outcome
      );
    },
  });
  const error = await discoverProject(root, { load: failing }).catch((e: UsageError) => e);
  assert.ok(error instanceof UsageError, String(error));
  assert.deepEqual([error.message, ...error.extraLines], [
    "experiments/base.ts: cannot load: base failed alone",
  ]);
});
