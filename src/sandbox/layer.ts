/**
 * Layer factories of `niceeval/sandbox` (sandboxes.md §1.2–§1.3): `localSandbox`, `dockerSandbox`,
 * `defineSandbox` and `sandboxLayer`, plus the plan-time path check and hook identities. Factories
 * validate synchronously and throw {@link SandboxConfigError}; they do no I/O.
 */
import { dirname, isAbsolute, posix, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { closest, isPlainObject, sha256Hex } from "../_shared/mod.ts";
import { MAX_CONCURRENCY, MAX_TIMER_MS } from "../_shared/mod.ts";
import { SandboxConfigError } from "./errors.ts";
import {
  type CustomSandboxDefinition,
  type LayerState,
  layerState,
  makeLayer,
} from "./_layer_state.ts";
import type {
  CreateContext,
  CreateErrorClass,
  LayerCommon,
  SandboxHandle,
  SandboxLayer,
} from "./types.ts";

/** Names that `defineSandbox` may not take. */
const BUILTIN_PROVIDER_NAMES: readonly string[] = ["local", "docker", "e2b", "vercel"];

const CUSTOM_NAME_REGEXP = /^[a-z][a-z0-9-]{0,31}$/;
const ENV_NAME_REGEXP = /^[A-Za-z_][A-Za-z0-9_]*$/;
const FRAME_URL_REGEXP = /((?:file|https?|jsr|npm|data):[^\s()]+?):\d+:\d+\)?\s*$/;
/** niceeval's own `src/` directory: frames inside it are never the declaring file. */
const SRC_URL = new URL("../", import.meta.url).href;

/** Options of {@link localSandbox}. */
export interface LocalSandboxOptions extends LayerCommon {
  /** Host variables copied into every command's environment (names only). */
  passEnv?: readonly string[];
}

/** Options of {@link defineSandbox}. */
export interface DefineSandboxOptions extends LayerCommon {
  /** `/^[a-z][a-z0-9-]{0,31}$/`, not a built-in provider name. */
  name: string;
  /** Creates one physical sandbox stamped with `ctx.owner`. */
  create(ctx: CreateContext): Promise<SandboxHandle>;
  /** @default {5} */
  recommendedConcurrency?: number;
  /** One Attempt at a time per Invocation. @default {false} */
  exclusive?: boolean;
  /** @default {() => "fatal"} */
  classifyCreateError?(e: unknown): CreateErrorClass;
}

/**
 * A template layer for the `local` provider: a private temp directory plus host subprocesses,
 * for trusted agents only.
 *
 * @param o Fixture, lifetime and the host variables to pass in.
 * @returns An immutable template layer.
 * @throws {SandboxConfigError} When an option is unknown or invalid.
 * @example
 * ```ts
 * import { localSandbox } from "niceeval/sandbox";
 * export const sandbox = localSandbox({ passEnv: ["OPENAI_API_KEY"] }).prepare("git init -q");
 * ```
 */
export function localSandbox(o?: LocalSandboxOptions): SandboxLayer {
  const what = "localSandbox()";
  const options = checkLayerOptions(o, ["fixture", "lifetimeMs", "passEnv"], what);
  const spec: Record<string, unknown> = {
    passEnv: Object.freeze(envNames(options.passEnv, what)),
  };
  return makeLayer(commonState("local", options, what, Object.freeze(spec)));
}

/** Where a docker sandbox's image comes from: a reference, or a Dockerfile build. */
export type DockerSource =
  | {
    /** An image reference, e.g. `"node:22-bookworm"`. */
    image: string;
    /** When the image is pulled: absent only, every run, or never. @default {"missing"} */
    pull?: "missing" | "always" | "never";
  }
  | {
    /** The Dockerfile, relative to the declaring file's directory. */
    dockerfile: string;
    /** The build context directory, relative to the declaring file's directory. */
    context: string;
    /** Build arguments by name. @default {{}} */
    buildArgs?: Record<string, string>;
    /** The build stage to stop at. @default {the last stage} */
    target?: string;
  };

/** Options of {@link dockerSandbox}. */
export type DockerSandboxOptions = LayerCommon & DockerSource & {
  /** The default user of every command. @default {the image's USER, else root} */
  user?: string;
  /** The absolute workdir. @default {"/workspace"} */
  workdir?: string;
  /** `"none"`, the daemon's default bridge, or one new network per sandbox. @default {"none"} */
  network?: "none" | "bridge" | "own";
  /** CPU limit in cores. @default {no limit} */
  cpus?: number;
  /** Memory limit in MiB (swap included). @default {no limit} */
  memoryMb?: number;
  /** Process limit. @default {no limit} */
  pidsLimit?: number;
};

const DOCKER_COMMON_OPTIONS = ["fixture", "lifetimeMs", "user", "workdir", "network", "cpus"];
const DOCKER_NETWORKS: readonly string[] = ["none", "bridge", "own"];
const DOCKER_PULLS: readonly string[] = ["missing", "always", "never"];
const IMAGE_REF_REGEXP = /^[^\s]+$/;

/**
 * A template layer for the `docker` provider: one container per physical sandbox, started from
 * an image or from a Dockerfile built once per run.
 *
 * @param o The image or Dockerfile, user, workdir, network and resource limits.
 * @returns An immutable template layer.
 * @throws {SandboxConfigError} When an option is unknown or invalid, or both or neither of
 *   `image` and `dockerfile` are given.
 * @example
 * ```ts
 * import { dockerSandbox } from "niceeval/sandbox";
 * export const sandbox = dockerSandbox({ image: "node:22-bookworm", user: "node" });
 * ```
 */
export function dockerSandbox(o: DockerSandboxOptions): SandboxLayer {
  const what = "dockerSandbox()";
  const known = [...DOCKER_COMMON_OPTIONS, "memoryMb", "pidsLimit", "image", "pull"];
  const options = checkLayerOptions(
    o,
    [...known, "dockerfile", "context", "buildArgs", "target"],
    what,
  );
  const hasImage = options.image !== undefined;
  const hasDockerfile = options.dockerfile !== undefined || options.context !== undefined;
  if (hasImage === hasDockerfile) {
    throw new SandboxConfigError(
      hasImage ? "dockerfile" : "image",
      `${what}: give either image or dockerfile with context`,
    );
  }
  const spec: Record<string, unknown> = {
    workdir: absolutePosix(options.workdir ?? "/workspace", "workdir", what),
    network: oneOf(options.network ?? "none", DOCKER_NETWORKS, "network", what),
  };
  if (options.user !== undefined) spec.user = nonEmpty(options.user, "user", what);
  if (options.cpus !== undefined) spec.cpus = positiveNumber(options.cpus, "cpus", what);
  for (const name of ["memoryMb", "pidsLimit"] as const) {
    if (options[name] !== undefined) spec[name] = positiveInteger(options[name], name, what);
  }
  const state = commonState("docker", options, what, Object.freeze({}));
  Object.assign(spec, dockerSource(options, what, state.hostDir));
  return makeLayer({ ...state, spec: Object.freeze(spec) });
}

/** Options of {@link e2bSandbox}. */
export interface E2BSandboxOptions extends LayerCommon {
  /** The E2B template name or id, e.g. `"base"`. */
  template: string;
  /** The default user of every command and file operation. @default {"user"} */
  user?: string;
  /** The absolute workdir, created at start. @default {"/home/user/workspace"} */
  workdir?: string;
}

/**
 * A template layer for the `e2b` provider: one E2B cloud sandbox per physical sandbox, created
 * from a template. The API key is read from `E2B_API_KEY` in the environment only.
 *
 * @param o The template, default user and workdir.
 * @returns An immutable template layer.
 * @throws {SandboxConfigError} When an option is unknown or invalid, or `template` is missing.
 * @example
 * ```ts
 * import { e2bSandbox } from "niceeval/sandbox";
 * export const sandbox = e2bSandbox({ template: "base" }).prepare("git init -q");
 * ```
 */
export function e2bSandbox(o: E2BSandboxOptions): SandboxLayer {
  const what = "e2bSandbox()";
  const options = checkLayerOptions(
    o,
    ["fixture", "lifetimeMs", "template", "user", "workdir"],
    what,
  );
  const spec: Record<string, unknown> = {
    template: nonEmpty(options.template, "template", what),
  };
  if (options.user !== undefined) spec.user = nonEmpty(options.user, "user", what);
  if (options.workdir !== undefined) {
    spec.workdir = absolutePosix(options.workdir, "workdir", what);
  }
  return makeLayer(commonState("e2b", options, what, Object.freeze(spec)));
}

/** Options of {@link vercelSandbox}: a snapshot or a runtime, never both. */
export interface VercelSandboxOptions extends LayerCommon {
  /** A snapshot to start from. @default {none: the runtime is used} */
  snapshotId?: string;
  /** The runtime image when no snapshot is given. @default {"node24"} */
  runtime?: "node26" | "node24" | "node22" | "python3.13";
  /** Virtual CPUs (2048 MB of memory each). @default {the Vercel default} */
  vcpus?: number;
}

const VERCEL_RUNTIMES: readonly string[] = ["node26", "node24", "node22", "python3.13"];

/**
 * A template layer for the `vercel` provider: one Vercel Sandbox microVM per physical sandbox,
 * started from a snapshot or a runtime. Credentials come from the environment only
 * (`VERCEL_TOKEN`, `VERCEL_TEAM_ID`, `VERCEL_PROJECT_ID`, else `VERCEL_OIDC_TOKEN`).
 *
 * @param o The snapshot or runtime and the vCPUs.
 * @returns An immutable template layer.
 * @throws {SandboxConfigError} When an option is unknown or invalid, or both `snapshotId` and
 *   `runtime` are given.
 * @example
 * ```ts
 * import { vercelSandbox } from "niceeval/sandbox";
 * export const sandbox = vercelSandbox({ runtime: "node22", vcpus: 2 }).prepare("git init -q");
 * ```
 */
export function vercelSandbox(o?: VercelSandboxOptions): SandboxLayer {
  const what = "vercelSandbox()";
  const known = ["fixture", "lifetimeMs", "snapshotId", "runtime", "vcpus"];
  const options = checkLayerOptions(o, known, what);
  if (options.snapshotId !== undefined && options.runtime !== undefined) {
    throw new SandboxConfigError("runtime", `${what}: give either snapshotId or runtime, not both`);
  }
  const spec: Record<string, unknown> = options.snapshotId !== undefined
    ? { snapshotId: nonEmpty(options.snapshotId, "snapshotId", what) }
    : { runtime: oneOf(options.runtime ?? "node24", VERCEL_RUNTIMES, "runtime", what) };
  if (options.vcpus !== undefined) spec.vcpus = positiveInteger(options.vcpus, "vcpus", what);
  return makeLayer(commonState("vercel", options, what, Object.freeze(spec)));
}

/**
 * A template layer for a custom provider whose `create` returns a {@link SandboxHandle}.
 *
 * @param o The provider's name, `create` and scheduling options.
 * @returns An immutable template layer.
 * @throws {SandboxConfigError} When an option is unknown or invalid.
 * @example
 * ```ts
 * import { defineSandbox, type SandboxHandle } from "niceeval/sandbox";
 * declare function startVm(): Promise<SandboxHandle>;
 * export const vm = defineSandbox({ name: "my-vm", exclusive: true, create: () => startVm() });
 * ```
 */
export function defineSandbox(o: DefineSandboxOptions): SandboxLayer {
  const what = "defineSandbox()";
  const known = ["fixture", "lifetimeMs", "name", "create", "recommendedConcurrency"];
  const options = checkLayerOptions(o, [...known, "exclusive", "classifyCreateError"], what);
  const name = options.name;
  if (typeof name !== "string" || !CUSTOM_NAME_REGEXP.test(name)) {
    throw new SandboxConfigError("name", `${what}: name must match ${CUSTOM_NAME_REGEXP}`);
  }
  if (BUILTIN_PROVIDER_NAMES.includes(name)) {
    throw new SandboxConfigError("name", `${what}: name "${name}" is a built-in provider`);
  }
  const custom: CustomSandboxDefinition = {
    name,
    create: fn(options.create, "create", what) as CustomSandboxDefinition["create"],
    recommendedConcurrency: options.recommendedConcurrency === undefined
      ? 5
      : positiveInteger(options.recommendedConcurrency, "recommendedConcurrency", what, {
        max: MAX_CONCURRENCY,
      }),
    exclusive: bool(options.exclusive ?? false, "exclusive", what),
    ...(options.classifyCreateError === undefined ? {} : {
      classifyCreateError: fn(options.classifyCreateError, "classifyCreateError", what) as (
        e: unknown,
      ) => CreateErrorClass,
    }),
  };
  const state = commonState(name, options, what, Object.freeze({}));
  return makeLayer({ ...state, custom: Object.freeze(custom) });
}

/**
 * A template-less layer: fixture, hooks and prepare steps for the side that does not choose the
 * provider.
 *
 * @param o The layer's fixture.
 * @returns An immutable layer without a provider.
 * @throws {SandboxConfigError} When an option is unknown or invalid.
 * @example
 * ```ts
 * import { sandboxLayer } from "niceeval/sandbox";
 * export const layer = sandboxLayer({ fixture: "./repo" }).prepare(["npm", "ci"]);
 * ```
 */
export function sandboxLayer(o?: { fixture?: string }): SandboxLayer {
  const options = checkLayerOptions(o, ["fixture"], "sandboxLayer()");
  return makeLayer(commonState(undefined, options, "sandboxLayer()", Object.freeze({})));
}

/**
 * Checks a layer's host paths against the project root (rule 7): the fixture must be an existing
 * directory inside the root. Called at plan time, when the root is known.
 */
export async function checkLayerPaths(layer: SandboxLayer, projectRoot: string): Promise<void> {
  const { fixture } = layerState(layer);
  if (fixture === undefined) return;
  let real: string;
  let info: Deno.FileInfo;
  try {
    real = await Deno.realPath(fixture.path);
    info = await Deno.stat(real);
  } catch (error) {
    throw new SandboxConfigError(
      "fixture",
      `Cannot use fixture "${fixture.declared}": "${fixture.path}" does not exist`,
      { cause: error },
    );
  }
  if (!info.isDirectory) {
    throw new SandboxConfigError(
      "fixture",
      `Cannot use fixture "${fixture.declared}": not a directory`,
    );
  }
  const root = await Deno.realPath(projectRoot);
  if (!isInside(root, real)) {
    throw new SandboxConfigError(
      "fixture",
      `Cannot use fixture "${fixture.declared}": it is outside the project root`,
    );
  }
}

/**
 * Identities of a layer's setup and teardown hooks in declaration order (rule 9):
 * `owner + "#" + index + ":" + sha256(fn.toString())`.
 */
export function layerHookIdentities(layer: SandboxLayer, owner: string): string[] {
  return layerState(layer).hooks.map((hook, i) => `${owner}#${i}:${sha256Hex(hook.fn.toString())}`);
}

/** True when `path` is `root` or below it (both absolute). */
export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/** The URL of the first stack frame outside niceeval's own `src/`, when there is one. */
function callerFile(): string | undefined {
  const lines = (new Error().stack ?? "").split("\n").slice(1);
  for (const line of lines) {
    const url = FRAME_URL_REGEXP.exec(line)?.[1];
    if (url !== undefined && !url.startsWith(SRC_URL)) return url;
  }
  return undefined;
}

function commonState(
  provider: string | undefined,
  options: Record<string, unknown>,
  what: string,
  spec: Readonly<Record<string, unknown>>,
): LayerState {
  const declaringFile = callerFile();
  const hostDir = declaringFile?.startsWith("file:")
    ? dirname(fileURLToPath(declaringFile))
    : undefined;
  const state: {
    -readonly [K in keyof LayerState]: LayerState[K];
  } = { provider, spec, hooks: Object.freeze([]), prepare: Object.freeze([]) };
  if (declaringFile !== undefined) state.declaringFile = declaringFile;
  if (hostDir !== undefined) state.hostDir = hostDir;
  if (options.lifetimeMs !== undefined) {
    state.lifetimeMs = positiveInteger(options.lifetimeMs, "lifetimeMs", what);
  }
  if (options.fixture !== undefined) {
    const declared = options.fixture;
    if (typeof declared !== "string" || declared === "" || declared.includes("\0")) {
      throw new SandboxConfigError("fixture", `${what}: fixture must be a non-empty path`);
    }
    if (!isAbsolute(declared) && hostDir === undefined) {
      throw new SandboxConfigError(
        "fixture",
        `${what}: cannot resolve fixture "${declared}": the declaring file is not a local file`,
      );
    }
    state.fixture = Object.freeze({ declared, path: resolve(hostDir ?? "/", declared) });
  }
  return state;
}

function checkLayerOptions(
  o: unknown,
  known: readonly string[],
  what: string,
): Record<string, unknown> {
  if (o === undefined) return {};
  if (!isPlainObject(o)) {
    throw new SandboxConfigError("(options)", `${what} expects an options object`);
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(o)) {
    if (value === undefined) continue;
    if (!known.includes(key)) {
      const near = closest(key, known);
      throw new SandboxConfigError(
        key,
        `${what}: unknown option "${key}"${near ? ` (did you mean "${near}"?)` : ""}`,
      );
    }
    out[key] = value;
  }
  return out;
}

function envNames(value: unknown, what: string): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    throw new SandboxConfigError("passEnv", `${what}: passEnv must be an array of variable names`);
  }
  return value.map((name, i) => {
    if (typeof name !== "string" || !ENV_NAME_REGEXP.test(name)) {
      throw new SandboxConfigError(
        `passEnv[${i}]`,
        `${what}: passEnv[${i}] must be an environment variable name, got ${JSON.stringify(name)}`,
      );
    }
    return name;
  });
}

/** An integer from 1 to `max` (default: the largest timer delay, docs/limits.md). */
function positiveInteger(
  value: unknown,
  option: string,
  what: string,
  { max = MAX_TIMER_MS }: { max?: number } = {},
): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value <= 0) {
    throw new SandboxConfigError(option, `${what}: ${option} must be a positive integer`);
  }
  if (value > max) {
    throw new SandboxConfigError(option, `${what}: ${option} must be ≤ ${max}, got ${value}`);
  }
  return value;
}

function bool(value: unknown, option: string, what: string): boolean {
  if (typeof value !== "boolean") {
    throw new SandboxConfigError(option, `${what}: ${option} must be true or false`);
  }
  return value;
}

function fn(value: unknown, option: string, what: string): unknown {
  if (typeof value !== "function") {
    throw new SandboxConfigError(option, `${what}: ${option} must be a function`);
  }
  return value;
}

/** The image or Dockerfile part of a docker layer's spec. */
function dockerSource(
  options: Record<string, unknown>,
  what: string,
  hostDir: string | undefined,
): Record<string, unknown> {
  if (options.image !== undefined) {
    const image = nonEmpty(options.image, "image", what);
    if (!IMAGE_REF_REGEXP.test(image)) {
      throw new SandboxConfigError("image", `${what}: image must be a reference without spaces`);
    }
    for (const name of ["buildArgs", "target"]) {
      if (options[name] !== undefined) {
        throw new SandboxConfigError(name, `${what}: ${name} needs dockerfile, not image`);
      }
    }
    return { image, pull: oneOf(options.pull ?? "missing", DOCKER_PULLS, "pull", what) };
  }
  if (options.pull !== undefined) {
    throw new SandboxConfigError("pull", `${what}: pull applies to image, not dockerfile`);
  }
  return {
    build: Object.freeze({
      dockerfile: hostFile(options.dockerfile, "dockerfile", what, hostDir),
      context: hostFile(options.context, "context", what, hostDir),
      buildArgs: Object.freeze(buildArgs(options.buildArgs, what)),
      ...(options.target === undefined ? {} : { target: nonEmpty(options.target, "target", what) }),
    }),
  };
}

function nonEmpty(value: unknown, option: string, what: string): string {
  if (typeof value !== "string" || value.trim() === "" || value.includes("\0")) {
    throw new SandboxConfigError(option, `${what}: ${option} must be a non-empty string`);
  }
  return value;
}

function oneOf(value: unknown, allowed: readonly string[], option: string, what: string): string {
  if (typeof value !== "string" || !allowed.includes(value)) {
    throw new SandboxConfigError(
      option,
      `${what}: ${option} must be one of ${allowed.map((a) => `"${a}"`).join(", ")}`,
    );
  }
  return value;
}

function absolutePosix(value: unknown, option: string, what: string): string {
  const path = nonEmpty(value, option, what);
  if (!path.startsWith("/")) {
    throw new SandboxConfigError(option, `${what}: ${option} must be an absolute path`);
  }
  const normalized = posix.normalize(path);
  return normalized.length > 1 && normalized.endsWith("/") ? normalized.slice(0, -1) : normalized;
}

function positiveNumber(value: unknown, option: string, what: string): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    throw new SandboxConfigError(option, `${what}: ${option} must be a positive number`);
  }
  return value;
}

/** A host path resolved like `fixture` (rule 7); existence is checked at plan time. */
function hostFile(value: unknown, option: string, what: string, hostDir?: string): string {
  const declared = nonEmpty(value, option, what);
  if (!isAbsolute(declared) && hostDir === undefined) {
    throw new SandboxConfigError(
      option,
      `${what}: cannot resolve ${option} "${declared}": the declaring file is not a local file`,
    );
  }
  return resolve(hostDir ?? "/", declared);
}

function buildArgs(value: unknown, what: string): Record<string, string> {
  if (value === undefined) return {};
  if (!isPlainObject(value)) {
    throw new SandboxConfigError("buildArgs", `${what}: buildArgs must be an object of strings`);
  }
  const out: Record<string, string> = {};
  for (const [name, arg] of Object.entries(value).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)) {
    if (typeof arg !== "string") {
      throw new SandboxConfigError(
        `buildArgs.${name}`,
        `${what}: buildArgs.${name} must be a string`,
      );
    }
    out[name] = arg;
  }
  return out;
}
