/** Plan-time resolution of a pair's physical sandbox (sandboxes.md rules 2, 7, 9, 10, 21, 72). */
import assert from "node:assert/strict";
import { join } from "node:path";
import { realClock } from "../../src/_shared/clock.ts";
import {
  createPhysicalResolver,
  createProviderRegistry,
  defineSandbox,
  localSandbox,
  type PhysicalInput,
  resolvePhysicalPairs,
  SandboxConfigError,
  type SandboxHandle,
  sandboxLayer,
} from "../../src/sandbox/mod.ts";

async function project(fn: (root: string) => Promise<void>): Promise<void> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "niceeval-physical-" }));
  try {
    for (const dir of ["exp", "eval"]) await Deno.mkdir(join(root, dir));
    await fn(root);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

function resolver(root: string) {
  const registry = createProviderRegistry({ hostEnv: {}, clock: realClock });
  const inner = createPhysicalResolver({
    registry,
    projectRoot: root,
    signal: new AbortController().signal,
  });
  return { resolve: (input: PhysicalInput) => inner(input) };
}

const input = (layers: PhysicalInput["layers"], extra: Partial<PhysicalInput> = {}) => ({
  layers,
  reuse: "fresh" as const,
  evalId: "e",
  groupId: null,
  agentIdentity: "agent",
  ...extra,
});

Deno.test("createPhysicalResolver() plans local with its exclusive lane and copies fixtures experiment first", async () => {
  await project(async (root) => {
    // The eval carries the template, so it comes first; fixtures still copy the experiment's first.
    const template = localSandbox({ fixture: join(root, "eval"), lifetimeMs: 5000 });
    const experimentLayer = sandboxLayer({ fixture: join(root, "exp") });
    const found = await resolver(root).resolve(input([
      { layer: template, owner: "e", side: "eval" },
      { layer: experimentLayer, owner: "x", side: "experiment" },
    ]));
    assert.deepEqual(
      [found.provider, found.laneKey, found.exclusive, found.defaultConcurrency],
      ["local", "local", true, 1],
    );
    assert.deepEqual(found.fixtures, [join(root, "exp"), join(root, "eval")]);
    assert.equal(found.lifetimeMs, 5000);
    assert.equal(found.poolKey, null);
    assert.match(found.identity, /^[0-9a-f]{64}$/);
  });
});

Deno.test("createPhysicalResolver() rejects a fixture outside the project root (rule 7)", async () => {
  await project(async (root) => {
    const outside = await Deno.makeTempDir({ prefix: "niceeval-outside-" });
    try {
      const template = localSandbox({ fixture: outside });
      await assert.rejects(
        () => resolver(root).resolve(input([{ layer: template, owner: "x", side: "experiment" }])),
        (e: unknown) =>
          e instanceof SandboxConfigError && /outside the project root/.test(e.message),
      );
    } finally {
      await Deno.remove(outside, { recursive: true });
    }
  });
});

Deno.test("createPhysicalResolver() keys pools by identity, hooks and scope (rule 72)", async () => {
  await project(async (root) => {
    const { resolve } = resolver(root);
    const create = (): Promise<SandboxHandle> => Promise.reject(new Error("never created"));
    const template = defineSandbox({ name: "vm", create, recommendedConcurrency: 3 });
    const shared = await resolve(
      input([{ layer: template, owner: "x", side: "experiment" }], { reuse: "pool" }),
    );
    assert.deepEqual([shared.provider, shared.laneKey, shared.defaultConcurrency], ["vm", null, 3]);
    const again = await resolve(
      input([{ layer: template, owner: "x", side: "experiment" }], { reuse: "pool", evalId: "f" }),
    );
    assert.equal(again.poolKey, shared.poolKey, "one shared pool for evals without hooks");
    const hooked = sandboxLayer().setup(() => {});
    const own = await resolve(input([
      { layer: template, owner: "x", side: "experiment" },
      { layer: hooked, owner: "e", side: "eval" },
    ], { reuse: "pool" }));
    assert.equal(own.evalHooks, true);
    assert.notEqual(own.poolKey, shared.poolKey);
    const group = await resolve(
      input([{ layer: template, owner: "x", side: "experiment" }], {
        reuse: "group",
        groupId: "g",
      }),
    );
    assert.notEqual(group.poolKey, shared.poolKey);
    const exclusive = defineSandbox({ name: "one", create, exclusive: true });
    const lane = await resolve(input([{ layer: exclusive, owner: "x", side: "experiment" }]));
    assert.deepEqual([lane.laneKey, lane.defaultConcurrency], ["custom:one", 1]);
  });
});

Deno.test("resolvePhysicalPairs() keys sandboxes by pair and turns sandbox errors into one problem per message", async () => {
  await project(async (root) => {
    const outside = await Deno.makeTempDir({ prefix: "niceeval-outside-" });
    try {
      const pair = (key: string, file: string, layer: ReturnType<typeof localSandbox>) => ({
        key,
        file,
        layers: [{ layer, owner: "x", side: "experiment" as const }],
      });
      const bad = localSandbox({ fixture: outside });
      const found = await resolvePhysicalPairs([
        pair("x/e", "experiments/x.ts", localSandbox({})),
        pair("y/e", "experiments/y.ts", bad),
        pair("y/f", "experiments/y.ts", bad),
      ], {
        resolve: resolver(root).resolve,
        inputOf: (p) => input(p.layers),
        fileOf: (p) => p.file,
      });
      assert.deepEqual([...found.sandboxes.keys()], ["x/e"]);
      assert.equal(found.sandboxes.get("x/e")!.provider, "local");
      assert.equal(found.sandboxes.get("x/e")!.file, "experiments/x.ts", "the pair is kept");
      assert.equal(found.problems.length, 1);
      assert.match(found.problems[0]!.message, /^experiments\/y\.ts: .*outside the project root/);
      assert.equal(
        found.problems[0]!.hint,
        "fix the sandbox options of the experiment, eval or eval group",
      );
    } finally {
      await Deno.remove(outside, { recursive: true });
    }
  });
});

Deno.test("resolvePhysicalPairs() rethrows an error that is not a sandbox error", async () => {
  await assert.rejects(
    resolvePhysicalPairs([{ key: "k" }], {
      resolve: () => Promise.reject(new Error("bug")),
      inputOf: () => input([]),
      fileOf: () => "experiments/x.ts",
    }),
    /bug/,
  );
});
