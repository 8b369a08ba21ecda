/**
 * `niceeval exp` on `tests/fixtures/docker_project` and `examples/sandbox-docker` with a real daemon (sandboxes.md §3.1, §8.2,
 * rule 139): sandbox-agent evals run in containers of the busybox-git image as uid 1000, and no
 * container of the run is left behind.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO, tempProject } from "../_helpers/cli.ts";
import { dockerAvailability } from "../_helpers/docker.ts";
import { dockerClient } from "../../src/sandbox/providers/docker/client.ts";
import {
  containersOfRun,
  dockerProject,
  removeRun,
  runIdsOf,
  verdictsOf,
} from "../sandbox/_docker.ts";

const docker = await dockerAvailability();

Deno.test({
  name:
    "niceeval exp: sandbox-agent evals in fresh docker containers pass and leave no container exits 0",
  ignore: !docker.ok,
  fn: async () => {
    await using p = await dockerProject();
    const r = await p.exp("fresh");
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.deepEqual(verdictsOf(r.stdout), ["basic/edit passed", "basic/upload passed"]);
    assert.equal(r.runIds.length, 1);
    assert.deepEqual(await containersOfRun(p.docker, r.runIds[0]!), []);
  },
});

Deno.test({
  name:
    "niceeval exp: a Dockerfile layer's image is built before dispatch and the Attempt runs in it exits 0",
  ignore: !docker.ok,
  fn: async () => {
    await using p = await dockerProject();
    const r = await p.exp("build");
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.deepEqual(verdictsOf(r.stdout), ["built/marker passed"]);
    assert.deepEqual(await containersOfRun(p.docker, r.runIds[0]!), []);
  },
});

const EXAMPLE = join(REPO, "examples", "sandbox-docker");

Deno.test("niceeval list: the sandbox-docker example lists without a Docker daemon exits 0", async () => {
  await using p = await tempProject(EXAMPLE);
  const r = await p.run(["list"], { env: { DOCKER_HOST: "unix:///nonexistent/docker.sock" } });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /notes\/append/);
});

Deno.test({
  name:
    "niceeval exp: the sandbox-docker example edits files in fresh and reused containers exits 0",
  ignore: !docker.ok,
  fn: async () => {
    await using p = await tempProject(EXAMPLE);
    const client = dockerClient(Deno.env.toObject());
    let runIds: string[] = [];
    try {
      const r = await p.run(["exp", "--json"], { env: { DOCKER_HOST: docker.endpoint, CI: "1" } });
      runIds = runIdsOf(r.stdout);
      assert.equal(r.code, 0, r.stderr + r.stdout);
      assert.deepEqual(verdictsOf(r.stdout), [
        "notes/append passed",
        "notes/append passed",
        "notes/create passed",
        "notes/create passed",
        "todo/done passed",
        "todo/done passed",
      ]);
      for (const id of runIds) assert.deepEqual(await containersOfRun(client, id), []);
    } finally {
      for (const id of runIds) await removeRun(client, id);
    }
  },
});

Deno.test({
  name:
    "S127 niceeval exp: one SIGINT during 2 running docker Attempts leaves no container of the run exits 130",
  ignore: !docker.ok,
  fn: async () => {
    await using p = await dockerProject();
    const child = p.project.spawn(["exp", "hold", "--json"], {
      env: p.env({ DOCKER_PROJECT_NAME: "int" }),
    });
    const output = child.output();
    try {
      // Liveness wait with a named deadline: both Attempts report from inside their containers.
      const deadline = Date.now() + 120_000;
      while ((await p.report("started")).length < 2) {
        assert.ok(Date.now() < deadline, "the two Attempts did not start within 120 s");
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.equal((await ownedByPid(p, child.pid)).length, 2);
      child.kill("SIGINT");
      const r = await output;
      const stdout = new TextDecoder().decode(r.stdout);
      p.track(runIdsOf(stdout));
      assert.equal(r.code, 130, new TextDecoder().decode(r.stderr));
      assert.deepEqual(await ownedByPid(p, child.pid), []);
    } finally {
      try {
        child.kill("SIGKILL");
      } catch {
        // already exited
      }
      await output.catch(() => undefined);
    }
  },
});

/** Containers (any state) stamped with `pid`. */
async function ownedByPid(p: { docker: ReturnType<typeof dockerClient> }, pid: number) {
  const found = await p.docker.listContainers({
    all: true,
    filters: { label: [`niceeval.pid=${pid}`, "niceeval.managed=true"] },
  });
  return found.map((c) => c.Id);
}
