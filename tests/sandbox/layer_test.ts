/** Layer factories, layers and the provider registry (sandboxes.md §1.2–§1.3, rules 6–9, 24). */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { isBranded } from "../../src/_shared/brand.ts";
import { realClock } from "../../src/_shared/clock.ts";
import { defineEval } from "../../src/discovery/mod.ts";
import {
  checkLayerPaths,
  createProviderRegistry,
  defineSandbox,
  layerHookIdentities,
  layerState,
  localSandbox,
  type SandboxConfigError,
  type SandboxHandle,
  sandboxLayer,
} from "../../src/sandbox/mod.ts";
import * as publicSandbox from "../../src/public/sandbox.ts";

const HERE = dirname(fileURLToPath(import.meta.url));

function configError(fn: () => unknown): SandboxConfigError {
  try {
    fn();
  } catch (error) {
    assert.equal((error as Error).name, "SandboxConfigError");
    return error as SandboxConfigError;
  }
  assert.fail("expected a SandboxConfigError");
}

Deno.test("localSandbox() returns a frozen, branded template layer that discovery accepts", () => {
  const layer = localSandbox({ passEnv: ["OPENAI_API_KEY"], lifetimeMs: 60_000 });
  assert.ok(Object.isFrozen(layer));
  assert.ok(isBranded(layer, "sandbox-layer"));
  assert.equal(layer.provider, "local");
  assert.equal(layer.kind, "template");
  assert.deepEqual(layerState(layer).spec, { passEnv: ["OPENAI_API_KEY"] });
  assert.equal(layerState(layer).lifetimeMs, 60_000);
  const def = defineEval({ sandbox: layer, test() {} });
  assert.equal(def.sandbox, layer);
});

Deno.test("layer methods return new layers and leave the receiver unchanged", () => {
  const base = sandboxLayer();
  const setup = () => {};
  const withSetup = base.setup(setup);
  const withPrepare = withSetup.prepare("npm ci", ["make", "all"]);
  assert.notEqual(withSetup, base);
  assert.equal(layerState(base).hooks.length, 0);
  assert.equal(layerState(withSetup).hooks.length, 1);
  assert.equal(layerState(withSetup).prepare.length, 0);
  assert.deepEqual(layerState(withPrepare).prepare, ["npm ci", ["make", "all"]]);
  assert.equal(base.provider, undefined);
  assert.equal(base.kind, "layer");
  assert.ok(isBranded(withPrepare, "sandbox-layer"));
});

Deno.test("layer factories throw SandboxConfigError naming the invalid option", () => {
  const cases: [() => unknown, string][] = [
    [() => localSandbox({ pasEnv: [] } as never), "pasEnv"],
    [() => localSandbox({ passEnv: ["BAD NAME"] }), "passEnv[0]"],
    [() => localSandbox({ lifetimeMs: 0 }), "lifetimeMs"],
    [() => localSandbox({ fixture: "" }), "fixture"],
    [() => sandboxLayer({ fixture: "x", lifetimeMs: 5 } as never), "lifetimeMs"],
    [() => defineSandbox({ name: "Bad", create: () => Promise.reject() }), "name"],
    [() => defineSandbox({ name: "docker", create: () => Promise.reject() }), "name"],
    [() => defineSandbox({ name: "vm", create: 5 } as never), "create"],
    [
      () => defineSandbox({ name: "vm", create: () => Promise.reject(), exclusive: 1 } as never),
      "exclusive",
    ],
    [() => sandboxLayer().setup("x" as never), "setup"],
    [() => sandboxLayer().prepare([] as never), "prepare[0]"],
    [() => sandboxLayer().prepare(" "), "prepare[0]"],
  ];
  for (const [fn, option] of cases) {
    const error = configError(fn);
    assert.equal(error.code, "sandbox-config-invalid");
    assert.equal(error.option, option, error.message);
  }
  assert.match(configError(cases[0]![0]).message, /did you mean "passEnv"/);
});

Deno.test("fixture resolves against the declaring file's directory, found from the call stack", () => {
  const layer = localSandbox({ fixture: "../fixtures/x" });
  const state = layerState(layer);
  assert.equal(state.declaringFile, import.meta.url);
  assert.equal(state.hostDir, HERE);
  assert.deepEqual(state.fixture, {
    declared: "../fixtures/x",
    path: join(HERE, "..", "fixtures", "x"),
  });
});

Deno.test("checkLayerPaths() accepts a directory inside the root and rejects the rest", async () => {
  const root = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(root, "project", "fixture"), { recursive: true });
    await Deno.writeTextFile(join(root, "project", "file.txt"), "");
    await Deno.mkdir(join(root, "elsewhere"));
    const project = join(root, "project");
    await checkLayerPaths(localSandbox({ fixture: join(project, "fixture") }), project);
    await checkLayerPaths(sandboxLayer(), project);
    for (const fixture of ["missing", "file.txt", "../elsewhere"]) {
      const error = await checkLayerPaths(
        localSandbox({ fixture: join(project, fixture) }),
        project,
      )
        .then(() => undefined, (e) => e);
      assert.equal(error?.code, "sandbox-config-invalid", fixture);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("layerHookIdentities() are owner#index:sha256 of each hook's source", () => {
  const layer = sandboxLayer().setup(() => {}).teardown(async () => {});
  const ids = layerHookIdentities(layer, "exp/a");
  assert.equal(ids.length, 2);
  assert.match(ids[0]!, /^exp\/a#0:[0-9a-f]{64}$/);
  assert.match(ids[1]!, /^exp\/a#1:[0-9a-f]{64}$/);
  assert.deepEqual(
    layerHookIdentities(sandboxLayer().setup(() => {}).teardown(async () => {}), "exp/a"),
    ids,
  );
  assert.notDeepEqual(layerHookIdentities(sandboxLayer().setup(() => {}), "exp/b"), [ids[0]]);
});

Deno.test("defineSandbox() providers get rule 24 scheduling and classify as fatal by default", async () => {
  const registry = createProviderRegistry({ hostEnv: {}, clock: realClock });
  const create = () => Promise.resolve({} as SandboxHandle);
  const shared = await registry.forLayer(defineSandbox({ name: "vm", create }));
  assert.deepEqual(shared.provider.scheduling, {
    recommendedConcurrency: 5,
    admission: "shared",
    laneKey: "custom:vm",
  });
  assert.equal(shared.provider.classifyCreateError(new Error("x")), "fatal");
  assert.equal(shared.provider.findOwned, undefined);
  const exclusive = await registry.forLayer(
    defineSandbox({ name: "vm2", create, exclusive: true, recommendedConcurrency: 9 }),
  );
  assert.deepEqual(exclusive.provider.scheduling, {
    recommendedConcurrency: 1,
    admission: "exclusive",
    laneKey: "custom:vm2",
  });
  const classified = await registry.forLayer(
    defineSandbox({ name: "vm3", create, classifyCreateError: () => "rate_limit" }),
  );
  assert.equal(classified.provider.classifyCreateError(new Error("x")), "rate_limit");
});

Deno.test("createProviderRegistry() answers an unknown name with the registered names", async () => {
  const registry = createProviderRegistry({ hostEnv: {}, clock: realClock });
  assert.deepEqual(registry.names(), ["docker", "e2b", "local", "vercel"]);
  const local = await registry.get("local");
  assert.deepEqual(local.scheduling, {
    recommendedConcurrency: 1,
    admission: "exclusive",
    laneKey: "local",
  });
  assert.equal(await registry.get("local"), local);
  const error = await registry.get("locl").then(() => undefined, (e) => e);
  assert.equal(error?.code, "sandbox-config-invalid");
  assert.match(
    error.message,
    /did you mean "local"\?.*registered providers are "docker", "e2b", "local", "vercel"/,
  );
  await assert.rejects(() => registry.forLayer(sandboxLayer()), /no template/);
});

Deno.test("niceeval/sandbox exports the factories and the error classes of §2.5", () => {
  assert.deepEqual(Object.keys(publicSandbox).sort(), [
    "SandboxAbortedError",
    "SandboxCommandError",
    "SandboxConfigError",
    "SandboxError",
    "SandboxFileNotFoundError",
    "SandboxPathError",
    "SandboxRetiredError",
    "SandboxTimeoutError",
    "SandboxUnsupportedError",
    "defineSandbox",
    "dockerSandbox",
    "e2bSandbox",
    "localSandbox",
    "sandboxLayer",
    "vercelSandbox",
  ]);
  const error = new publicSandbox.SandboxRetiredError("gone");
  assert.deepEqual([error.name, error.code, error instanceof publicSandbox.SandboxError], [
    "SandboxRetiredError",
    "sandbox-retired",
    true,
  ]);
});
