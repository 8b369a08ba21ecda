/**
 * Issue 19: a fixture project runs evals on `e2bSandbox` through the real CLI against the local
 * fake E2B cloud (tests/_fakes/e2b), reached only through `E2B_API_URL` / `E2B_SANDBOX_URL` /
 * `E2B_API_KEY` in the child's environment: create with owner stamps, exec, files, stop, a 429 on
 * the first create that is retried, and orphan listing and pruning (sandboxes.md §3.4, §7, §8.3).
 */
import assert from "node:assert/strict";
import { Sandbox } from "e2b";
import { ndjson, tempProject } from "../_helpers/cli.ts";
import { type FakeE2B, type FakeRequest, startFakeE2B } from "../_fakes/e2b/mod.ts";

const CREATE = "/v2/sandboxes";

function creates(fake: FakeE2B): FakeRequest[] {
  return fake.requests.filter((r) => r.side === "api" && r.method === "POST" && r.path === CREATE);
}

async function deadPid(): Promise<number> {
  const child = new Deno.Command("true").spawn();
  await child.status;
  return child.pid;
}

/** The e2b rows of a `sandbox list|prune --json` document. */
function e2bDocument(stdout: string) {
  const doc = JSON.parse(stdout) as {
    providers: { name: string; reachable: boolean; error?: string }[];
    sandboxes: { provider: string; id: string; status: string }[];
    destroyed?: string[];
  };
  return {
    provider: doc.providers.find((p) => p.name === "e2b"),
    sandboxes: doc.sandboxes.filter((s) => s.provider === "e2b"),
    destroyed: doc.destroyed,
  };
}

Deno.test("niceeval exp: evals on e2bSandbox against the fake E2B cloud exits 0", async (t) => {
  await using fake = await startFakeE2B({ templates: ["base"], createFailures: [429] });
  await using p = await tempProject("e2b_project");
  const env = { ...fake.env, CI: "1" };

  await t.step("a 429 on the first create is retried and every eval passes", async () => {
    const r = await p.run(["exp", "cloud", "--json"], { env });
    assert.equal(r.code, 0, r.stderr);
    const ends = ndjson(r.stdout).filter((e) => e.type === "attempt_end");
    assert.deepEqual(
      ends.map((e) => [e.evalId, e.verdict]).sort(),
      [["files/create", "passed"], ["files/exec", "passed"]],
    );
    const tries = creates(fake);
    assert.deepEqual(tries.map((c) => c.status), [429, 201, 201]);
    // Every try carries the owner stamp of rule 91, each with a fresh provision token.
    const tokens = tries.map((c) => c.metadata?.["niceeval-token"]);
    assert.equal(new Set(tokens).size, 3);
    for (const c of tries) {
      assert.match(c.metadata?.["niceeval-token"] ?? "", /^[0-9a-f]{32}$/);
      assert.equal(c.metadata?.["niceeval-host"], Deno.hostname());
      assert.match(c.metadata?.["niceeval-pid"] ?? "", /^\d+$/);
      assert.ok(c.metadata?.["niceeval-run"], "run id stamped");
      assert.ok(c.metadata?.["niceeval-start"], "process start stamped");
    }
  });

  await t.step("each sandbox ran commands and file calls, then was killed", () => {
    const created = creates(fake).filter((c) => c.status === 201);
    const ids = fake.requests
      .filter((r) => r.side === "envd")
      .map((r) => r.sandboxId)
      .filter((id, i, all) => id !== undefined && all.indexOf(id) === i);
    assert.equal(ids.length, 2);
    for (const id of ids) {
      const calls = fake.requests.filter((r) => r.sandboxId === id);
      const paths = calls.map((r) => `${r.method} ${r.path.split("?")[0]}`);
      assert.ok(paths.includes("POST /process.Process/Start"), `no exec in ${id}`);
      assert.ok(paths.includes("POST /files"), `no file write in ${id}`);
      assert.ok(paths.includes("GET /files"), `no file read in ${id}`);
      // Kill is the last call for the sandbox, after every exec and file call.
      assert.equal(paths.at(-1), `DELETE /sandboxes/${id}`);
      // Causality: the sandbox was created after the refused try.
      assert.ok(calls[0]!.seq > creates(fake)[0]!.seq);
    }
    assert.equal(created.length, ids.length);
    assert.deepEqual(fake.sandboxes(), []);
  });

  await t.step("sandbox list finds no e2b sandbox after the clean run", async () => {
    const r = await p.run(["sandbox", "list", "--json", "--provider", "e2b"], { env });
    assert.equal(r.code, 0, r.stderr);
    const doc = e2bDocument(r.stdout);
    assert.deepEqual(doc.provider, { name: "e2b", reachable: true });
    assert.deepEqual(doc.sandboxes, []);
  });

  await t.step(
    "sandbox list shows a crashed run's sandbox as orphan and prune kills it",
    async () => {
      // A sandbox stamped by a process that died without stopping it.
      const crashed = await Sandbox.create("base", {
        apiKey: fake.env.E2B_API_KEY,
        apiUrl: fake.apiUrl,
        sandboxUrl: fake.sandboxUrl,
        metadata: {
          "niceeval-host": Deno.hostname(),
          "niceeval-pid": String(await deadPid()),
          "niceeval-start": "2030-01-01T00:00:00Z",
          "niceeval-run": "crashed-run",
          "niceeval-token": "f".repeat(32),
        },
      });
      const list = await p.run(["sandbox", "list", "--json", "--provider", "e2b"], { env });
      assert.equal(list.code, 0, list.stderr);
      assert.deepEqual(
        e2bDocument(list.stdout).sandboxes.map((s) => [s.id, s.status]),
        [[crashed.sandboxId, "orphan"]],
      );
      const prune = await p.run(["sandbox", "prune", "--json", "--provider", "e2b"], { env });
      assert.equal(prune.code, 0, prune.stderr);
      assert.deepEqual(e2bDocument(prune.stdout).destroyed, [crashed.sandboxId]);
      assert.deepEqual(fake.sandboxes(), []);
    },
  );
});
