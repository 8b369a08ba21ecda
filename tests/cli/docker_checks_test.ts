/**
 * The docker checks at the start of a run (sandboxes.md rules 97 and 118) with the daemon queries
 * replaced: when they run, what they are asked, and the `!` lines they print on stderr.
 */
import assert from "node:assert/strict";
import { runDockerChecks } from "../../src/cli/docker_checks.ts";
import { createProcessProbe } from "../../src/coordination/mod.ts";
import type { Plan } from "../../src/plan/mod.ts";
import { createFakeIo } from "../_fakes/io.ts";

function planOf(...networks: (string | null)[]): Plan {
  const slots = networks.map((network) => ({
    sandbox: network === null
      ? { provider: "local", physical: {} }
      : { provider: "docker", physical: { network } },
  }));
  return { slots } as unknown as Plan;
}

function recorder(o: { notice?: string; lowMessage?: string; permits?: number } = {}) {
  const calls: string[] = [];
  const asked: unknown[] = [];
  return {
    calls,
    asked,
    ports: {
      orphanNotice: () => {
        calls.push("orphans");
        return Promise.resolve(o.notice);
      },
      preflight: (_env: unknown, options: unknown) => {
        calls.push("preflight");
        asked.push(options);
        return Promise.resolve({
          wanted: 3,
          usage: { configured: true, pools: [], capacity: 4, used: 3, free: 1 },
          ...(o.permits === undefined ? {} : { permits: o.permits }),
          ...(o.lowMessage
            ? {
              diagnostic: {
                code: "docker-address-pool-low",
                level: "warning" as const,
                message: o.lowMessage,
              },
            }
            : {}),
        });
      },
    },
  };
}

const common = { cap: 4, maxSandboxes: {}, hostEnv: {}, probe: createProcessProbe() };

Deno.test("runDockerChecks() queries nothing when the plan uses no docker sandbox", async () => {
  const io = createFakeIo({ cpus: 2 });
  const r = recorder({ notice: "2 orphaned docker sandboxes" });
  await runDockerChecks(io, { ...common, plan: planOf(null, null) }, r.ports as never);
  assert.deepEqual(r.calls, []);
  assert.equal(io.stderr.text(), "");
});

Deno.test("runDockerChecks() prints the orphan notice as one ! line, and no preflight without own networks (rule 97)", async () => {
  const io = createFakeIo({ cpus: 2 });
  const r = recorder({ notice: "2 orphaned docker sandboxes from earlier runs" });
  await runDockerChecks(io, { ...common, plan: planOf("none", null) }, r.ports as never);
  assert.deepEqual(r.calls, ["orphans"]);
  assert.equal(io.stderr.text(), "! 2 orphaned docker sandboxes from earlier runs\n");
  assert.equal(io.stdout.text(), "");
});

Deno.test("runDockerChecks() runs the address-pool preflight for own networks and prints its warning (rule 118)", async () => {
  const io = createFakeIo({ cpus: 3 });
  const r = recorder({ lowMessage: "docker address pools are low" });
  await runDockerChecks(io, {
    ...common,
    plan: planOf("own", "own", "none"),
    maxSandboxes: {},
  }, r.ports as never);
  assert.deepEqual(r.calls, ["orphans", "preflight"]);
  const asked = r.asked[0] as { concurrency: number; ownSandboxes: number; maxSandboxes: number };
  assert.deepEqual([asked.concurrency, asked.ownSandboxes, asked.maxSandboxes], [4, 2, 6]);
  assert.equal(io.stderr.text(), "! docker address pools are low\n");
});

Deno.test("runDockerChecks() hands the own-network gate size to the provider only when the pools are low (rule 118)", async () => {
  const plan = planOf("own", "own", "own");
  const low = recorder({ lowMessage: "docker address pools are low", permits: 1 });
  assert.deepEqual(
    await runDockerChecks(createFakeIo({ cpus: 2 }), { ...common, plan }, low.ports as never),
    { networkPermits: 1 },
  );
  const fine = recorder();
  assert.deepEqual(
    await runDockerChecks(createFakeIo({ cpus: 2 }), { ...common, plan }, fine.ports as never),
    {},
  );
  const io = createFakeIo({ cpus: 2 });
  const down = {
    ...fine.ports,
    preflight: () => Promise.reject(new Error("connect ENOENT")),
  };
  assert.deepEqual(await runDockerChecks(io, { ...common, plan }, down as never), {});
  assert.equal(io.stderr.text(), "! cannot check the docker address pools: connect ENOENT\n");
});
