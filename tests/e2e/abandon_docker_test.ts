/**
 * INT-1, TIME-3 with a real daemon: a `niceeval exp` whose eval body ignores `t.signal` is
 * interrupted once; after the abort grace the body is abandoned, and its container is still
 * removed before the process exits 130 (counted by the daemon's `niceeval.pid` label).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { dockerAvailability } from "../_helpers/docker.ts";
import { dockerClient } from "../../src/sandbox/providers/docker/client.ts";
import { dockerProject, runIdsOf } from "../sandbox/_docker.ts";

const docker = await dockerAvailability();

const EXPERIMENT = `import { defineExperiment } from "niceeval";
import { shellAgent, template } from "../support/report.ts";

export default defineExperiment({ agent: shellAgent, sandbox: template, evals: ["stuck"] });
`;

// Reports its start, then waits on a timer it never cancels: t.signal is ignored.
const STUCK_EVAL = `import { defineEval } from "niceeval";
import { isTrue } from "niceeval/expect";
import { note } from "../../support/report.ts";

export default defineEval({
  description: "ignores its signal",
  async test(t) {
    await note("started", t.sandbox.id);
    await new Promise((resolve) => setTimeout(resolve, 120_000));
    t.check(true, isTrue());
  },
});
`;

Deno.test({
  name:
    "INT-1 niceeval exp: SIGINT with a body that ignores its signal still removes its container exits 130",
  ignore: !docker.ok,
  fn: async () => {
    await using p = await dockerProject();
    await Deno.writeTextFile(join(p.project.dir, "experiments", "stuck.ts"), EXPERIMENT);
    await Deno.mkdir(join(p.project.dir, "evals", "stuck"), { recursive: true });
    await Deno.writeTextFile(join(p.project.dir, "evals", "stuck", "a.eval.ts"), STUCK_EVAL);
    const child = p.project.spawn(["exp", "stuck", "--json"], { env: p.env() });
    const output = child.output();
    let exited = false;
    output.finally(() => void (exited = true)).catch(() => undefined);
    try {
      // Liveness wait with a named deadline: the body reports from inside its container.
      const deadline = Date.now() + 120_000;
      while ((await p.report("started")).length < 1) {
        if (exited) assert.fail(new TextDecoder().decode((await output).stderr));
        assert.ok(Date.now() < deadline, "the Attempt did not start within 120 s");
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.equal((await ownedByPid(p, child.pid)).length, 1);
      child.kill("SIGINT");
      const r = await output;
      const stdout = new TextDecoder().decode(r.stdout);
      p.track(runIdsOf(stdout));
      assert.equal(r.code, 130, new TextDecoder().decode(r.stderr));
      assert.deepEqual(await ownedByPid(p, child.pid), []);
      const end = stdout.split("\n").filter((l) => l.includes('"attempt_end"'));
      assert.equal(end.length, 1, stdout);
      assert.match(end[0]!, /"verdict":"interrupted"/);
    } finally {
      try {
        child.kill("SIGKILL");
      } catch {
        // already exited
      }
      await output.catch(() => undefined);
    }
  },
});

/** Containers (any state) stamped with `pid`. */
async function ownedByPid(p: { docker: ReturnType<typeof dockerClient> }, pid: number) {
  const found = await p.docker.listContainers({
    all: true,
    filters: { label: [`niceeval.pid=${pid}`, "niceeval.managed=true"] },
  });
  return found.map((c) => c.Id);
}
