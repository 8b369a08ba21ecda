/**
 * Rules 66–71 with a real daemon: a Dockerfile whose RUN fails with a pnpm lockfile error errors
 * the 4 Attempts that need it; plain output, FAILURES and `show --run` each report the key once,
 * with its remediation and the affected Attempts (cli.md OUT-H9, OUT-H14, CMD-13).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { dockerAvailability } from "../_helpers/docker.ts";
import { dockerProject } from "../sandbox/_docker.ts";

const docker = await dockerAvailability();

const EXPERIMENT = `import { defineExperiment } from "niceeval";
import { dockerSandbox } from "niceeval/sandbox";
import { shellAgent } from "../support/report.ts";

export default defineExperiment({
  agent: shellAgent,
  sandbox: dockerSandbox({ dockerfile: "../broken/Dockerfile", context: "../broken", user: "sandbox" }),
  evals: ["basic"],
  attempts: 2,
});
`;

// The code is assembled by the command: only the build log holds it.
const DOCKERFILE = `FROM niceeval-test/busybox-git:local
RUN printf ' ERR_%s  Cannot install with "frozen-lockfile"\\n' PNPM_OUTDATED_LOCKFILE && exit 1
`;

const FIX = "fix: Run `pnpm install` locally and commit the updated lockfile.";

Deno.test({
  name:
    "rule 71 niceeval exp: a failed build is reported once per build key with its fix and the affected Attempts exits 1",
  ignore: !docker.ok,
  fn: async () => {
    await using p = await dockerProject();
    await Deno.writeTextFile(join(p.project.dir, "experiments", "broken.ts"), EXPERIMENT);
    await Deno.mkdir(join(p.project.dir, "broken"));
    await Deno.writeTextFile(join(p.project.dir, "broken", "Dockerfile"), DOCKERFILE);
    const r = await p.project.run(["exp", "broken"], { env: p.env() });
    const runIds = [...r.stdout.matchAll(/niceeval show --run (\S+)/g)].map((m) => m[1]!);
    p.track(runIds);
    assert.equal(r.code, 1, r.stderr + r.stdout);
    const lines = r.stdout.split("\n");
    const errors = lines.filter((l) => l.startsWith("✗ sandbox-build-failed · broken: "));
    assert.equal(errors.length, 1, r.stdout);
    assert.match(errors[0]!, /\(4 attempts errored\)$/);
    assert.equal(lines.filter((l) => l.trim() === FIX).length, 2, r.stdout); // stream + FAILURES
    const head = lines.findIndex((l) =>
      /^ {2}✗ broken {2}build [0-9a-f]{16} · 4 attempts$/.test(l)
    );
    assert.ok(head > 0, r.stdout);
    const affected = lines.slice(head).find((l) => l.startsWith("    affected: "))!;
    assert.deepEqual(
      affected.slice("    affected: ".length).split(", ").sort(),
      ["basic/edit#0", "basic/edit#1", "basic/upload#0", "basic/upload#1"],
    );
    assert.equal(runIds.length, 1);
    const show = await p.project.run(["show", "--run", runIds[0]!], { env: p.env() });
    assert.equal(show.code, 0, show.stderr);
    const shown = show.stdout.split("\n");
    const section = shown.slice(shown.indexOf("Build failures"));
    assert.match(section[1] ?? "", /^ {2}✗ build [0-9a-f]{16} · 4 attempts$/, show.stdout);
    assert.ok(section.some((l) => /^ {4}log: ERR_PNPM_OUTDATED_LOCKFILE/.test(l)), show.stdout);
    assert.ok(section.includes(`    ${FIX}`), show.stdout);
  },
});
