/**
 * `niceeval sandbox list` and `niceeval sandbox prune` on the real CLI (sandboxes.md §7.3, cli.md
 * CMD-19): local roots of a dead owner, a live owner and another host, outside any project.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { createProcessProbe } from "../../src/coordination/mod.ts";
import { ndjson, tempProject } from "../_helpers/cli.ts";

async function deadPid(): Promise<number> {
  const child = new Deno.Command("true").spawn();
  await child.status;
  return child.pid;
}

/** Writes a local root stamped with `owner` into `tmpDir`; returns its id. */
async function root(tmpDir: string, name: string, owner: Record<string, unknown>): Promise<string> {
  const id = `niceeval-local-${owner.pid}-${name}`;
  await Deno.mkdir(join(tmpDir, id, "work"), { recursive: true });
  await Deno.writeTextFile(
    join(tmpDir, id, "owner.json"),
    JSON.stringify({ runId: `run-${name}`, provisionToken: "f".repeat(32), ...owner }),
  );
  return id;
}

Deno.test("niceeval sandbox list and prune: orphans go, live owners stay, --force takes unverified exits 0", async (t) => {
  await using p = await tempProject(null);
  const tmpDir = await Deno.realPath(await Deno.makeTempDir({ prefix: "niceeval-roots-" }));
  const sleeper = new Deno.Command("sleep", { args: ["60"] }).spawn();
  try {
    const host = Deno.hostname();
    const start = await createProcessProbe().startTimeOf(sleeper.pid);
    const orphan = await root(tmpDir, "dead", { host, pid: await deadPid(), processStart: start });
    const alive = await root(tmpDir, "live", { host, pid: sleeper.pid, processStart: start });
    const foreign = await root(tmpDir, "away", { host: "elsewhere", pid: 1, processStart: start });
    const env = { TMPDIR: tmpDir };
    await t.step("list --json shows every stamped root with its status", async () => {
      const r = await p.run(["sandbox", "list", "--json"], { env });
      assert.equal(r.code, 0, r.stderr);
      const doc = ndjson(r.stdout)[0]!;
      assert.equal(doc.format, "niceeval.sandboxes");
      assert.equal(doc.schemaVersion, 1);
      assert.deepEqual(doc.providers, [{ name: "local", reachable: true }]);
      const rows = (doc.sandboxes as { id: string; status: string; provider: string }[])
        .map((s) => [s.provider, s.id, s.status]);
      assert.deepEqual(
        rows,
        [
          ["local", foreign, "unverified"],
          ["local", orphan, "orphan"],
          ["local", alive, "alive"],
        ].sort((a, b) => a[1]! < b[1]! ? -1 : 1),
      );
    });
    await t.step("list --orphans prints the table without live owners", async () => {
      const r = await p.run(["sandbox", "list", "--orphans"], { env });
      assert.equal(r.code, 0, r.stderr);
      const lines = r.stdout.trimEnd().split("\n");
      assert.match(lines[0]!, /^PROVIDER\s+ID\s+STATUS\s+OWNER\(host:pid\)\s+RUN\s+AGE$/);
      assert.equal(lines.length, 3);
      assert.ok(lines.some((l) => l.includes(orphan) && /\borphan\b/.test(l)));
      assert.ok(lines.some((l) => l.includes(foreign) && l.includes("elsewhere:1 ")));
      assert.ok(!r.stdout.includes(alive));
    });
    await t.step("prune destroys only the orphan", async () => {
      const r = await p.run(["sandbox", "prune", "--json"], { env });
      assert.equal(r.code, 0, r.stderr);
      const doc = ndjson(r.stdout)[0]!;
      assert.deepEqual(doc.destroyed, [orphan]);
      assert.deepEqual(doc.failed, []);
      const left = (await Array.fromAsync(Deno.readDir(tmpDir))).map((e) => e.name).sort();
      assert.deepEqual(left, [alive, foreign].sort());
    });
    await t.step(
      "prune --force also destroys the unverified root, never the live one",
      async () => {
        const r = await p.run(["sandbox", "prune", "--force", "--provider", "local"], { env });
        assert.equal(r.code, 0, r.stderr);
        assert.equal(r.stdout, `local  ${foreign}  destroyed\n`);
        const left = (await Array.fromAsync(Deno.readDir(tmpDir))).map((e) => e.name);
        assert.deepEqual(left, [alive]);
      },
    );
    await t.step("an unknown provider or a missing subcommand is a usage error", async () => {
      const unknown = await p.run(["sandbox", "list", "--provider", "nimbus"], { env });
      assert.equal(unknown.code, 2);
      assert.match(unknown.stderr, /unknown sandbox provider "nimbus"/);
      const bare = await p.run(["sandbox"], { env });
      assert.equal(bare.code, 2);
      assert.match(bare.stderr, /hint: subcommands: sandbox list, sandbox prune/);
    });
  } finally {
    sleeper.kill("SIGKILL");
    await sleeper.status;
    await Deno.remove(tmpDir, { recursive: true });
  }
});
