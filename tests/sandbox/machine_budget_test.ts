/** Machine sandbox budgets below the global cap, from an injected CPU count (MSB-1, MSB-7). */
import assert from "node:assert/strict";
import { type BudgetedSlot, machineBudgetsBelow } from "../../src/sandbox/mod.ts";

const run = (provider?: string): BudgetedSlot => ({
  carry: { action: "run" },
  ...(provider !== undefined ? { sandbox: { provider } } : {}),
});
const carried = (provider: string): BudgetedSlot => ({
  carry: { action: "carry" },
  sandbox: { provider },
});

Deno.test("machineBudgetsBelow() gives docker twice the injected CPU count when it is below the cap", () => {
  const slots = [run("docker"), run("docker"), run()];
  assert.deepEqual(machineBudgetsBelow(slots, { maxSandboxes: {}, cpus: 3, cap: 8 }), [
    { provider: "docker", limit: 6 },
  ]);
  assert.deepEqual(machineBudgetsBelow(slots, { maxSandboxes: {}, cpus: 4, cap: 8 }), []);
});

Deno.test("machineBudgetsBelow() lists configured budgets below the cap in order of first use", () => {
  const slots = [run("fake"), run("docker"), run("local"), run("fake")];
  assert.deepEqual(
    machineBudgetsBelow(slots, { maxSandboxes: { docker: 2, fake: 1 }, cpus: 16, cap: 4 }),
    [{ provider: "fake", limit: 1 }, { provider: "docker", limit: 2 }],
  );
});

Deno.test("machineBudgetsBelow() ignores carried slots and providers without a budget", () => {
  const slots = [carried("docker"), run("local"), run()];
  assert.deepEqual(machineBudgetsBelow(slots, { maxSandboxes: {}, cpus: 1, cap: 10 }), []);
});
