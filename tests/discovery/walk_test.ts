import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import type { DiscoveryIssue } from "../../src/discovery/issues.ts";
import { walkFiles } from "../../src/discovery/walk.ts";

async function tree(files: readonly string[], fn: (root: string) => Promise<void>): Promise<void> {
  const root = await Deno.makeTempDir({ prefix: "niceeval-walk-" });
  try {
    for (const file of files) {
      await Deno.mkdir(dirname(join(root, file)), { recursive: true });
      await Deno.writeTextFile(join(root, file), "");
    }
    await fn(root);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

Deno.test("walkFiles() lists files in code-unit order of their relative paths (rule 1.3.3)", async () => {
  await tree(
    ["evals/2-b.eval.ts", "evals/10-a.eval.ts", "evals/a/x.ts", "evals/B.eval.ts", "evals/a.ts"],
    async (root) => {
      const issues: DiscoveryIssue[] = [];
      const files = await walkFiles(root, "evals", issues);
      assert.deepEqual(files.map((f) => f.relative), [
        "evals/10-a.eval.ts",
        "evals/2-b.eval.ts",
        "evals/B.eval.ts",
        "evals/a.ts",
        "evals/a/x.ts",
      ]);
      assert.deepEqual(files.map((f) => f.path), files.map((f) => join(root, f.relative)));
      assert.ok(files.every((f) => f.root === root));
      assert.deepEqual(issues, []);
    },
  );
});

Deno.test("walkFiles() skips node_modules, .git and .niceeval at any depth (rule 1.3.1)", async () => {
  await tree(
    [
      "evals/ok.eval.ts",
      "evals/node_modules/x.eval.ts",
      "evals/.git/y.eval.ts",
      "evals/.niceeval/z.eval.ts",
      "evals/deep/node_modules/w.eval.ts",
      "evals/.hidden/v.eval.ts",
    ],
    async (root) => {
      const files = await walkFiles(root, "evals", []);
      assert.deepEqual(files.map((f) => f.relative), [
        "evals/.hidden/v.eval.ts",
        "evals/ok.eval.ts",
      ]);
    },
  );
});

Deno.test("walkFiles() yields nothing for a missing directory (rules 1.3.1, 1.5.4)", async () => {
  await tree([], async (root) => {
    const issues: DiscoveryIssue[] = [];
    assert.deepEqual(await walkFiles(root, "experiments", issues), []);
    assert.deepEqual(issues, []);
  });
});

Deno.test("walkFiles() reports an unreadable directory as discovery.filesystem", async () => {
  await tree(["evals"], async (root) => {
    const issues: DiscoveryIssue[] = [];
    assert.deepEqual(await walkFiles(root, "evals", issues), []);
    assert.equal(issues.length, 1);
    assert.equal(issues[0]!.code, "discovery.filesystem");
    assert.equal(issues[0]!.file, "evals");
    assert.equal(issues[0]!.level, "error");
  });
});

Deno.test("walkFiles() lists symlinked files and does not follow symlinked directories", async () => {
  await tree(["shared/x.eval.ts", "evals/own.eval.ts"], async (root) => {
    await Deno.symlink(join(root, "shared/x.eval.ts"), join(root, "evals/link.eval.ts"));
    await Deno.symlink(join(root, "evals"), join(root, "evals/loop"));
    await Deno.symlink(join(root, "nowhere.eval.ts"), join(root, "evals/dangling.eval.ts"));
    const files = await walkFiles(root, "evals", []);
    assert.deepEqual(files.map((f) => f.relative), [
      "evals/dangling.eval.ts",
      "evals/link.eval.ts",
      "evals/own.eval.ts",
    ]);
  });
});
