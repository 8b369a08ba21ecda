/**
 * The `docker` provider (sandboxes.md §8.2): one container per physical sandbox, kept alive by a
 * `sleep <ttl>` PID 1 under an init (the TTL is the dead-man switch), stamped with the owner labels
 * of §7.1, default network `none`.
 *
 * The provider plan ({@link DockerPlan}) is what builds, pulls and doctor share:
 * - `plan.image` is always the image reference a container starts from. For `{ image }` layers it
 *   is the declared reference; for `{ dockerfile }` layers it is the build tag
 *   `niceeval-build:<buildKey[0..32)>` (rule 62).
 * - `plan.build` is present only for `{ dockerfile }` layers:
 *   `{ contextDir, dockerfile, buildArgs, target?, key }` with absolute host paths, build args as
 *   declared and the full build key. The key is computed by {@link DockerBuilds.key} and the image
 *   is built by {@link DockerBuilds.prepare}; both come from the build module
 *   (`providers/docker/build*.ts`) through {@link DockerProviderOptions.builds}.
 * - `plan.buildKeys` of `{ image }` layers hold one pull key; `prepareArtifacts` inspects the
 *   image and pulls it per `plan.pull` (rule 61).
 */
// @ts-types="@types/dockerode"
import type Docker from "dockerode";
import { canonicalJson, type Clock, sha256Hex } from "../../_shared/mod.ts";
import { classifyTransportError } from "../create.ts";
import { ProviderError, SandboxConfigError } from "../errors.ts";
import { isInside } from "../layer.ts";
import type {
  CreateContext,
  CreateErrorClass,
  OwnedInstance,
  OwnerStamp,
  SandboxProvider,
} from "../types.ts";
import {
  DOCKER_LABELS,
  dockerClient,
  dockerLabels,
  dockerStatus,
  ownerFromLabels,
  ownerLabelFilters,
} from "./docker/client.ts";
import { buildImageTag, prepareDockerImage } from "./docker/build.ts";
import { type ContainerPlan, createContainerSandbox } from "./docker/create.ts";
import { isAddressPoolExhausted, type NetworkGate } from "./docker/pools.ts";
import { stopContainer } from "./docker/stop.ts";

export { DockerHandle } from "./docker/handle.ts";
export { createNetworkGate, type NetworkGate } from "./docker/pools.ts";

/** Default lifetime of a container when the Attempt has none (rule 48). */
const DEFAULT_TTL_MS = 24 * 3_600_000;
/** The daemon's answer when no address pool is left (rule 116). */
const UNREACHABLE_REGEXP = /ECONNREFUSED|ENOENT|ENOTFOUND|EAI_AGAIN|EACCES/;

/** A Dockerfile build as a layer declares it (absolute host paths). */
export interface DockerBuildSpec {
  readonly dockerfile: string;
  readonly context: string;
  readonly buildArgs: Readonly<Record<string, string>>;
  readonly target?: string;
}

/** The `dockerSandbox()` options a layer keeps. */
export interface DockerSpec extends Omit<ContainerPlan, "image"> {
  readonly image?: string;
  readonly pull?: "missing" | "always" | "never";
  readonly build?: DockerBuildSpec;
}

/** A planned Dockerfile build (see the module comment). */
export interface DockerBuildPlan {
  readonly contextDir: string;
  /** Absolute host path of the Dockerfile. */
  readonly dockerfile: string;
  readonly buildArgs: Readonly<Record<string, string>>;
  readonly target?: string;
  /** The full build key (rule 62). */
  readonly key: string;
}

/** A planned docker sandbox. */
export interface DockerPlan extends ContainerPlan {
  readonly pull: "missing" | "always" | "never";
  readonly build?: DockerBuildPlan;
}

/** The build module's part of the provider. */
export interface DockerBuilds {
  /** The build key of rule 62; reads the Dockerfile and context only (rule 21). */
  key(build: DockerBuildSpec, signal: AbortSignal): Promise<string>;
  /** Builds (or finds) `plan.image` from `plan.build`. */
  prepare(
    docker: Docker,
    plan: DockerPlan,
    ctx: { signal: AbortSignal; progress(m: string): void },
  ): Promise<{ source: "cache" | "built" }>;
}

/** What the docker provider needs from its host. */
export interface DockerProviderOptions {
  /** The host environment snapshot: `DOCKER_HOST` and the TLS variables (rule 104). */
  readonly hostEnv: Readonly<Record<string, string>>;
  readonly clock: Clock;
  /** @default {dockerClient(hostEnv)} */
  readonly docker?: Docker;
  /** Dockerfile builds; without them a `{ dockerfile }` layer fails to plan. */
  readonly builds?: DockerBuilds;
  /**
   * The own-network gate of a run whose address-pool preflight found too few free networks (rule
   * 118). A `network: "own"` create waits for a permit before its network exists and holds it
   * until the sandbox is stopped (or the create failed). Without it own-network creates never wait.
   */
  readonly networkGate?: NetworkGate | undefined;
}

/** Creates the `docker` provider. */
export function createDockerProvider(
  o: DockerProviderOptions,
): SandboxProvider<DockerSpec, DockerPlan> {
  let client = o.docker;
  const docker = () => client ??= dockerClient(o.hostEnv);
  return {
    name: "docker",
    scheduling: Object.freeze({
      recommendedConcurrency: 10,
      admission: "shared",
      laneKey: "docker",
    }),
    plan: (spec, ctx) => planDocker(spec, ctx, o.builds),
    prepareArtifacts: (plan, _key, ctx) => {
      if (plan.build === undefined) {
        return prepareDockerImage(docker(), plan.image, { pull: plan.pull, ...ctx })
          .then((source) => ({ source }));
      }
      if (o.builds === undefined) return Promise.reject(noBuilds());
      return o.builds.prepare(docker(), plan, ctx);
    },
    create: (plan, ctx) => createDocker(docker(), plan, ctx, o),
    classifyCreateError: classifyDockerCreateError,
    findOwned: (filter, signal) => findOwnedContainers(docker(), filter, signal),
    destroyDetached: (id, signal) => destroyContainer(docker(), id, signal),
  };
}

async function planDocker(
  spec: DockerSpec,
  ctx: { projectRoot: string; signal: AbortSignal },
  builds: DockerBuilds | undefined,
): Promise<{ plan: DockerPlan; identity: string; buildKeys: readonly string[] }> {
  const common = {
    workdir: spec.workdir,
    network: spec.network,
    ...(spec.user === undefined ? {} : { user: spec.user }),
    ...(spec.cpus === undefined ? {} : { cpus: spec.cpus }),
    ...(spec.memoryMb === undefined ? {} : { memoryMb: spec.memoryMb }),
    ...(spec.pidsLimit === undefined ? {} : { pidsLimit: spec.pidsLimit }),
  };
  if (spec.build !== undefined) {
    await checkBuildPaths(spec.build, ctx.projectRoot);
    if (builds === undefined) throw noBuilds();
    const key = await builds.key(spec.build, ctx.signal);
    const build: DockerBuildPlan = {
      contextDir: spec.build.context,
      dockerfile: spec.build.dockerfile,
      buildArgs: spec.build.buildArgs,
      ...(spec.build.target === undefined ? {} : { target: spec.build.target }),
      key,
    };
    const plan: DockerPlan = { image: buildImageTag(key), pull: "never", build, ...common };
    const identity = sha256Hex(canonicalJson({ provider: "docker", buildKey: key, ...common }));
    return { plan, identity, buildKeys: [key] };
  }
  const image = spec.image!;
  const pull = spec.pull ?? "missing";
  const plan: DockerPlan = { image, pull, ...common };
  const identity = sha256Hex(canonicalJson({ provider: "docker", image, ...common }));
  const pullKey = sha256Hex(canonicalJson({ puller: "niceeval-docker-pull/1", image, pull }));
  return { plan, identity, buildKeys: [pullKey] };
}

/** Rule 7: the Dockerfile and the context exist inside the project root. */
async function checkBuildPaths(build: DockerBuildSpec, projectRoot: string): Promise<void> {
  const root = await Deno.realPath(projectRoot);
  for (
    const [option, path, kind] of [
      ["dockerfile", build.dockerfile, "file"],
      ["context", build.context, "directory"],
    ] as const
  ) {
    const info = await Deno.realPath(path).then(
      async (real) => ({ real, stat: await Deno.stat(real) }),
      () => undefined,
    );
    if (info === undefined) {
      throw new SandboxConfigError(option, `Cannot use ${option} "${path}": it does not exist`);
    }
    if (kind === "file" ? !info.stat.isFile : !info.stat.isDirectory) {
      throw new SandboxConfigError(option, `Cannot use ${option} "${path}": not a ${kind}`);
    }
    if (!isInside(root, info.real)) {
      throw new SandboxConfigError(
        option,
        `Cannot use ${option} "${path}": it is outside the project root`,
      );
    }
  }
}

function noBuilds(): SandboxConfigError {
  return new SandboxConfigError(
    "dockerfile",
    "Cannot plan a Dockerfile build: this niceeval has no docker build support",
  );
}

/**
 * Creates one container. A `network: "own"` create first takes a permit of the run's network gate
 * when there is one (rule 118); the handle releases it once its stop has settled, and a failed
 * create releases it after its kill-on-failure.
 */
async function createDocker(
  docker: Docker,
  plan: DockerPlan,
  ctx: CreateContext,
  o: { readonly clock: Clock; readonly networkGate?: NetworkGate | undefined },
) {
  const lifetimeMs = Number.isFinite(ctx.lifetimeMs) ? ctx.lifetimeMs : DEFAULT_TTL_MS;
  const gate = plan.network === "own" ? o.networkGate : undefined;
  const permit = gate === undefined
    ? undefined
    : await gate.acquire(ctx.signal, () => ctx.progress("waiting for a free docker network"));
  try {
    return await createContainerSandbox(docker, plan, {
      labels: dockerLabels(ctx.owner),
      ttlSeconds: Math.max(1, Math.ceil(lifetimeMs / 1000)),
      networkName: `niceeval-${ctx.owner.provisionToken.slice(0, 12)}`,
      signal: ctx.signal,
      clock: o.clock,
      diagnostic: (d) => ctx.diagnostic(d),
      ...(permit === undefined ? {} : { networkPermit: permit }),
    });
  } catch (error) {
    permit?.[Symbol.dispose]();
    throw addressPoolError(error) ?? error;
  }
}

/** Rule 116: the daemon's address-pool error as `docker-address-pool-exhausted`. */
function addressPoolError(error: unknown): ProviderError | undefined {
  if (!isAddressPoolExhausted(error)) return undefined;
  const e = new ProviderError(
    "rejected",
    "Cannot create the sandbox's own network: the daemon's address pools are exhausted " +
      "(docker-address-pool-exhausted); run niceeval doctor docker for the fix",
    { cause: error },
  );
  return Object.assign(e, { code: "docker-address-pool-exhausted" });
}

/** Rule 113, then the shared transport table. */
export function classifyDockerCreateError(error: unknown): CreateErrorClass {
  if (isAddressPoolExhausted(error)) return "rejected";
  if ((error as { code?: unknown } | null)?.code === "docker-address-pool-exhausted") {
    return "rejected";
  }
  const status = dockerStatus(error);
  if (status === 429) return "rate_limit";
  if (status === 404 || status === 400) return "fatal";
  if (status !== undefined && status >= 500) return "ambiguous";
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string" && UNREACHABLE_REGEXP.test(code)) return "rejected";
  return classifyTransportError(error);
}

async function findOwnedContainers(
  docker: Docker,
  filter: Partial<OwnerStamp>,
  signal: AbortSignal,
): Promise<OwnedInstance[]> {
  signal.throwIfAborted();
  const found = await docker.listContainers({
    all: true,
    filters: { label: ownerLabelFilters(filter) },
  });
  return found.map((c) => ({
    id: c.Id,
    owner: ownerFromLabels(c.Labels),
    state: c.State === "running" ? "running" : c.State === "exited" ? "stopped" : "unknown",
    ...(typeof c.Created === "number" ? { createdAt: new Date(c.Created * 1000) } : {}),
  }));
}

/** Stops and removes a container by id, with the network it owns (rule 112). */
async function destroyContainer(
  docker: Docker,
  id: string,
  signal: AbortSignal,
): Promise<"destroyed" | "already-gone"> {
  signal.throwIfAborted();
  let info: Docker.ContainerInspectInfo;
  try {
    info = await docker.getContainer(id).inspect();
  } catch (error) {
    if (dockerStatus(error) === 404) return "already-gone";
    throw error;
  }
  const mode = info.HostConfig?.NetworkMode;
  const own = mode !== undefined && /^niceeval-[0-9a-f]{12}$/.test(mode) &&
      info.Config?.Labels?.[DOCKER_LABELS.managed] === "true"
    ? mode
    : undefined;
  return await stopContainer(docker, id, { network: own });
}
