/**
 * Docker address pools (sandboxes.md rules 116–118, 139): the counting of rule 117 on fixed
 * inputs, and against the CI daemon, whose single pool 10.213.0.0/22 split into /24s holds four
 * networks — the fifth bridge network fails with the exhaustion error that maps to
 * `docker-address-pool-exhausted`, exactly where the preflight's numbers said it would.
 */
import assert from "node:assert/strict";
import { dockerClient } from "../../src/sandbox/providers/docker/client.ts";
import {
  ADDRESS_POOL_EXHAUSTED,
  addressPoolPreflight,
  addressPoolUsage,
  createNetworkGate,
  DockerAddressPoolExhaustedError,
  isAddressPoolExhausted,
  mapAddressPoolError,
  readAddressPoolUsage,
} from "../../src/sandbox/providers/docker/pools.ts";
import { dockerPoolPreflight } from "../../src/sandbox/mod.ts";
import { dockerAvailability, withDaemonNetworks } from "../_helpers/docker.ts";

const docker = await dockerAvailability();

function client() {
  const host = Deno.env.get("DOCKER_HOST");
  return dockerClient(host === undefined ? {} : { DOCKER_HOST: host });
}

function net(...subnets: string[]) {
  return { IPAM: { Config: subnets.map((Subnet) => ({ Subnet })) } };
}

Deno.test("addressPoolUsage() counts the built-in pools when the daemon reports none", () => {
  const usage = addressPoolUsage({
    info: {},
    networks: [net("172.17.0.0/16"), net("192.168.16.0/20", "fd00::/64"), net("10.0.0.0/8")],
  });
  assert.equal(usage.configured, false);
  assert.equal(usage.capacity, 31);
  assert.equal(usage.used, 2);
  assert.equal(usage.free, 29);
  assert.equal(usage.pools.length, 16);
  assert.deepEqual(usage.pools.at(-1), {
    base: "192.168.0.0/16",
    size: 20,
    capacity: 16,
    used: 1,
    free: 15,
  });
  assert.equal(addressPoolUsage({ info: { DefaultAddressPools: [] }, networks: [] }).capacity, 31);
});

Deno.test("addressPoolUsage() sums 2^(size − prefix) over configured pools", () => {
  const usage = addressPoolUsage({
    info: {
      DefaultAddressPools: [{ Base: "10.213.0.0/22", Size: 24 }, {
        Base: "172.16.0.0/12",
        Size: 20,
      }],
    },
    networks: [net("10.213.1.0/24"), net("10.213.4.0/24"), net("172.20.16.0/20"), { IPAM: {} }],
  });
  assert.equal(usage.configured, true);
  assert.deepEqual(usage.pools.map((p) => [p.capacity, p.used, p.free]), [[4, 1, 3], [
    256,
    1,
    255,
  ]]);
  assert.deepEqual([usage.capacity, usage.used, usage.free], [260, 2, 258]);
});

Deno.test("addressPoolPreflight() warns when free < min(G, own sandboxes, maxSandboxes)", () => {
  const usage = addressPoolUsage({
    info: { DefaultAddressPools: [{ Base: "10.213.0.0/22", Size: 24 }] },
    networks: [net("10.213.0.0/24")],
  });
  const low = addressPoolPreflight(usage, { concurrency: 10, ownSandboxes: 6, maxSandboxes: 8 });
  assert.equal(low.wanted, 6);
  assert.equal(low.permits, 3);
  assert.equal(low.diagnostic?.code, "docker-address-pool-low");
  assert.equal(low.diagnostic?.level, "warning");
  assert.deepEqual(low.diagnostic?.data, { capacity: 4, used: 1, free: 3, wanted: 6 });
  assert.match(low.diagnostic!.message, /"default-address-pools"/);
  const fine = addressPoolPreflight(usage, { concurrency: 2, ownSandboxes: 6, maxSandboxes: 8 });
  assert.deepEqual([fine.wanted, fine.permits, fine.diagnostic], [2, undefined, undefined]);
});

Deno.test("createNetworkGate() grants its permits in order and rejects an aborted wait", async () => {
  const gate = createNetworkGate(1);
  const first = await gate.acquire(new AbortController().signal);
  const order: string[] = [];
  const aborted = new AbortController();
  const waitB = gate.acquire(aborted.signal).then(() => order.push("b"), () => order.push("b✗"));
  const waitC = gate.acquire(new AbortController().signal).then((p) => {
    order.push("c");
    return p;
  });
  aborted.abort(new Error("stop"));
  await waitB;
  first[Symbol.dispose]();
  first[Symbol.dispose]();
  const third = await waitC;
  assert.deepEqual(order, ["b✗", "c"]);
  third[Symbol.dispose]();
  (await gate.acquire(new AbortController().signal))[Symbol.dispose]();
});

Deno.test("rule 118: createNetworkGate(2) admits two holders, tells only the third that it waits, and grants it on the first release", async () => {
  const gate = createNetworkGate(2);
  const signal = new AbortController().signal;
  const waits: string[] = [];
  const a = await gate.acquire(signal, () => waits.push("a"));
  const b = await gate.acquire(signal, () => waits.push("b"));
  assert.equal(waits.length, 0);
  let granted = false;
  const c = gate.acquire(signal, () => waits.push("c")).then((p) => {
    granted = true;
    return p;
  });
  assert.deepEqual(waits, ["c"]);
  await Promise.resolve();
  assert.equal(granted, false);
  b[Symbol.dispose]();
  const third = await c;
  assert.equal(granted, true);
  // Two holders again (a and c): a fourth waits until one of them releases.
  const d = gate.acquire(signal, () => waits.push("d"));
  assert.deepEqual(waits, ["c", "d"]);
  third[Symbol.dispose]();
  (await d)[Symbol.dispose]();
  a[Symbol.dispose]();
  // Fewer than one permit is still one (rule 118: max(1, free)).
  const lone = createNetworkGate(0);
  const only = await lone.acquire(signal);
  const next = lone.acquire(signal, () => waits.push("lone"));
  assert.deepEqual(waits.at(-1), "lone");
  only[Symbol.dispose]();
  (await next)[Symbol.dispose]();
});

Deno.test("mapAddressPoolError() maps only the daemon's exhaustion answer", () => {
  const daemon = Object.assign(new Error("(HTTP code 404) unexpected - "), {
    statusCode: 404,
    json: {
      message:
        "could not find an available, non-overlapping IPv4 address pool among the defaults to assign to the network",
    },
  });
  const mapped = mapAddressPoolError(daemon);
  assert.ok(mapped instanceof DockerAddressPoolExhaustedError);
  assert.equal(mapped.code, "docker-address-pool-exhausted");
  assert.equal(mapped.cause, daemon);
  assert.match(mapped.message, /niceeval doctor docker/);
  const other = new Error("no such image");
  assert.equal(mapAddressPoolError(other), other);
  assert.equal(mapAddressPoolError(mapped), mapped);
});

Deno.test({
  name:
    "readAddressPoolUsage() matches the daemon: the network after the last free one is exhausted",
  ignore: !docker.ok,
  fn: () =>
    withDaemonNetworks(async () => {
      const d = client();
      const signal = new AbortController().signal;
      const before = await readAddressPoolUsage(d, { signal });
      assert.deepEqual(
        before.pools.map((p) => [p.base, p.size, p.capacity]),
        [["10.213.0.0/22", 24, 4]],
      );
      const preflight = addressPoolPreflight(before, {
        concurrency: 10,
        ownSandboxes: before.free + 1,
        maxSandboxes: 8,
      });
      assert.deepEqual(preflight.diagnostic?.data, {
        capacity: 4,
        used: before.used,
        free: before.free,
        wanted: before.free + 1,
      });
      const token = crypto.randomUUID().slice(0, 8);
      const created: string[] = [];
      try {
        for (let i = 0; i < before.free; i++) {
          const network = await d.createNetwork({
            Name: `niceeval-pools-test-${token}-${i}`,
            Driver: "bridge",
            Labels: { "niceeval.test": "pools" },
          });
          created.push(network.id);
        }
        const full = await readAddressPoolUsage(d, { signal });
        assert.deepEqual([full.used, full.free], [4, 0]);
        const error = await d.createNetwork({
          Name: `niceeval-pools-test-${token}-last`,
          Driver: "bridge",
          Labels: { "niceeval.test": "pools" },
        }).then((n) => {
          created.push(n.id);
          assert.fail("the daemon created a network past its pools");
        }, (e: unknown) => e);
        assert.ok(isAddressPoolExhausted(error), String(error));
        const mapped = mapAddressPoolError(error) as DockerAddressPoolExhaustedError;
        assert.equal(mapped.code, ADDRESS_POOL_EXHAUSTED);
      } finally {
        for (const id of created) await d.getNetwork(id).remove().catch(() => undefined);
      }
      assert.equal((await readAddressPoolUsage(d, { signal })).used, before.used);
    }),
});

Deno.test({
  name: "dockerPoolPreflight() reads the daemon's pools and wants min(G, own sandboxes, budget)",
  ignore: !docker.ok,
  fn: async () => {
    const preflight = await dockerPoolPreflight({ DOCKER_HOST: docker.endpoint }, {
      concurrency: 10,
      ownSandboxes: 6,
      maxSandboxes: 8,
      signal: new AbortController().signal,
    });
    const { capacity, used, free } = preflight.usage;
    assert.equal(capacity, 4);
    assert.equal(preflight.wanted, 6);
    assert.deepEqual(preflight.diagnostic?.data, { capacity, used, free, wanted: 6 });
    assert.equal(preflight.permits, Math.max(1, free));
  },
});
