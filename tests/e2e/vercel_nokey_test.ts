/**
 * Issue 19 end to end: a `vercelSandbox` experiment without Vercel credentials in the environment
 * halts before any of its Attempts starts, with one line naming the missing variable (sandboxes.md
 * rule 130, docs/vercel.md); the other experiment of the project runs; exit 1. No request leaves
 * the machine: the provider's precondition reads the environment only.
 */
import assert from "node:assert/strict";
import { ndjson, tempProject } from "../_helpers/cli.ts";

const lines = (text: string) => text.split("\n");

Deno.test("niceeval exp: a vercelSandbox experiment without credentials halts before any Attempt exits 1", async (t) => {
  await using p = await tempProject("vercel_nokey_project");

  await t.step("no token at all names VERCEL_TOKEN", async () => {
    const r = await p.run(["exp"], { env: { CI: "1" } });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const out = lines(r.stdout);
    const halt = out.findIndex((l) => l.startsWith("✗ experiment halted"));
    assert.deepEqual(out.slice(halt, halt + 2), [
      '✗ experiment halted · cloud: provider "vercel" cannot run: VERCEL_TOKEN is not set (nor VERCEL_OIDC_TOKEN) (3 attempts not started)',
      "    hint: export VERCEL_TOKEN, VERCEL_TEAM_ID and VERCEL_PROJECT_ID, or VERCEL_OIDC_TOKEN",
    ]);
  });

  await t.step(
    "a token without its team names VERCEL_TEAM_ID; only the local experiment starts",
    async () => {
      const env = { CI: "1", VERCEL_TOKEN: "never-sent", VERCEL_PROJECT_ID: "prj_1" };
      const r = await p.run(["exp", "--rerun", "all", "--json"], { env });
      assert.equal(r.code, 1, r.stderr);
      assert.ok(!r.stdout.includes("never-sent"), "the token value is never printed");
      const events = ndjson(r.stdout);
      const starts = events.filter((e) => e.type === "attempt_start");
      assert.deepEqual([...new Set(starts.map((e) => e.experimentId))], ["boxed"]);
      const halted = events.filter((e) => e.code === "dispatch-halted");
      assert.equal(halted.length, 1);
      assert.match(
        String(halted[0]!.message),
        /provider "vercel" cannot run: VERCEL_TEAM_ID is not set \(VERCEL_TOKEN needs/,
      );
      assert.deepEqual(halted[0]!.data, {
        scope: "experiment",
        reason: "precondition",
        hint: "export VERCEL_TEAM_ID (the id of the team that owns the sandboxes)",
        unstarted: 3,
      });
    },
  );
});
