/**
 * The own-network gate of the docker provider (sandboxes.md rule 118) against a real daemon: a
 * `network: "own"` create waits for a permit before its network exists, holds it until the sandbox
 * is stopped, and gives it back when the create fails or is aborted; without a gate own networks
 * never wait, and pool exhaustion is `docker-address-pool-exhausted`, class `rejected` (rule 113).
 */
import assert from "node:assert/strict";
import { dockerAvailability, withDaemonNetworks } from "../_helpers/docker.ts";
import { createNetworkGate, type NetworkGate } from "../../src/sandbox/providers/docker.ts";
import { classifyDockerCreateError } from "../../src/sandbox/providers/docker.ts";
import { dockerClient } from "../../src/sandbox/providers/docker/client.ts";
import { realClock } from "../../src/_shared/clock.ts";
import { createProviderRegistry } from "../../src/sandbox/mod.ts";
import { BUSYBOX_IMAGE, dockerTestBed, dockerTestOwner, networksOfRun } from "./_docker.ts";

const docker = await dockerAvailability();

/** A gate that logs grants, waits and releases, and resolves `waiting` on the first wait. */
function recordingGate(permits: number, log: string[]) {
  const inner = createNetworkGate(permits);
  let granted = 0;
  let onWaiting: () => void = () => {};
  let waiting = new Promise<void>((resolve) => onWaiting = resolve);
  const gate: NetworkGate = {
    acquire: async (signal, onWait) => {
      const permit = await inner.acquire(signal, () => {
        log.push("wait");
        onWait?.();
        onWaiting();
      });
      const n = ++granted;
      log.push(`grant ${n}`);
      return {
        [Symbol.dispose]: () => {
          log.push(`release ${n}`);
          permit[Symbol.dispose]();
        },
      };
    },
  };
  return {
    gate,
    /** Resolves when a create finds no free permit; re-armed by `rearm()`. */
    waiting: () => waiting,
    rearm: () => waiting = new Promise<void>((resolve) => onWaiting = resolve),
  };
}

Deno.test({
  name:
    "rule 118: with one permit the second own-network create waits, and starts once the first sandbox and its network are gone",
  ignore: !docker.ok,
  fn: () =>
    withDaemonNetworks(async () => {
      const log: string[] = [];
      const recording = recordingGate(1, log);
      await using bed = dockerTestBed({ networkGate: recording.gate });
      const first = await bed.create({ network: "own" });
      const firstInfo = await bed.docker.getContainer(first.id).inspect();
      const firstNetwork = firstInfo.HostConfig.NetworkMode!;
      assert.match(firstNetwork, /^niceeval-[0-9a-f]{12}$/);
      assert.deepEqual(await networksOfRun(bed.docker, bed.runId), [firstNetwork]);
      const progress: string[] = [];
      const second = bed.create({ network: "own" }, { progress: (m) => progress.push(m) });
      await Promise.race([recording.waiting(), second.then(() => assert.fail("did not wait"))]);
      // The waiting create has made nothing yet: only the first sandbox's network exists.
      assert.deepEqual(await networksOfRun(bed.docker, bed.runId), [firstNetwork]);
      assert.equal((await bed.containers()).length, 1);
      assert.deepEqual(progress, ["waiting for a free docker network"]);
      await first.stop();
      assert.deepEqual(log.slice(0, 3), ["grant 1", "wait", "release 1"]);
      const handle = await second;
      assert.deepEqual(log, ["grant 1", "wait", "release 1", "grant 2"]);
      const secondNetwork = (await bed.docker.getContainer(handle.id).inspect()).HostConfig
        .NetworkMode!;
      assert.notEqual(secondNetwork, firstNetwork);
      assert.deepEqual(await networksOfRun(bed.docker, bed.runId), [secondNetwork]);
      const r = await handle.exec({ argv: ["sh", "-c", "echo up"] });
      assert.equal(r.exitCode, 0);
      await handle.stop();
      await handle.stop();
      assert.deepEqual(log.slice(4), ["release 2"]);
      assert.deepEqual(await networksOfRun(bed.docker, bed.runId), []);
    }),
});

Deno.test({
  name:
    "rule 118: a failed own-network create gives its permit back after removing its network, and an aborted wait creates nothing",
  ignore: !docker.ok,
  fn: () =>
    withDaemonNetworks(async () => {
      const log: string[] = [];
      const recording = recordingGate(1, log);
      await using bed = dockerTestBed({ networkGate: recording.gate });
      const missing = `niceeval-test/missing-${crypto.randomUUID().slice(0, 8)}:none`;
      const failure = await bed.create({ network: "own", image: missing })
        .then(() => assert.fail("created from a missing image"), (e: unknown) => e);
      assert.equal(classifyDockerCreateError(failure), "fatal");
      assert.deepEqual(log, ["grant 1", "release 1"]);
      assert.deepEqual(await networksOfRun(bed.docker, bed.runId), []);
      const holder = await bed.create({ network: "own" });
      assert.deepEqual(log.slice(2), ["grant 2"]); // no wait: the failed create released its permit
      const abort = new AbortController();
      const waiting = bed.create({ network: "own" }, { signal: abort.signal });
      await Promise.race([recording.waiting(), waiting.then(() => assert.fail("did not wait"))]);
      abort.abort(new Error("attempt ended"));
      await assert.rejects(waiting, /attempt ended/);
      assert.equal((await bed.containers()).length, 1);
      assert.equal((await networksOfRun(bed.docker, bed.runId)).length, 1);
      await holder.stop();
      assert.deepEqual(log.slice(2), ["grant 2", "wait", "release 2"]);
    }),
});

Deno.test({
  name:
    "rule 113/116: without a gate own networks never wait; the daemon's pool exhaustion is docker-address-pool-exhausted, class rejected, and leaves nothing",
  ignore: !docker.ok,
  fn: async () => {
    // The daemon's answer is replayed through the client seam: filling the shared test pool
    // would race the other docker test files (the real answer is matched in docker_pools_test).
    const real = dockerClient(Deno.env.toObject());
    let networkCalls = 0;
    const exhausted = new Proxy(real, {
      get(target, key) {
        if (key === "createNetwork") {
          return () => {
            networkCalls++;
            return Promise.reject(Object.assign(new Error("(HTTP code 404) unexpected - "), {
              statusCode: 404,
              json: {
                message: "could not find an available, non-overlapping IPv4 address pool " +
                  "among the defaults to assign to the network",
              },
            }));
          };
        }
        const value = Reflect.get(target, key);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    await using bed = dockerTestBed({ docker: exhausted });
    const error = await bed.create({ network: "own" })
      .then(() => assert.fail("created a network past the pools"), (e: unknown) => e);
    assert.equal(networkCalls, 1);
    assert.equal((error as { code?: string }).code, "docker-address-pool-exhausted");
    assert.match(String((error as Error).message), /niceeval doctor docker/);
    assert.equal(classifyDockerCreateError(error), "rejected");
    assert.deepEqual(await bed.containers(), []);
  },
});

Deno.test({
  name:
    "rule 118: the registry's docker provider admits own networks through a gate of dockerNetworkPermits",
  ignore: !docker.ok,
  fn: () =>
    withDaemonNetworks(async () => {
      const hostEnv = Deno.env.toObject();
      const registry = createProviderRegistry({
        hostEnv,
        clock: realClock,
        dockerNetworkPermits: 1,
      });
      const provider = await registry.get("docker");
      await using bed = dockerTestBed();
      const create = (progress: (m: string) => void) =>
        provider.plan(
          { image: BUSYBOX_IMAGE, workdir: "/workspace", network: "own" },
          { projectRoot: Deno.cwd(), signal: new AbortController().signal },
        ).then(({ plan }) =>
          provider.create(plan, {
            owner: dockerTestOwner(bed.runId),
            lifetimeMs: 600_000,
            signal: new AbortController().signal,
            progress,
            diagnostic: () => {},
          })
        );
      const first = await create(() => assert.fail("the first create waited"));
      let waited!: () => void;
      const waiting = new Promise<void>((resolve) => waited = resolve);
      const second = create(waited);
      await Promise.race([waiting, second.then(() => assert.fail("did not wait"))]);
      assert.equal((await networksOfRun(bed.docker, bed.runId)).length, 1);
      await first.stop();
      const handle = await second;
      assert.equal((await networksOfRun(bed.docker, bed.runId)).length, 1);
      await handle.stop();
      assert.deepEqual(await networksOfRun(bed.docker, bed.runId), []);
    }),
});
