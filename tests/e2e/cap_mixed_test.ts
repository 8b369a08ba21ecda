/**
 * Issue 18.3 on the real CLI (CAP-3, LANE-1): a local-sandbox experiment beside a direct-agent
 * experiment no longer lowers the default G to 1; the local Attempts still run one at a time in
 * their exclusive lane.
 */
import assert from "node:assert/strict";
import { ndjson, tempProject } from "../_helpers/cli.ts";

Deno.test("issue 18.3: local beside direct plans concurrency 10 (from default), local runs one at a time exits 0", async (t) => {
  await using p = await tempProject("cap_mixed_project");
  await t.step("PLAN names the default of 10", async () => {
    const r = await p.run(["exp", "--dry"]);
    assert.equal(r.code, 0, r.stderr);
    const line = r.stdout.split("\n").find((l) => / attempts \(/.test(l));
    assert.equal(line, "  6 attempts (3 evals × 2 experiments) · concurrency 10 (from default)");
  });
  await t.step("the local lane still serializes its Attempts", async () => {
    const r = await p.run(["exp", "--json"], { env: { CI: "1" } });
    assert.equal(r.code, 0, r.stderr);
    const events = ndjson(r.stdout);
    const start = events.find((e) => e.type === "start")!;
    assert.deepEqual(
      [start.concurrency, start.concurrencySource, start.concurrencyProvider],
      [10, "default", null],
    );
    // Between a local Attempt's start and its end no other local Attempt starts.
    let running: unknown = null;
    let localStarts = 0;
    for (const e of events) {
      if (e.experimentId !== "local") continue;
      if (e.type === "attempt_start") {
        assert.equal(running, null, `${e.attemptId} started while ${running} ran`);
        running = e.attemptId;
        localStarts++;
      } else if (e.type === "attempt_end") {
        assert.equal(e.attemptId, running);
        running = null;
      }
    }
    assert.equal(localStarts, 3);
    const verdicts = events.filter((e) => e.type === "attempt_end").map((e) => e.verdict);
    assert.deepEqual(verdicts, Array(6).fill("passed"));
  });
});
