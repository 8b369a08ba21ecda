/**
 * Section B of scenarios.md with real processes ([P]): the global cap and the Experiment cap are
 * per Invocation (EXP-5, CAP-6, ROOT-6). Two `niceeval exp` processes on different Record roots
 * each run their own 3 Attempts at once; every Attempt keeps a barrier file while it runs.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ndjson, tempProject } from "../_helpers/cli.ts";
import { type AuditEvent, ConcurrencyReplay } from "../_fakes/attempt.ts";

const CONFIG = `import { defineConfig } from "niceeval";

export default defineConfig({});
`;

const EXPERIMENT = `import { defineExperiment } from "niceeval";
import { scriptedAgent } from "niceeval/adapter";

export default defineExperiment({
  agent: scriptedAgent({ name: "echo", script: [], fallback: { text: "ok" } }),
  maxConcurrency: 3,
});
`;

/** Six blocking Evals: each holds \`running-<tag>-<step>\` until \`release\` exists. */
const EVALS = `import { defineEval } from "niceeval";
import { includes } from "niceeval/expect";

const dir = Deno.env.get("BARRIER_DIR");
const tag = Deno.env.get("BARRIER_TAG");

function released() {
  try {
    Deno.statSync(dir + "/release");
    return true;
  } catch {
    return false;
  }
}

export default ["a", "b", "c", "d", "e", "f"].map((step) =>
  defineEval({
    async test(t) {
      const barrier = dir + "/running-" + tag + "-" + step;
      await Deno.writeTextFile(barrier, "");
      try {
        while (!released()) {
          t.signal.throwIfAborted();
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      } finally {
        await Deno.remove(barrier);
      }
      await t.send("wide " + step);
      t.check(t.reply, includes("ok"));
    },
  })
);
`;

/** The barrier files that exist now, by process tag. */
async function barriers(dir: string): Promise<Record<string, number>> {
  const count: Record<string, number> = {};
  for await (const entry of Deno.readDir(dir)) {
    const tag = /^running-([A-Z])-/.exec(entry.name)?.[1];
    if (tag !== undefined) count[tag] = (count[tag] ?? 0) + 1;
  }
  return count;
}

/** Polls until `condition` holds; throws after `timeoutMs`. */
async function pollUntil(condition: () => Promise<boolean>, what: string, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

Deno.test("S18 two processes on different roots, each capped at 3, run 6 blocking Attempts at once exits 0", async () => {
  await using project = await tempProject(null);
  await project.write("niceeval.config.ts", CONFIG);
  await project.write("experiments/capped.ts", EXPERIMENT);
  await project.write("evals/wide.eval.ts", EVALS);
  const barrierDir = await Deno.makeTempDir({ prefix: "niceeval-s18-" });
  const start = (tag: string, root: string) =>
    project.spawn(["exp", "capped", "--max-concurrency", "3", "--record", root, "--json"], {
      env: { BARRIER_DIR: barrierDir, BARRIER_TAG: tag },
    });
  const children = { A: start("A", "r1"), B: start("B", "r2") };
  // Drained from the start, so that a full pipe never blocks a child.
  const outputs = { A: children.A.output(), B: children.B.output() };
  try {
    let peak: Record<string, number> = {};
    await pollUntil(async () => {
      const now = await barriers(barrierDir);
      assert.ok((now.A ?? 0) <= 3 && (now.B ?? 0) <= 3, JSON.stringify(now));
      peak = now;
      return (now.A ?? 0) + (now.B ?? 0) === 6;
    }, "6 barrier files exist at once");
    assert.deepEqual(peak, { A: 3, B: 3 });
  } finally {
    await Deno.writeTextFile(join(barrierDir, "release"), "");
    await Promise.allSettled([outputs.A, outputs.B]);
  }
  try {
    for (const tag of ["A", "B"] as const) {
      const out = await outputs[tag];
      const stdout = new TextDecoder().decode(out.stdout);
      assert.equal(out.code, 0, `${tag}: ${new TextDecoder().decode(out.stderr)}`);
      const lines = ndjson(stdout);
      const first = lines[0]!;
      assert.deepEqual(
        [first.type, first.concurrency, first.concurrencySource, first.experimentConcurrency],
        ["start", 3, "flag", { capped: 3 }],
      );
      const replay = new ConcurrencyReplay({ cap: 3, experimentCaps: { capped: 3 } });
      for (const line of lines) replay.apply(line as unknown as AuditEvent);
      assert.deepEqual(replay.violations, []);
      assert.equal(replay.peakRunning, 3);
      assert.equal(lines.filter((l) => l.type === "attempt_end").length, 6);
    }
    assert.deepEqual(await barriers(barrierDir), {});
  } finally {
    await Deno.remove(barrierDir, { recursive: true });
  }
});
