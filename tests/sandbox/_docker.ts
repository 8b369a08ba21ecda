/**
 * A real `docker` provider for the docker tests (sandboxes.md §9.3): every container it creates
 * carries a run id unique to the test bed, and disposing the bed removes whatever still carries it.
 */
import { join } from "node:path";
import { type CliResult, ndjson, type TempProject, tempProject } from "../_helpers/cli.ts";
import { realClock } from "../../src/_shared/clock.ts";
import type { OwnerStamp, SandboxProvider } from "../../src/sandbox/mod.ts";
import {
  createDockerProvider,
  type DockerHandle,
  type NetworkGate,
} from "../../src/sandbox/providers/docker.ts";
import type { DockerPlan, DockerSpec } from "../../src/sandbox/providers/docker.ts";
import { DOCKER_LABELS, dockerClient } from "../../src/sandbox/providers/docker/client.ts";

/** The dockerode client type, named without importing the package outside the sandbox domain. */
type Docker = ReturnType<typeof dockerClient>;
import { stopContainer } from "../../src/sandbox/providers/docker/stop.ts";

/** busybox plus a `sandbox` user (uid 1000). */
export const BUSYBOX_IMAGE = "niceeval-test/busybox:local";
/** The same plus git. */
export const BUSYBOX_GIT_IMAGE = "niceeval-test/busybox-git:local";

/** A provider plus the cleanup of everything it made. */
export interface DockerTestBed extends AsyncDisposable {
  readonly docker: Docker;
  readonly provider: SandboxProvider<DockerSpec, DockerPlan>;
  /** The run id stamped on every container of this bed. */
  readonly runId: string;
  create(
    spec?: Partial<DockerSpec>,
    o?: {
      lifetimeMs?: number;
      owner?: Partial<OwnerStamp>;
      signal?: AbortSignal;
      progress?: (message: string) => void;
    },
  ): Promise<DockerHandle>;
  /** Ids of the containers (any state) that carry this bed's run id. */
  containers(): Promise<string[]>;
}

/** The owner stamp of this test process with `runId`. */
export function dockerTestOwner(runId: string, extra: Partial<OwnerStamp> = {}): OwnerStamp {
  return {
    host: Deno.hostname(),
    pid: Deno.pid,
    processStart: "unknown",
    runId,
    provisionToken: crypto.randomUUID().replaceAll("-", ""),
    ...extra,
  };
}

/**
 * Creates a test bed; use with `await using`. `o.docker` replaces the client the provider talks
 * through (a wrapper that counts calls); `o.networkGate` is the provider's own-network gate.
 */
export function dockerTestBed(
  o: { docker?: Docker; networkGate?: NetworkGate } = {},
): DockerTestBed {
  const hostEnv = Deno.env.toObject();
  const docker = o.docker ?? dockerClient(hostEnv);
  const provider = createDockerProvider({
    hostEnv,
    clock: realClock,
    docker,
    networkGate: o.networkGate,
  });
  const runId = `docker-test-${crypto.randomUUID().slice(0, 8)}`;
  const containers = () => containersOfRun(docker, runId);
  return {
    docker,
    provider,
    runId,
    containers,
    async create(spec = {}, o = {}) {
      const { plan } = await provider.plan(
        { image: BUSYBOX_IMAGE, workdir: "/workspace", network: "none", ...spec },
        { projectRoot: Deno.cwd(), signal: new AbortController().signal },
      );
      return await provider.create(plan, {
        owner: dockerTestOwner(runId, o.owner),
        lifetimeMs: o.lifetimeMs ?? 600_000,
        signal: o.signal ?? new AbortController().signal,
        progress: o.progress ?? (() => {}),
        diagnostic: () => {},
      }) as DockerHandle;
    },
    async [Symbol.asyncDispose]() {
      await removeRun(docker, runId);
    },
  };
}

/** Ids of the containers that carry `runId`. */
export async function containersOfRun(docker: Docker, runId: string): Promise<string[]> {
  const found = await docker.listContainers({
    all: true,
    filters: { label: [`${DOCKER_LABELS.runId}=${runId}`] },
  });
  return found.map((c) => c.Id).sort();
}

/** Names of the networks (own networks of sandboxes) that carry `runId`. */
export async function networksOfRun(docker: Docker, runId: string): Promise<string[]> {
  const found = await docker.listNetworks({
    filters: { label: [`${DOCKER_LABELS.runId}=${runId}`] },
  });
  return found.map((n) => n.Name).sort();
}

/** Removes every container and network that carries `runId`. */
export async function removeRun(docker: Docker, runId: string): Promise<void> {
  for (const id of await containersOfRun(docker, runId)) await stopContainer(docker, id);
  for (const name of await networksOfRun(docker, runId)) {
    await docker.getNetwork(name).remove().catch(() => undefined);
  }
}

/** Text of bytes. */
export function text(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes);
}

/** A copy of `tests/fixtures/docker_project` with its report directory and container cleanup. */
export interface DockerProject extends AsyncDisposable {
  readonly project: TempProject;
  readonly reportDir: string;
  readonly docker: Docker;
  /** The environment of a CLI run on the project; `extra` is added. */
  env(extra?: Record<string, string>): Record<string, string>;
  /** Runs `niceeval exp <experiment> --json`; remembers the run ids for cleanup. */
  exp(
    experiment: string,
    extra?: Record<string, string>,
  ): Promise<CliResult & { runIds: string[] }>;
  /** Lines of a report the fixture wrote, `[]` when it wrote none. */
  report(name: string): Promise<string[]>;
  /** Remembers run ids of a run started elsewhere, for cleanup. */
  track(runIds: readonly string[]): void;
}

/** The run ids that a `--json` stream names. */
export function runIdsOf(stdout: string): string[] {
  const ids = ndjson(stdout).map((e) => e.runId).filter((id) => typeof id === "string");
  return [...new Set(ids as string[])];
}

/** `"<evalId> <verdict>"` of every `attempt_end`, sorted. */
export function verdictsOf(stdout: string): string[] {
  return ndjson(stdout).filter((e) => e.type === "attempt_end")
    .map((e) => `${e.evalId} ${e.verdict}`).sort();
}

/** Copies the docker fixture project; use with `await using`. */
export async function dockerProject(): Promise<DockerProject> {
  const project = await tempProject("docker_project");
  const reportDir = await Deno.makeTempDir({ prefix: "niceeval-docker-report-" });
  const hostEnv = Deno.env.toObject();
  const docker = dockerClient(hostEnv);
  const runIds = new Set<string>();
  const env = (extra: Record<string, string> = {}) => ({
    DOCKER_HOST: hostEnv.DOCKER_HOST || "unix:///var/run/docker.sock",
    DOCKER_REPORT_DIR: reportDir,
    CI: "1",
    ...extra,
  });
  return {
    project,
    reportDir,
    docker,
    env,
    track: (ids) => ids.forEach((id) => runIds.add(id)),
    exp: async (experiment, extra) => {
      const r = await project.run(["exp", experiment, "--json"], { env: env(extra) });
      const ids = runIdsOf(r.stdout);
      ids.forEach((id) => runIds.add(id));
      return { ...r, runIds: ids };
    },
    report: async (name) => {
      const text = await Deno.readTextFile(join(reportDir, name)).catch(() => "");
      return text.split("\n").filter((l) => l !== "");
    },
    async [Symbol.asyncDispose]() {
      try {
        for (const id of runIds) await removeRun(docker, id);
      } finally {
        await Deno.remove(reportDir, { recursive: true });
        await project[Symbol.asyncDispose]();
      }
    },
  };
}
