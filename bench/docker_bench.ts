/**
 * The docker provider's cost per Attempt against a real daemon (sandboxes.md §8.2): create + one
 * exec + stop through the provider, next to a bare container run (create, start, wait, auto-remove)
 * of the same image through the Engine API; and the containers that N Attempts of a reuse
 * Experiment create (target: 1). Reports one skip line when no daemon answers. Quick mode: one
 * run of each, 2 reuse Attempts.
 */
import { join } from "node:path";
import { realClock } from "../src/_shared/clock.ts";
import { createDockerProvider } from "../src/sandbox/providers/docker.ts";
import { DOCKER_LABELS, dockerClient } from "../src/sandbox/providers/docker/client.ts";
import { stopContainer } from "../src/sandbox/providers/docker/stop.ts";
import { dockerAvailability } from "../tests/_helpers/docker.ts";
import { type Benchmark, type BenchOptions, type Figures, spread } from "./_harness.ts";

const IMAGE = "niceeval-test/busybox-git:local";
const REUSE_ATTEMPTS = 6;
const QUICK_REUSE_ATTEMPTS = 2;
const FULL_REPEATS = 10;
const REPO = new URL("../", import.meta.url).pathname;

const hostEnv = Deno.env.toObject();
const docker = dockerClient(hostEnv);
const provider = createDockerProvider({ hostEnv, clock: realClock, docker });
const signal = new AbortController().signal;
const runId = `bench-${crypto.randomUUID().slice(0, 8)}`;

/** One fresh sandbox through the provider: create, one exec, stop. */
async function providerAttempt(): Promise<void> {
  const { plan } = await provider.plan(
    { image: IMAGE, workdir: "/workspace", network: "none", user: "sandbox" },
    { projectRoot: REPO, signal },
  );
  const handle = await provider.create(plan, {
    owner: {
      host: Deno.hostname(),
      pid: Deno.pid,
      processStart: "unknown",
      runId,
      provisionToken: crypto.randomUUID().replaceAll("-", ""),
    },
    lifetimeMs: 600_000,
    signal,
    progress: () => {},
    diagnostic: () => {},
  });
  const r = await handle.exec({ argv: ["true"] });
  if (r.exitCode !== 0) throw new Error(`exec exited ${r.exitCode}`);
  await handle.stop();
}

/** The same image through the Engine API alone: create, start, wait for the auto-remove. */
async function bareRun(): Promise<void> {
  const container = await docker.createContainer({
    Image: IMAGE,
    Cmd: ["true"],
    Labels: { [DOCKER_LABELS.runId]: runId },
    HostConfig: { NetworkMode: "none", AutoRemove: true },
  });
  await container.start();
  await container.wait({ condition: "removed" }).catch(() => undefined);
}

async function timed(fn: () => Promise<void>, repeats: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const started = performance.now();
    await fn();
    times.push(performance.now() - started);
  }
  return times;
}

async function run({ quick }: BenchOptions): Promise<Figures> {
  const available = await dockerAvailability();
  if (!available.ok) return { tables: [], skipped: `no Docker daemon (${available.reason})` };
  try {
    const repeats = quick ? 1 : FULL_REPEATS;
    await providerAttempt(); // warm-up: the first create pays for image metadata lookups
    const viaProvider = await timed(providerAttempt, repeats);
    const bare = await timed(bareRun, repeats);
    const attempts = quick ? QUICK_REUSE_ATTEMPTS : REUSE_ATTEMPTS;
    const created = await reuseRun(attempts);
    return {
      tables: [{
        title: `Per Attempt, ms (${repeats} runs each after one warm-up)`,
        columns: ["case", "wall ms"],
        rows: [
          ["provider create + exec + stop (one fresh sandbox)", spread(viaProvider)],
          ["bare container run with auto-remove (create, start, wait)", spread(bare)],
        ],
      }],
      notes: [
        `reuse: ${attempts} Attempts through the CLI created ${created} container(s) (target 1)`,
      ],
    };
  } finally {
    await sweep();
  }
}

/** Runs a reuse Experiment of `n` Attempts in a temporary project; returns the containers made. */
async function reuseRun(n: number): Promise<number> {
  const dir = await Deno.makeTempDir({ prefix: "niceeval-bench-docker-" });
  try {
    const files: Record<string, string> = {
      "niceeval.config.ts":
        `import { defineConfig } from "niceeval";\nexport default defineConfig({ timeoutMs: 60_000 });\n`,
      "experiments/reuse.ts": [
        `import { defineExperiment } from "niceeval";`,
        `import { commandAgent } from "niceeval/adapter";`,
        `import { dockerSandbox } from "niceeval/sandbox";`,
        `export default defineExperiment({`,
        `  agent: commandAgent({ name: "sh", command: ["sh", "-c", "{{input}}"] }),`,
        `  sandbox: dockerSandbox({ image: ${JSON.stringify(IMAGE)}, user: "sandbox" }),`,
        `  sandboxReuse: true,`,
        `  maxConcurrency: 1,`,
        `});`,
        ``,
      ].join("\n"),
      "evals/touch.eval.ts": [
        `import { defineEval } from "niceeval";`,
        `export default Array.from({ length: ${n} }, (_, i) =>`,
        `  defineEval({ async test(t) { await (await t.send("touch f" + i)).succeeded().orStop(); } })`,
        `);`,
        ``,
      ].join("\n"),
    };
    for (const [path, text] of Object.entries(files)) {
      await Deno.mkdir(join(dir, path, ".."), { recursive: true });
      await Deno.writeTextFile(join(dir, path), text);
    }
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--frozen", join(REPO, "mod.ts"), "exp", "--json"],
      cwd: dir,
      env: { ...hostEnv, NICEEVAL_STATE_DIR: join(dir, ".state"), CI: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const lines = new TextDecoder().decode(out.stdout).split("\n").filter((l) => l !== "");
    const events = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    if (out.code !== 0) throw new Error(`exp exited ${out.code}: ${lines.slice(-5).join("\n")}`);
    const ids = new Set(events.map((e) => e.runId).filter((id) => typeof id === "string"));
    return await createdContainers([...ids] as string[]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Containers of the given runs that the daemon reported as created in the last hour. */
async function createdContainers(runIds: readonly string[]): Promise<number> {
  let count = 0;
  const until = Math.floor(Date.now() / 1000) + 1;
  for (const id of runIds) {
    const stream = await docker.getEvents({
      since: until - 3600,
      until,
      filters: {
        type: ["container"],
        event: ["create"],
        label: [`${DOCKER_LABELS.runId}=${id}`],
      },
    });
    const text = await new Response(stream as unknown as ReadableStream).text().catch(() => "");
    count += text.split("\n").filter((l) => l.trim() !== "").length;
  }
  return count;
}

/** Bodies stop what they create; this is a best-effort sweep of anything left by a failure. */
async function sweep(): Promise<void> {
  const left = await docker.listContainers({
    all: true,
    filters: { label: [`${DOCKER_LABELS.runId}=${runId}`] },
  }).catch(() => []);
  for (const c of left) await stopContainer(docker, c.Id).catch(() => undefined);
}

/** The docker benchmark. */
export const benchmark: Benchmark = {
  name: "docker",
  title: "Docker: cost per Attempt and reuse",
  about: "Against the daemon of `DOCKER_HOST`, image `niceeval-test/busybox-git:local` (made by " +
    "`scripts/ci/dockerd.sh start`): a fresh sandbox through the docker provider next to a bare " +
    "container run, and the containers a reuse Experiment creates for N Attempts.",
  run,
};
