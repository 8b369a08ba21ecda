/**
 * Scenarios S50 and S55 of scenarios.md on docker ([D]), and the reuse checks of sandboxes.md
 * rule 79, with the real CLI on `tests/fixtures/docker_project` (busybox-git image, user
 * `sandbox`, network none).
 */
import assert from "node:assert/strict";
import { ndjson } from "../_helpers/cli.ts";
import { dockerAvailability } from "../_helpers/docker.ts";
import { containersOfRun, dockerProject, verdictsOf } from "../sandbox/_docker.ts";

const docker = await dockerAvailability();

Deno.test({
  name:
    "S50 niceeval exp: a docker two-member group shares one container and member 2 does not see member 1's file exits 0",
  ignore: !docker.ok,
  fn: async () => {
    await using p = await dockerProject();
    const r = await p.exp("group");
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.deepEqual(verdictsOf(r.stdout), ["group/a-writes passed", "group/b-reads passed"]);
    const ids = (await p.report("group-ids")).map((l) => l.split(" "));
    assert.deepEqual(ids.map(([evalId]) => evalId), ["group/a-writes", "group/b-reads"]);
    const containers = new Set(ids.map(([, id]) => id));
    assert.equal(containers.size, 1, `one container serves both members: ${[...containers]}`);
    assert.match([...containers][0]!, /^[0-9a-f]{64}$/);
    assert.deepEqual(await containersOfRun(p.docker, r.runIds[0]!), []);
  },
});

Deno.test({
  name:
    "S55 niceeval exp: docker reuse with maxConcurrency 1 serves 3 Attempts from one container, keeps node_modules and removes it before teardown exits 0",
  ignore: !docker.ok,
  fn: async () => {
    await using p = await dockerProject();
    const r = await p.exp("reuse");
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.deepEqual(verdictsOf(r.stdout), ["pool/a passed", "pool/b passed", "pool/c passed"]);
    const pool = (await p.report("pool-ids")).map((l) => l.split(" "));
    assert.equal(pool.length, 3);
    assert.equal(new Set(pool.map(([, id]) => id)).size, 1, `one container: ${pool}`);
    // Reset removed each Attempt's own file (checked in the eval) and kept node_modules, so each
    // Attempt sees the packages of the ones before it.
    const order = pool.map(([name]) => name!);
    const modules = new Map((await p.report("pool-modules")).map((l) => {
      const [name, list = ""] = l.split(" ");
      return [name!, list] as const;
    }));
    order.forEach((name, i) => {
      const before = order.slice(0, i).map((n) => `pkg-${n}`).sort().join(",");
      assert.equal(modules.get(name), before, `node_modules seen by ${name}`);
    });
    // The pool's container was gone when the Experiment's teardown started.
    assert.deepEqual(await p.report("teardown-containers"), ["[]"]);
    assert.deepEqual(await containersOfRun(p.docker, r.runIds[0]!), []);
  },
});

Deno.test({
  name:
    "niceeval exp: docker reuse on the image without git errors with sandbox-reuse-git-missing exits 1",
  ignore: !docker.ok,
  fn: async () => {
    await using p = await dockerProject();
    const r = await p.exp("reuse_plain");
    assert.equal(r.code, 1, r.stderr + r.stdout);
    const errors = ndjson(r.stdout).filter((e) => e.type === "error" && e.evalId === "pool/a");
    assert.deepEqual(errors.map((e) => e.code), ["sandbox-reuse-git-missing"]);
    assert.deepEqual(await containersOfRun(p.docker, r.runIds[0]!), []);
  },
});

Deno.test({
  name:
    "niceeval exp: docker reuse whose default user is root errors with sandbox-reuse-root-user exits 1",
  ignore: !docker.ok,
  fn: async () => {
    await using p = await dockerProject();
    const r = await p.exp("reuse_root");
    assert.equal(r.code, 1, r.stderr + r.stdout);
    const errors = ndjson(r.stdout).filter((e) => e.type === "error" && e.evalId === "pool/a");
    assert.deepEqual(errors.map((e) => e.code), ["sandbox-reuse-root-user"]);
    assert.deepEqual(await containersOfRun(p.docker, r.runIds[0]!), []);
  },
});
