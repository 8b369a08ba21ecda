/** A fresh local sandbox end to end: fixtures, prepare, baseline, cleanup (sandboxes.md §3.1, rule 10). */
import assert from "node:assert/strict";
import { join } from "node:path";
import { realClock } from "../../src/_shared/clock.ts";
import {
  CleanupStack,
  createLocalProvider,
  localSandbox,
  openFreshSandbox,
  sandboxLayer,
} from "../../src/sandbox/mod.ts";
import { createSeededRandom } from "../_fakes/random.ts";
import { testOwner } from "./_local.ts";

async function tree(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    const rel = prefix + e.name;
    if (e.isSymlink) out.push(`${rel} -> ${await Deno.readLink(join(dir, e.name))}`);
    else if (e.isDirectory) out.push(`${rel}/`, ...await tree(join(dir, e.name), rel + "/"));
    else out.push(`${rel}: ${await Deno.readTextFile(join(dir, e.name))}`);
  }
  return out.sort();
}

Deno.test("openFreshSandbox() on local copies fixtures in order into a private workdir and cleans up", async () => {
  const host = await Deno.realPath(await Deno.makeTempDir({ prefix: "niceeval-attempt-test-" }));
  try {
    const expFixture = join(host, "exp");
    const evalFixture = join(host, "eval");
    await Deno.mkdir(join(expFixture, ".niceeval"), { recursive: true });
    await Deno.writeTextFile(join(expFixture, "a.txt"), "from experiment");
    await Deno.writeTextFile(join(expFixture, "shared.txt"), "experiment");
    await Deno.writeTextFile(join(expFixture, ".niceeval", "state"), "never copied");
    await Deno.mkdir(join(evalFixture, "empty"), { recursive: true });
    await Deno.writeTextFile(join(evalFixture, "shared.txt"), "eval");
    await Deno.symlink("a.txt", join(evalFixture, "link.txt"));
    const tmpDir = join(host, "roots");
    await Deno.mkdir(tmpDir);
    const provider = createLocalProvider({
      hostEnv: Deno.env.toObject(),
      clock: realClock,
      tmpDir,
    });
    const { plan } = await provider.plan({}, {
      projectRoot: host,
      signal: new AbortController().signal,
    });
    const cleanup = new CleanupStack({ clock: realClock });
    const template = localSandbox().prepare("echo prepared > prepared.txt");
    const result = await openFreshSandbox({
      provider,
      plan,
      owner: testOwner(),
      lifetimeMs: Infinity,
      clock: realClock,
      random: createSeededRandom(9),
      signal: new AbortController().signal,
      cleanup,
      layers: [{ layer: template, owner: "exp" }, { layer: sandboxLayer(), owner: "eval" }],
      fixtures: [expFixture, evalFixture],
      hostDir: host,
      startDeadline: () => undefined,
      onEvidence: () => {},
      onDiagnostic: () => {},
    });
    assert.ok(result.ok, result.ok ? "" : result.failure.message);
    assert.ok(!result.sandbox.workdir.startsWith(expFixture));
    assert.deepEqual(await tree(result.sandbox.workdir), [
      "a.txt: from experiment",
      "empty/",
      "link.txt -> a.txt",
      "prepared.txt: prepared\n",
      "shared.txt: eval",
    ]);
    assert.match(result.baseline ?? "", /^[0-9a-f]{40}$/);
    assert.equal(await result.sandbox.readText("link.txt"), "from experiment");
    assert.deepEqual(await cleanup.unwind(), []);
    assert.deepEqual(await Array.fromAsync(Deno.readDir(tmpDir)), []);
    assert.deepEqual(await tree(expFixture), [
      ".niceeval/",
      ".niceeval/state: never copied",
      "a.txt: from experiment",
      "shared.txt: experiment",
    ]);
  } finally {
    await Deno.remove(host, { recursive: true });
  }
});
