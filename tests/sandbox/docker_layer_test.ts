/**
 * `dockerSandbox()` and the docker provider's plan without a daemon (sandboxes.md rules 6–7, 21,
 * 113): option validation, defaults, plan identity and the pull key, the create-error classes, and
 * the lazy loading of dockerode.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { realClock } from "../../src/_shared/clock.ts";
import { dockerSandbox, layerState, SandboxConfigError } from "../../src/sandbox/mod.ts";
import {
  classifyDockerCreateError,
  createDockerProvider,
  type DockerSpec,
} from "../../src/sandbox/providers/docker.ts";
import { buildImageTag as buildTag } from "../../src/sandbox/providers/docker/build.ts";
import { dockerLabels, ownerFromLabels } from "../../src/sandbox/providers/docker/client.ts";

const signal = new AbortController().signal;

function specOf(layer: ReturnType<typeof dockerSandbox>): DockerSpec {
  return layerState(layer).spec as unknown as DockerSpec;
}

Deno.test("dockerSandbox() fills the defaults of §1.2: workdir /workspace, network none, pull missing", () => {
  const layer = dockerSandbox({ image: "node:22" });
  assert.equal(layer.provider, "docker");
  assert.equal(layer.kind, "template");
  assert.deepEqual(specOf(layer), {
    workdir: "/workspace",
    network: "none",
    image: "node:22",
    pull: "missing",
  });
});

Deno.test("dockerSandbox() throws SandboxConfigError naming the invalid option", () => {
  const cases: [unknown, string][] = [
    [{}, "image"],
    [{ image: "a", dockerfile: "Dockerfile", context: "." }, "dockerfile"],
    [{ image: "a b" }, "image"],
    [{ image: "a", pull: "sometimes" }, "pull"],
    [{ image: "a", workdir: "relative" }, "workdir"],
    [{ image: "a", network: "host" }, "network"],
    [{ image: "a", cpus: 0 }, "cpus"],
    [{ image: "a", memoryMb: 1.5 }, "memoryMb"],
    [{ image: "a", pidsLimit: -1 }, "pidsLimit"],
    [{ image: "a", user: "" }, "user"],
    [{ image: "a", buildArgs: { A: "1" } }, "buildArgs"],
    [{ dockerfile: "Dockerfile", context: ".", pull: "always" }, "pull"],
    [{ dockerfile: "Dockerfile", context: ".", buildArgs: { A: 1 } }, "buildArgs.A"],
    [{ image: "a", imagee: "b" }, "imagee"],
  ];
  for (const [options, option] of cases) {
    assert.throws(
      () => dockerSandbox(options as never),
      (e: unknown) => e instanceof SandboxConfigError && e.option === option,
      JSON.stringify(options),
    );
  }
});

Deno.test("dockerSandbox() resolves dockerfile and context against the declaring file", () => {
  const layer = dockerSandbox({
    dockerfile: "img/Dockerfile",
    context: "img",
    buildArgs: { B: "2", A: "1" },
  });
  const here = new URL(".", import.meta.url).pathname;
  assert.deepEqual(specOf(layer).build, {
    dockerfile: join(here, "img/Dockerfile"),
    context: join(here, "img"),
    buildArgs: { A: "1", B: "2" },
  });
});

Deno.test("docker plan() is stable, changes with behaviour and not with pull, and keys the pull", async () => {
  const provider = createDockerProvider({ hostEnv: {}, clock: realClock });
  const plan = (o: Parameters<typeof dockerSandbox>[0]) =>
    provider.plan(specOf(dockerSandbox(o)), { projectRoot: Deno.cwd(), signal });
  const a = await plan({ image: "x:1", user: "sandbox" });
  const b = await plan({ image: "x:1", user: "sandbox" });
  assert.equal(a.identity, b.identity);
  assert.match(a.identity, /^[0-9a-f]{64}$/);
  assert.deepEqual(a.buildKeys, b.buildKeys);
  assert.equal(a.buildKeys.length, 1);
  assert.deepEqual(a.plan, {
    image: "x:1",
    pull: "missing",
    user: "sandbox",
    workdir: "/workspace",
    network: "none",
  });
  assert.equal(
    (await plan({ image: "x:1", user: "sandbox", pull: "always" })).identity,
    a.identity,
  );
  for (
    const other of [{ image: "x:2" }, { image: "x:1", network: "bridge" as const }, {
      image: "x:1",
      memoryMb: 512,
    }]
  ) {
    assert.notEqual((await plan({ user: "sandbox", ...other })).identity, a.identity);
  }
});

Deno.test("docker plan() of a Dockerfile outside the project root fails with sandbox-config-invalid", async () => {
  const provider = createDockerProvider({ hostEnv: {}, clock: realClock });
  const spec = specOf(dockerSandbox({ dockerfile: "/etc/hostname", context: "/etc" }));
  await assert.rejects(
    provider.plan(spec, { projectRoot: Deno.cwd(), signal }),
    (e: unknown) => e instanceof SandboxConfigError && e.option === "dockerfile",
  );
  assert.equal(buildTag("a".repeat(64)), `niceeval-build:${"a".repeat(32)}`);
});

Deno.test("classifyDockerCreateError() follows rule 113", () => {
  const status = (statusCode: number, message = "x") =>
    Object.assign(new Error(message), { statusCode });
  assert.equal(classifyDockerCreateError(status(404, "No such image")), "fatal");
  assert.equal(classifyDockerCreateError(status(400)), "fatal");
  assert.equal(classifyDockerCreateError(status(429)), "rate_limit");
  assert.equal(classifyDockerCreateError(status(500)), "ambiguous");
  assert.equal(
    classifyDockerCreateError(
      status(
        500,
        "could not find an available, non-overlapping IPv4 address pool among the defaults to assign to the network",
      ),
    ),
    "rejected",
  );
  assert.equal(
    classifyDockerCreateError(Object.assign(new Error("connect"), { code: "ENOENT" })),
    "rejected",
  );
  assert.equal(
    classifyDockerCreateError(Object.assign(new Error("connect"), { code: "ECONNREFUSED" })),
    "rejected",
  );
  assert.equal(
    classifyDockerCreateError(Object.assign(new Error("reset"), { code: "ECONNRESET" })),
    "ambiguous",
  );
  assert.equal(classifyDockerCreateError(new Error("anything else")), "fatal");
});

Deno.test("dockerLabels() and ownerFromLabels() round-trip an owner stamp", () => {
  const owner = {
    host: "h",
    pid: 42,
    processStart: "unknown",
    runId: "r",
    provisionToken: "t".repeat(32),
  };
  const labels = dockerLabels(owner);
  assert.equal(labels["niceeval.managed"], "true");
  assert.deepEqual(ownerFromLabels(labels), owner);
});

/** Counts dockerode's modules in the CommonJS cache of a child that imports `module`. */
async function dockerodeModulesAfterImport(module: string): Promise<number> {
  const code = `
    import { createRequire } from "node:module";
    await import(${JSON.stringify("MODULE")});
    const cache = createRequire(import.meta.url).cache;
    console.log(Object.keys(cache).filter((k) => k.includes("dockerode")).length);
  `.replace("MODULE", new URL(module, import.meta.url).href);
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--quiet", "--frozen", code],
    cwd: new URL("../../", import.meta.url).pathname,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr).slice(-2000));
  return Number(new TextDecoder().decode(out.stdout).trim());
}

Deno.test("importing the sandbox domain loads no dockerode module; importing the provider does", async () => {
  assert.equal(await dockerodeModulesAfterImport("../../src/sandbox/mod.ts"), 0);
  assert.ok(await dockerodeModulesAfterImport("../../src/sandbox/providers/docker.ts") > 0);
});
