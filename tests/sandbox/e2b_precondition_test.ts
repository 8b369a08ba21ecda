/**
 * issue 19: a missing E2B_API_KEY is an experiment-scoped error before any Attempt runs. Unit:
 * `failedPreconditions` checks each built-in provider of an experiment's runnable slots once.
 * End to end: the real CLI on `tests/fixtures/e2b_nokey_project` halts the e2b experiment (exit 1,
 * one line plus hint) while the local experiment runs.
 */
import assert from "node:assert/strict";
import { failedPreconditions } from "../../src/cli/plan_run.ts";
import { commandAgent } from "../../src/public/adapter.ts";
import type { Plan } from "../../src/plan/mod.ts";
import { createProviderRegistry, type ProviderLoader } from "../../src/sandbox/mod.ts";
import type { SandboxProvider } from "../../src/sandbox/types.ts";
import { createFakeClock } from "../_fakes/clock.ts";
import { ndjson, tempProject } from "../_helpers/cli.ts";

const HALT =
  '✗ experiment halted · cloud: provider "e2b" cannot run: E2B_API_KEY is not set (3 attempts not started)';
const HINT = "    hint: set E2B_API_KEY to an E2B API key in the environment or in .env";

/** A plan of experiments with the given slots; only the fields `failedPreconditions` reads. */
function planOf(
  experiments: { id: string; slots: { provider?: string; carried?: boolean }[] }[],
): Plan {
  const agent = commandAgent({ name: "echo", command: ["echo", "hi"] });
  return {
    experiments: experiments.map((e, index) => ({
      index,
      id: e.id,
      runnable: e.slots.filter((s) => !s.carried).length,
      discovered: { definition: { agent, model: null } },
    })),
    slots: experiments.flatMap((e, index) =>
      e.slots.map((s) => ({
        experimentIndex: index,
        experimentId: e.id,
        carry: s.carried ? { action: "carry" } : { action: "run" },
        ...(s.provider ? { sandbox: { provider: s.provider } } : {}),
      }))
    ),
  } as unknown as Plan;
}

function registryWith(checks: Record<string, () => { message: string; hint?: string } | null>) {
  const calls: string[] = [];
  const loaders: Record<string, ProviderLoader> = {};
  for (const [name, precondition] of Object.entries(checks)) {
    loaders[name] = () =>
      Promise.resolve({
        name,
        precondition: () => {
          calls.push(name);
          return precondition();
        },
      } as unknown as SandboxProvider);
  }
  return {
    registry: createProviderRegistry({ hostEnv: {}, clock: createFakeClock() }, loaders),
    calls,
  };
}

Deno.test("issue 19: failedPreconditions halts experiments whose runnable slots use a provider that cannot run", async () => {
  const { registry, calls } = registryWith({
    e2b: () => ({ message: "E2B_API_KEY is not set", hint: "set it" }),
    local: () => null,
    broken: () => {
      throw new Error("boom");
    },
  });
  const plan = planOf([
    { id: "cloud", slots: [{ provider: "e2b" }, { provider: "e2b" }] },
    { id: "cloud-2", slots: [{ provider: "local" }, { provider: "e2b" }] },
    { id: "carried", slots: [{ provider: "e2b", carried: true }, { provider: "local" }] },
    { id: "custom", slots: [{ provider: "my-vm" }] },
    { id: "weird", slots: [{ provider: "broken" }] },
    { id: "direct", slots: [{}] },
  ]);
  const blocked = await failedPreconditions(plan, {}, { registry });
  assert.deepEqual([...blocked], [
    ["cloud", { message: 'provider "e2b" cannot run: E2B_API_KEY is not set', hint: "set it" }],
    ["cloud-2", { message: 'provider "e2b" cannot run: E2B_API_KEY is not set', hint: "set it" }],
    ["weird", {
      message: 'provider "broken" cannot run: its precondition threw: boom',
      hint: null,
    }],
  ]);
  assert.deepEqual(calls.sort(), ["broken", "e2b", "local"], "each provider is checked once");
});

Deno.test("issue 19: with the default registry, E2B_API_KEY in the environment lets e2b experiments run", async () => {
  const plan = planOf([{ id: "cloud", slots: [{ provider: "e2b" }] }]);
  assert.deepEqual([...await failedPreconditions(plan, { E2B_API_KEY: "e2b_x" })], []);
  const blocked = await failedPreconditions(plan, {});
  assert.equal(blocked.get("cloud")?.message, 'provider "e2b" cannot run: E2B_API_KEY is not set');
});

Deno.test("issue 19: without E2B_API_KEY the CLI halts the e2b experiment before any Attempt; the local one runs; exit 1", async () => {
  await using p = await tempProject("e2b_nokey_project");
  // No key; the API address points at a closed local port, so nothing could leave the machine.
  const env = {
    CI: "1",
    E2B_API_KEY: "",
    E2B_API_URL: "http://127.0.0.1:9",
    E2B_SANDBOX_URL: "http://127.0.0.1:9",
  };
  const r = await p.run(["exp"], { env });
  assert.equal(r.code, 1, r.stdout + r.stderr);
  const out = r.stdout.split("\n");
  const halt = out.findIndex((l) => l.startsWith("✗ experiment halted"));
  assert.deepEqual(out.slice(halt, halt + 2), [HALT, HINT], r.stdout);
  const json = await p.run(["exp", "--rerun", "all", "--json"], { env });
  assert.equal(json.code, 1, json.stderr);
  const events = ndjson(json.stdout);
  const starts = events.filter((e) => e.type === "attempt_start");
  assert.deepEqual([...new Set(starts.map((e) => e.experimentId))], ["boxed"]);
  const halted = events.filter((e) => e.code === "dispatch-halted");
  assert.equal(halted.length, 1);
  assert.deepEqual(halted[0]!.data, {
    scope: "experiment",
    reason: "precondition",
    hint: "set E2B_API_KEY to an E2B API key in the environment or in .env",
    unstarted: 3,
  });
});
