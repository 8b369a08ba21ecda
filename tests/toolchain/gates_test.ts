/**
 * Gate tests (toolchain.md §5.12): the README test command covers the whole quality gate, so
 * these run fmt, lint, check_layout, check and the JSR dry run on the repository.
 */
import assert from "node:assert/strict";
import { describeRun, runDeno } from "./_tree.ts";

async function gate(args: string[]): Promise<void> {
  const result = await runDeno(args);
  assert.equal(result.code, 0, `deno ${args.join(" ")} failed: ${describeRun(result)}`);
}

Deno.test("gate: deno fmt --check", async () => {
  await gate(["fmt", "--check"]);
});

Deno.test("gate: deno lint", async () => {
  await gate(["lint"]);
});

Deno.test("gate: scripts/check_layout.ts", async () => {
  await gate(["run", "-A", "--frozen", "scripts/check_layout.ts"]);
});

Deno.test("gate: deno check --frozen --doc", async () => {
  await gate(["check", "--frozen", "--doc"]);
});

Deno.test("gate: deno publish --dry-run --allow-dirty", async () => {
  await gate(["publish", "--dry-run", "--allow-dirty"]);
});
