/**
 * `niceeval doctor docker` on the real CLI (sandboxes.md rules 119–120, 139; cli.md CMD-19). The CI
 * daemon's single pool holds 4 networks: a project budget of 8 docker sandboxes needs the
 * `daemon.json` fix (exit 1); a budget of 2 needs nothing (exit 0).
 */
import assert from "node:assert/strict";
import { ndjson, tempProject } from "../_helpers/cli.ts";
import { dockerAvailability } from "../_helpers/docker.ts";

const docker = await dockerAvailability();
const FIX_JSON =
  '{"default-address-pools":[{"base":"172.16.0.0/12","size":20},{"base":"192.168.0.0/16","size":24}]}';

function config(budget: number): string {
  return 'import { defineConfig } from "niceeval";\n' +
    `export default defineConfig({ maxSandboxes: { docker: ${budget} } });\n`;
}

function env(): Record<string, string> {
  return { DOCKER_HOST: docker.endpoint };
}

Deno.test({
  name:
    "niceeval doctor docker: a budget above the free networks prints the daemon.json fix exits 1",
  ignore: !docker.ok,
  fn: async () => {
    await using p = await tempProject(null);
    await p.write("niceeval.config.ts", config(8));
    const r = await p.run(["doctor", "docker"], { env: env() });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.equal(r.stderr, "");
    const lines = r.stdout.split("\n");
    assert.equal(lines[0], `endpoint: ${docker.endpoint}`);
    assert.match(r.stdout, /^server: Docker Engine \S+, API \d+\.\d+ \(rootful\)$/m);
    assert.match(r.stdout, /^storage driver: \S+$/m);
    assert.match(r.stdout, /^cgroup version: \d$/m);
    assert.match(r.stdout, /^default bridge: absent$/m);
    assert.match(r.stdout, /maxSandboxes\.docker default \d+, configured 8$/m);
    assert.match(r.stdout, /^address pools \(configured\): capacity 4, used \d, free \d$/m);
    assert.match(r.stdout, /^ {2}10\.213\.0\.0\/22 size \/24: capacity 4, used \d, free \d$/m);
    assert.match(r.stdout, /^niceeval containers: /m);
    assert.match(r.stdout, /^niceeval networks: \d+$/m);
    assert.match(r.stdout, /fewer than maxSandboxes\.docker 8$/m);
    assert.ok(
      r.stdout.includes(
        `fix: set the default address pools (512 networks) in /etc/docker/daemon.json:\n  ${FIX_JSON}\n` +
          "then restart the daemon: sudo systemctl restart docker\n" +
          "warning: restarting the daemon stops every running container\n",
      ),
      r.stdout,
    );
  },
});

Deno.test({
  name: "niceeval doctor docker: a budget the pools can hold needs no fix exits 0",
  ignore: !docker.ok,
  fn: async () => {
    await using p = await tempProject(null);
    await p.write("niceeval.config.ts", config(2));
    const r = await p.run(["doctor", "docker"], { env: env() });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(r.stderr, "");
    assert.match(r.stdout, /configured 2$/m);
    assert.ok(r.stdout.endsWith("ok: nothing needs fixing\n"), r.stdout);
    assert.ok(!r.stdout.includes("default-address-pools"));
  },
});

Deno.test({
  name: "niceeval doctor docker --json: one document with the pools and the fix exits 1",
  ignore: !docker.ok,
  fn: async () => {
    await using p = await tempProject(null);
    await p.write("niceeval.config.ts", config(8));
    const r = await p.run(["doctor", "docker", "--json"], { env: env() });
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stderr, "");
    const docs = ndjson(r.stdout);
    assert.equal(docs.length, 1);
    const doc = docs[0] as {
      [key: string]: unknown;
      machineBudget: { configured: number; value: number };
      pools: { capacity: number; used: number; free: number };
    };
    assert.equal(doc.format, "niceeval.doctor.docker");
    assert.equal(doc.schemaVersion, 1);
    assert.equal(doc.reachable, true);
    assert.equal(doc.endpoint, docker.endpoint);
    assert.equal(doc.defaultBridge, false);
    assert.equal(doc.machineBudget.configured, 8);
    assert.equal(doc.machineBudget.value, 8);
    assert.equal(doc.pools.capacity, 4);
    assert.equal(doc.pools.free, 4 - doc.pools.used);
    assert.deepEqual(doc.fix, {
      daemonJson: FIX_JSON,
      networks: 512,
      file: "/etc/docker/daemon.json",
      restart: "sudo systemctl restart docker",
      warning: "restarting the daemon stops every running container",
    });
  },
});

Deno.test("niceeval doctor docker: no daemon at the endpoint prints one line exits 1", async () => {
  await using p = await tempProject(null);
  const endpoint = `unix://${p.stateDir}/absent.sock`;
  const r = await p.run(["doctor", "docker"], { env: { DOCKER_HOST: endpoint } });
  assert.equal(r.code, 1);
  assert.equal(r.stderr, "");
  assert.match(
    r.stdout,
    new RegExp(`^docker: no Docker daemon answered at ${endpoint}: [^\\n]+\\n$`),
  );
  const json = await p.run(["doctor", "docker", "--json"], { env: { DOCKER_HOST: endpoint } });
  assert.equal(json.code, 1);
  const doc = ndjson(json.stdout)[0]!;
  assert.equal(doc.reachable, false);
  assert.equal(doc.endpoint, endpoint);
  assert.match(String(doc.error), /no Docker daemon answered/);
});

Deno.test("niceeval doctor: a missing or unknown subcommand is a usage error exits 2", async () => {
  await using p = await tempProject(null);
  for (const args of [["doctor"], ["doctor", "podman"], ["doctor", "docker", "extra"]]) {
    const r = await p.run(args);
    assert.equal(r.code, 2, args.join(" "));
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /^error: .* \[usage\]\nhint: /);
  }
});
