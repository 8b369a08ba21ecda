/**
 * Docker images for sandboxes (sandboxes.md §5, rule 114): build keys of Dockerfile layers, builds
 * through `buildImage` with the progress stream followed to its end, cache hits by tag, and pulls.
 * The scheduler's build gate decides when and how many run (rule 63); this file builds one key.
 */
// @ts-types="@types/dockerode"
import type Docker from "dockerode";
import { isAbsolute, join, relative } from "node:path";
import { Readable } from "node:stream";
import {
  canonicalJson,
  type Clock,
  errorMessage,
  type Random,
  realRandom,
  sha256Hex,
  sleep,
} from "../../../_shared/mod.ts";
import { stateDirOf, tryAcquireLock } from "../../../coordination/mod.ts";
import { contextTar, followStream, LogTail } from "./_build_stream.ts";
import { type ContextEntry, readBuildContext } from "./_context.ts";
import { buildFailureDetail, type BuildFailureFacts, buildFailureFacts } from "./build_failure.ts";
import { DOCKER_LABELS, dockerStatus } from "./client.ts";

export { BUILD_LOG_TAIL_BYTES } from "./_build_stream.ts";

/** Identifies the build-key recipe; a change of recipe changes every key (rule 62). */
export const BUILDER_ID = "niceeval-docker-build/1";
/** Repository of built images: `niceeval-build:<buildKey[0..32)>` (rule 62). */
export const BUILD_REPOSITORY = "niceeval-build";
/** Tries of one build when its output shows a transient failure (rule 65). */
export const BUILD_TRIES = 3;
/** Output that marks a build failure as transient (rule 65). */
const TRANSIENT_REGEXP =
  /toomanyrequests|unexpected EOF|i\/o timeout|TLS handshake timeout|connection reset by peer|temporary failure in name resolution/i;
/** Poll interval while another process builds the same key. */
const BUILD_LOCK_POLL_MS = 1000;
/** Name of the Dockerfile in the tar when it lies outside the context directory. */
const OUTSIDE_DOCKERFILE = ".niceeval.Dockerfile";

/** A Dockerfile layer's build inputs (`dockerSandbox({ dockerfile, context, … })`). */
export interface DockerBuildSpec {
  /** Absolute context directory. */
  readonly contextDir: string;
  /** The Dockerfile: absolute, or relative to `contextDir`. */
  readonly dockerfile: string;
  readonly buildArgs?: Readonly<Record<string, string>>;
  readonly target?: string;
  readonly platform?: string;
}

/** Seams of {@link prepareDockerBuild}. */
export interface DockerBuildOptions {
  readonly signal: AbortSignal;
  /** Build log lines, trimmed. @default {ignored} */
  readonly progress?: (line: string) => void;
  /** Retry delays (rule 65) and lock polls. */
  readonly clock: Clock;
  /** Retry jitter `U[0,1)` (rule 65). */
  readonly random: Random;
  /**
   * Directory of the cross-process build locks (`<state dir>/builds`, rule 63); without it only
   * the build gate's single-flight applies.
   * @default {none}
   */
  readonly lockDir?: string;
  /**
   * The key the plan computed (its image tag); the context is hashed again only when absent, so
   * a context edited after planning still builds under the planned tag.
   * @default {the key of the context now}
   */
  readonly key?: string;
}

/**
 * A build or pull that failed. `facts` carries the code, excerpt and remediation of rule 68;
 * {@link DockerBuildError.detailFor} gives one slot's capped diagnostic detail.
 */
export class DockerBuildError extends Error {
  /** The build key, or the image reference of a pull. */
  readonly buildKey: string;
  readonly logTail: string;
  readonly facts: BuildFailureFacts;

  constructor(
    message: string,
    o: { buildKey: string; logTail: string; phase: BuildFailureFacts["phase"]; code?: unknown },
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "DockerBuildError";
    this.buildKey = o.buildKey;
    this.logTail = o.logTail;
    const code = o.code ?? (options?.cause as { code?: unknown } | undefined)?.code;
    this.facts = buildFailureFacts({ message, logTail: o.logTail, code, phase: o.phase });
  }

  /** The `detail` of the `sandbox-build-failed` diagnostic of one slot (rules 67–69). */
  detailFor(evalId: string, attempt: number): Record<string, unknown> {
    return { ...buildFailureDetail(this.facts, { buildKey: this.buildKey, evalId, attempt }) };
  }
}

/** A Dockerfile layer as the docker provider declares it (absolute host paths). */
export interface DockerLayerBuild {
  readonly dockerfile: string;
  readonly context: string;
  readonly buildArgs: Readonly<Record<string, string>>;
  readonly target?: string;
}

/** The docker provider's build hooks: the key at plan time, the image before dispatch. */
export interface DockerBuilds {
  /** The build key of rule 62; reads the Dockerfile and context only (rule 21). */
  key(build: DockerLayerBuild, signal: AbortSignal): Promise<string>;
  /** Builds (or finds) `plan.image`, the tag of `plan.build.key`. */
  prepare(
    docker: Docker,
    plan: {
      readonly image: string;
      readonly build?: {
        readonly contextDir: string;
        readonly dockerfile: string;
        readonly buildArgs: Readonly<Record<string, string>>;
        readonly target?: string;
        readonly key: string;
      };
    },
    ctx: { signal: AbortSignal; progress(m: string): void },
  ): Promise<{ source: "cache" | "built" }>;
}

/**
 * The build hooks of the docker provider for the host of `hostEnv`: cross-process build locks
 * live in `<state dir>/builds/` (rule 63).
 */
export function createDockerBuilds(
  o: {
    readonly hostEnv: Readonly<Record<string, string>>;
    readonly clock: Clock;
    /** Retry jitter (rule 65). @default {realRandom} */
    readonly random?: Random;
  },
): DockerBuilds {
  const lockDir = join(stateDirOf(o.hostEnv), "builds");
  return {
    key: (build, signal) =>
      dockerBuildKey({
        contextDir: build.context,
        dockerfile: build.dockerfile,
        buildArgs: build.buildArgs,
        ...(build.target !== undefined ? { target: build.target } : {}),
      }, { signal }),
    prepare: async (docker, plan, ctx) => {
      const build = plan.build;
      if (build === undefined) {
        throw new TypeError(`Cannot build image "${plan.image}": the plan has no Dockerfile`);
      }
      const source = await prepareDockerBuild(docker, {
        contextDir: build.contextDir,
        dockerfile: build.dockerfile,
        buildArgs: build.buildArgs,
        ...(build.target !== undefined ? { target: build.target } : {}),
      }, {
        signal: ctx.signal,
        progress: (line) => ctx.progress(line),
        clock: o.clock,
        random: o.random ?? realRandom,
        lockDir,
        key: build.key,
      });
      return { source };
    },
  };
}

/** The image tag of a build key (rule 62). */
export function buildImageTag(buildKey: string): string {
  return `${BUILD_REPOSITORY}:${buildKey.slice(0, 32)}`;
}

/**
 * The build key of rule 62: sha256 of the canonical JSON of the builder id, the Dockerfile path
 * and bytes, the context entries after `.dockerignore` filtering, the build args, target and
 * platform. Reads the context; talks to no daemon (rule 21).
 */
export async function dockerBuildKey(
  spec: DockerBuildSpec,
  o: { readonly signal: AbortSignal },
): Promise<string> {
  const { key } = await loadBuild(spec, o);
  return key;
}

/**
 * Makes sure the image of `spec` exists: an existing tag is a cache hit; otherwise, under the
 * key's cross-process lock, the tag is inspected again and the context is built. Transient
 * failures are retried (rule 65).
 *
 * @returns `cache` when the tag existed, `built` when this call built it
 * @throws {DockerBuildError} when the build fails, with the log tail and `ERR_*` facts
 */
export async function prepareDockerBuild(
  docker: Docker,
  spec: DockerBuildSpec,
  o: DockerBuildOptions,
): Promise<"cache" | "built"> {
  const loaded = await loadBuild(spec, o);
  const build = o.key === undefined ? loaded : { ...loaded, key: o.key };
  const tag = buildImageTag(build.key);
  if (await imageExists(docker, tag)) return "cache";
  const lock = o.lockDir === undefined
    ? undefined
    : await waitForLock(join(o.lockDir, `${build.key}.lock`), o);
  try {
    if (await imageExists(docker, tag)) return "cache";
    for (let k = 0;; k++) {
      try {
        await buildOnce(docker, build, tag, o);
        return "built";
      } catch (error) {
        o.signal.throwIfAborted();
        const tail = error instanceof DockerBuildError ? error.logTail : "";
        const transient = TRANSIENT_REGEXP.test(`${errorMessage(error)}\n${tail}`);
        if (!transient || k + 1 >= BUILD_TRIES) throw error;
        const delay = 1000 * 2 ** k * (0.5 + o.random.next());
        o.progress?.(`build failed transiently; retrying in ${Math.round(delay)} ms`);
        await sleep(o.clock, delay, { signal: o.signal });
      }
    }
  } finally {
    lock?.release();
  }
}

/** Polls the key's lock file (rule 63: another process building the same key holds it). */
async function waitForLock(path: string, o: DockerBuildOptions) {
  for (;;) {
    o.signal.throwIfAborted();
    const lock = await tryAcquireLock(path);
    if (lock) return lock;
    await sleep(o.clock, BUILD_LOCK_POLL_MS, { signal: o.signal });
  }
}

/**
 * Makes sure `image` exists per `pull` (rule 61): `missing` pulls only when it is absent,
 * `always` pulls every time, `never` only inspects.
 *
 * @throws {DockerBuildError} (phase `sandbox.pull`) when the pull fails or `never` finds no image
 */
export async function prepareDockerImage(
  docker: Docker,
  image: string,
  o: {
    readonly pull: "missing" | "always" | "never";
    readonly signal: AbortSignal;
    readonly progress?: (line: string) => void;
  },
): Promise<"cache" | "pulled"> {
  if (o.pull !== "always" && await imageExists(docker, image)) return "cache";
  if (o.pull === "never") {
    throw new DockerBuildError(
      `Cannot use image "${image}": it is not present locally and pull is "never"`,
      { buildKey: image, logTail: "", phase: "sandbox.pull" },
    );
  }
  const log = new LogTail();
  try {
    const stream = await docker.pull(image, { abortSignal: o.signal });
    await followStream(docker, stream, log, o);
  } catch (error) {
    o.signal.throwIfAborted();
    throw new DockerBuildError(
      `Cannot pull image "${image}": ${errorMessage(error)}`,
      { buildKey: image, logTail: log.text(), phase: "sandbox.pull" },
      { cause: error },
    );
  }
  return "pulled";
}

/** True when the daemon has an image named `ref`. */
export async function imageExists(docker: Docker, ref: string): Promise<boolean> {
  try {
    await docker.getImage(ref).inspect();
    return true;
  } catch (error) {
    if (dockerStatus(error) === 404) return false;
    throw error;
  }
}

interface LoadedBuild {
  readonly key: string;
  readonly spec: DockerBuildSpec;
  /** The Dockerfile's name inside the tar. */
  readonly dockerfileName: string;
  readonly entries: readonly ContextEntry[];
}

async function loadBuild(
  spec: DockerBuildSpec,
  o: { readonly signal: AbortSignal },
): Promise<LoadedBuild> {
  const abs = isAbsolute(spec.dockerfile)
    ? spec.dockerfile
    : join(spec.contextDir, spec.dockerfile);
  const rel = relative(spec.contextDir, abs).split("\\").join("/");
  const inside = rel !== "" && !rel.startsWith("../") && !isAbsolute(rel);
  const dockerfileName = inside ? rel : OUTSIDE_DOCKERFILE;
  let entries = await readBuildContext(spec.contextDir, dockerfileName, o);
  const dockerfile = await Deno.readFile(abs);
  if (!inside) {
    entries = [...entries.filter((e) => e.path !== OUTSIDE_DOCKERFILE), {
      path: OUTSIDE_DOCKERFILE,
      type: "file",
      mode: 0o644,
      bytes: dockerfile,
    }];
  }
  const args = Object.entries(spec.buildArgs ?? {}).sort(([a], [b]) => a < b ? -1 : 1);
  const key = sha256Hex(canonicalJson({
    builder: BUILDER_ID,
    dockerfilePath: inside ? rel : `outside:${abs}`,
    dockerfile: toBase64(dockerfile),
    context: entries.map((e) => [e.path, e.mode, sha256Hex(entryBytes(e))]),
    buildArgs: args,
    target: spec.target ?? null,
    platform: spec.platform ?? null,
  }));
  return { key, spec, dockerfileName, entries };
}

/** One build through the daemon; rejects with {@link DockerBuildError} on any failure. */
async function buildOnce(
  docker: Docker,
  build: LoadedBuild,
  tag: string,
  o: DockerBuildOptions,
): Promise<void> {
  const log = new LogTail();
  try {
    const tar = await contextTar(build.entries);
    const stream = await docker.buildImage(Readable.from([tar]), {
      t: tag,
      dockerfile: build.dockerfileName,
      ...(build.spec.buildArgs ? { buildargs: { ...build.spec.buildArgs } } : {}),
      ...(build.spec.target !== undefined ? { target: build.spec.target } : {}),
      ...(build.spec.platform !== undefined ? { platform: build.spec.platform } : {}),
      labels: { [DOCKER_LABELS.buildKey]: build.key },
      rm: true,
      forcerm: true,
      abortSignal: o.signal,
    });
    await followStream(docker, stream, log, o);
  } catch (error) {
    o.signal.throwIfAborted();
    throw new DockerBuildError(
      `Cannot build image "${tag}": ${errorMessage(error)}`,
      { buildKey: build.key, logTail: log.text(), phase: "sandbox.build" },
      { cause: error },
    );
  }
}

function entryBytes(e: ContextEntry): Uint8Array {
  return e.type === "symlink" ? new TextEncoder().encode(e.linkname ?? "") : e.bytes;
}

function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}
