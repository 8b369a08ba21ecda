/**
 * `niceeval sandbox list --orphans` and `niceeval sandbox prune` for docker on the real CLI and a
 * real daemon (sandboxes.md §7.1–§7.3, rule 139): a container stamped with a dead pid is an orphan
 * and is pruned; one of a live owner and one of another host stay. Other test files may prune
 * orphans of this daemon at the same time, so assertions name only this file's containers.
 */
import assert from "node:assert/strict";
import { createProcessProbe } from "../../src/coordination/mod.ts";
import { dockerClient, dockerLabels } from "../../src/sandbox/providers/docker/client.ts";
import type { OwnerStamp } from "../../src/sandbox/mod.ts";
import { dockerOrphanNotice } from "../../src/cli/sandbox.ts";
import { createFakeIo } from "../_fakes/io.ts";
import { ndjson, tempProject } from "../_helpers/cli.ts";
import { dockerAvailability } from "../_helpers/docker.ts";

const docker = await dockerAvailability();

function client() {
  return dockerClient({ DOCKER_HOST: docker.endpoint });
}

async function deadPid(): Promise<number> {
  const child = new Deno.Command("true").spawn();
  await child.status;
  return child.pid;
}

/** Starts a container stamped with `owner` (labels of §7.1); returns its id. */
async function stamped(owner: OwnerStamp): Promise<string> {
  const container = await client().createContainer({
    Image: "niceeval-test/busybox:local",
    Entrypoint: ["sleep"],
    Cmd: ["300"],
    Labels: {
      ...dockerLabels(owner),
      "niceeval.expires": new Date(Date.now() + 300_000).toISOString(),
    },
    HostConfig: { NetworkMode: "none", Init: true },
  });
  await container.start();
  return container.id;
}

async function exists(id: string): Promise<boolean> {
  try {
    await client().getContainer(id).inspect();
    return true;
  } catch {
    return false;
  }
}

interface Row {
  readonly provider: string;
  readonly id: string;
  readonly status: string;
}

Deno.test({
  name:
    "niceeval sandbox list --orphans and prune: a dead owner's container goes, others stay exits 0",
  ignore: !docker.ok,
  fn: async (t) => {
    await using p = await tempProject(null);
    const env = { DOCKER_HOST: docker.endpoint };
    const sleeper = new Deno.Command("sleep", { args: ["300"] }).spawn();
    const ids: string[] = [];
    try {
      const host = Deno.hostname();
      const processStart = await createProcessProbe().startTimeOf(sleeper.pid) ?? "unknown";
      const stamp = (pid: number, h = host): OwnerStamp => ({
        host: h,
        pid,
        processStart,
        runId: `run-${pid}`,
        provisionToken: crypto.randomUUID().replaceAll("-", ""),
      });
      const orphan = await stamped(stamp(await deadPid()));
      const alive = await stamped(stamp(sleeper.pid));
      const foreign = await stamped(stamp(1, "elsewhere.invalid"));
      ids.push(orphan, alive, foreign);

      await t.step("list --orphans --json shows the orphan and the unverified one", async () => {
        const r = await p.run(["sandbox", "list", "--orphans", "--provider", "docker", "--json"], {
          env,
        });
        assert.equal(r.code, 0, r.stderr);
        const doc = ndjson(r.stdout)[0]!;
        assert.equal(doc.format, "niceeval.sandboxes");
        assert.deepEqual(doc.providers, [{ name: "docker", reachable: true }]);
        const mine = (doc.sandboxes as Row[]).filter((s) => ids.includes(s.id));
        assert.deepEqual(
          mine.map((s) => [s.provider, s.id, s.status]).sort(),
          [["docker", orphan, "orphan"], ["docker", foreign, "unverified"]].sort(),
        );
      });

      await t.step("list prints the table rows with the owner", async () => {
        const r = await p.run(["sandbox", "list", "--provider", "docker"], { env });
        assert.equal(r.code, 0, r.stderr);
        const lines = r.stdout.trimEnd().split("\n");
        assert.match(lines[0]!, /^PROVIDER\s+ID\s+STATUS\s+OWNER\(host:pid\)\s+RUN\s+AGE$/);
        const line = (id: string) => lines.find((l) => l.includes(id)) ?? "";
        assert.match(line(orphan), /^docker\s+\S+\s+orphan\s/);
        assert.match(line(alive), new RegExp(`^docker\\s+\\S+\\s+alive\\s+\\S+:${sleeper.pid}\\s`));
        assert.match(line(foreign), /\sunverified\s+elsewhere\.invalid:1\s/);
      });

      await t.step("dockerOrphanNotice() counts the orphans for the run-start notice", async () => {
        const io = { ...createFakeIo({ env }), hostname: Deno.hostname() };
        const notice = await dockerOrphanNotice(io, { probe: createProcessProbe() });
        assert.match(
          notice ?? "",
          /^[1-9]\d* orphaned docker sandboxes from earlier runs; remove them with niceeval sandbox prune$/,
        );
      });

      await t.step("prune destroys the orphan and leaves the others", async () => {
        const r = await p.run(["sandbox", "prune", "--provider", "docker", "--json"], { env });
        assert.equal(r.code, 0, r.stderr);
        const doc = ndjson(r.stdout)[0]!;
        assert.deepEqual(doc.failed, []);
        assert.ok(!(doc.destroyed as string[]).includes(alive));
        assert.ok(!(doc.destroyed as string[]).includes(foreign));
        assert.equal(await exists(orphan), false);
        assert.equal(await exists(alive), true);
        assert.equal(await exists(foreign), true);
      });
    } finally {
      sleeper.kill("SIGKILL");
      await sleeper.status;
      for (const id of ids) {
        await client().getContainer(id).remove({ force: true, v: true }).catch(() => undefined);
      }
    }
  },
});

Deno.test("dockerOrphanNotice() is silent without a daemon", async () => {
  const io = createFakeIo({ env: { DOCKER_HOST: "unix:///nonexistent/niceeval/docker.sock" } });
  assert.equal(await dockerOrphanNotice(io, { probe: createProcessProbe() }), undefined);
});

Deno.test("niceeval sandbox list: no docker daemon is a notice, not a failure exits 0", async () => {
  await using p = await tempProject(null);
  const endpoint = `unix://${p.stateDir}/absent.sock`;
  const r = await p.run(["sandbox", "list", "--json"], { env: { DOCKER_HOST: endpoint } });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, `docker: no daemon at ${endpoint}\n`);
  const doc = ndjson(r.stdout)[0]!;
  assert.deepEqual(doc.providers, [{ name: "local", reachable: true }]);
});
