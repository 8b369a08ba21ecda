/**
 * Scenario S163 of scenarios.md on docker ([D], MSB-2): two `niceeval exp` processes on different
 * roots share one machine budget for docker; while both run, the containers the two processes own,
 * counted by label at every step, never exceed the budget. Each Attempt holds its container until
 * the test releases it, so the count is taken while the budget is contended, not after.
 */
import assert from "node:assert/strict";
import { dockerAvailability } from "../_helpers/docker.ts";
import { DOCKER_LABELS } from "../../src/sandbox/providers/docker/client.ts";
import { stopContainer } from "../../src/sandbox/providers/docker/stop.ts";
import { type DockerProject, dockerProject, runIdsOf, verdictsOf } from "../sandbox/_docker.ts";

const docker = await dockerAvailability();
/** Liveness bound of the whole scenario; a hang fails the test instead of blocking the suite. */
const SCENARIO_DEADLINE_MS = 180_000;
const POLL_MS = 50;

/** Containers (any state) stamped with one of `pids`. */
async function ownedBy(p: DockerProject, pids: readonly number[]): Promise<string[]> {
  const ids: string[] = [];
  for (const pid of pids) {
    const found = await p.docker.listContainers({
      all: true,
      filters: { label: [`${DOCKER_LABELS.pid}=${pid}`, `${DOCKER_LABELS.managed}=true`] },
    });
    ids.push(...found.map((c) => c.Id));
  }
  return ids;
}

async function twoProcessesUnderBudget(budget: number): Promise<void> {
  await using a = await dockerProject();
  await using b = await dockerProject();
  // One state directory for both: the machine slots are per user and host (rule 54).
  const shared = {
    NICEEVAL_STATE_DIR: a.project.stateDir,
    DOCKER_PROJECT_MAX_SANDBOXES: `${budget}`,
  };
  const beds = [{ name: "a", bed: a }, { name: "b", bed: b }];
  const children = beds.map(({ name, bed }) =>
    bed.project.spawn(["exp", "hold", "--json"], {
      env: bed.env({ ...shared, DOCKER_PROJECT_NAME: name }),
    })
  );
  const outputs = children.map((child) => child.output());
  const pids = children.map((child) => child.pid);
  try {
    const released = new Set<string>();
    let most = 0;
    const deadline = Date.now() + SCENARIO_DEADLINE_MS;
    while (released.size < 4) {
      assert.ok(Date.now() < deadline, `scenario deadline passed; released ${[...released]}`);
      const count = (await ownedBy(a, pids)).length;
      most = Math.max(most, count);
      assert.ok(count <= budget, `${count} containers exist under a budget of ${budget}`);
      const started = [...await a.report("started"), ...await b.report("started")];
      const next = started.find((who) => !released.has(who));
      if (next === undefined) {
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        continue;
      }
      released.add(next);
      const bed = next.startsWith("a-") ? a : b;
      await Deno.writeTextFile(`${bed.reportDir}/release-${next}`, "");
    }
    const results = await Promise.all(outputs);
    const decoded = results.map((r) => new TextDecoder().decode(r.stdout));
    decoded.forEach((stdout, i) => beds[i]!.bed.track(runIdsOf(stdout)));
    assert.deepEqual(results.map((r) => r.code), [0, 0], decoded.join("\n"));
    for (const stdout of decoded) {
      assert.deepEqual(verdictsOf(stdout), ["hold/a passed", "hold/b passed"]);
    }
    assert.equal(most, budget, "the budget was reached while both processes ran");
    assert.deepEqual(await ownedBy(a, pids), []);
  } finally {
    for (const child of children) {
      try {
        child.kill("SIGKILL");
      } catch {
        // already exited
      }
    }
    await Promise.allSettled(outputs);
    for (const id of await ownedBy(a, pids)) await stopContainer(a.docker, id);
  }
}

Deno.test({
  name:
    "S163 niceeval exp: two processes with maxSandboxes docker 1 never own more than one container at once exits 0",
  ignore: !docker.ok,
  fn: () => twoProcessesUnderBudget(1),
});

Deno.test({
  name:
    "S163 niceeval exp: two processes with maxSandboxes docker 2 never own more than two containers at once exits 0",
  ignore: !docker.ok,
  fn: () => twoProcessesUnderBudget(2),
});
