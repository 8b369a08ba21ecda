/**
 * The `e2b` provider (sandboxes.md §8.3): one E2B sandbox per physical sandbox, created from a
 * template with the owner stamp as metadata (§7.1), default user `user`, default workdir
 * `/home/user/workspace`. It reaches the `e2b` SDK only through the port of `e2b/port.ts` (rule
 * 141); the SDK adapter is loaded on first use, so plans and tests with an in-memory port never
 * load the SDK.
 */
import {
  canonicalJson,
  type Clock,
  errorMessage,
  hasErrorName,
  sha256Hex,
} from "../../_shared/mod.ts";
import { classifyTransportError } from "../create.ts";
import { ProviderError } from "../errors.ts";
import type { CreateContext, CreateErrorClass, SandboxProvider } from "../types.ts";
import { runCollect } from "./e2b/exec.ts";
import { shellQuote } from "./e2b/frames.ts";
import { E2BHandle } from "./e2b/handle.ts";
import { destroySandbox, e2bMetadata, findOwnedSandboxes } from "./e2b/owned.ts";
import type { E2BInstance, E2BPort } from "./e2b/port.ts";

export { E2BHandle } from "./e2b/handle.ts";
export type { E2BInstance, E2BPort, E2BProcess, E2BRunOptions } from "./e2b/port.ts";

/** Default lifetime when the Attempt has none (rule 48). */
const DEFAULT_LIFETIME_MS = 3_600_000;
/** The default user and workdir of rule 122. */
export const E2B_DEFAULT_USER = "user";
export const E2B_DEFAULT_WORKDIR = "/home/user/workspace";
/** Creates the workdir (as the default user) and names the shell of rule 12. */
const SETUP_SCRIPT =
  'mkdir -p "$0" || exit 1; if [ -x /bin/bash ]; then echo bash; else echo sh; fi';

/** The `e2bSandbox()` options a layer keeps. */
export interface E2BSpec {
  readonly template: string;
  readonly user?: string;
  readonly workdir?: string;
}

/** A planned E2B sandbox. */
export interface E2BPlan {
  readonly template: string;
  readonly user: string;
  readonly workdir: string;
}

/** What the e2b provider needs from its host. */
export interface E2BProviderOptions {
  /** The host environment snapshot: `E2B_API_KEY`, `E2B_API_URL`, `E2B_SANDBOX_URL`, `E2B_DOMAIN`. */
  readonly hostEnv: Readonly<Record<string, string>>;
  readonly clock: Clock;
  /** @default {the SDK adapter over hostEnv} */
  readonly port?: E2BPort;
  /** 16 hex characters per command. @default {from the platform's random source} */
  readonly marker?: () => string;
}

/** Creates the `e2b` provider. */
export function createE2BProvider(o: E2BProviderOptions): SandboxProvider<E2BSpec, E2BPlan> {
  let port: Promise<E2BPort> | undefined;
  const portOf = () =>
    port ??= o.port !== undefined ? Promise.resolve(o.port) : import("./e2b/sdk_port.ts").then(
      ({ createE2BSdkPort }) => createE2BSdkPort(o.hostEnv),
    );
  return {
    name: "e2b",
    scheduling: Object.freeze({ recommendedConcurrency: 20, admission: "shared", laneKey: "e2b" }),
    plan: (spec) => Promise.resolve(planE2B(spec)),
    create: async (plan, ctx) => createE2B(await portOf(), plan, ctx, o),
    classifyCreateError: classifyE2BCreateError,
    precondition: () => e2bPrecondition(o.hostEnv),
    findOwned: async (filter, signal) => findOwnedSandboxes(await portOf(), filter, signal),
    destroyDetached: async (id, signal) => destroySandbox(await portOf(), id, signal),
  };
}

/** Rule 121: the API key comes from the environment only. */
export function e2bPrecondition(
  hostEnv: Readonly<Record<string, string>>,
): { message: string; hint: string } | null {
  if ((hostEnv.E2B_API_KEY ?? "").trim() !== "") return null;
  return {
    message: "E2B_API_KEY is not set",
    hint: "set E2B_API_KEY to an E2B API key in the environment or in .env",
  };
}

function planE2B(spec: E2BSpec): { plan: E2BPlan; identity: string; buildKeys: string[] } {
  const plan: E2BPlan = {
    template: spec.template,
    user: spec.user ?? E2B_DEFAULT_USER,
    workdir: spec.workdir ?? E2B_DEFAULT_WORKDIR,
  };
  return { plan, identity: sha256Hex(canonicalJson({ provider: "e2b", ...plan })), buildKeys: [] };
}

/** Rule 122, with kill-on-failure (rule 22). */
async function createE2B(
  port: E2BPort,
  plan: E2BPlan,
  ctx: CreateContext,
  o: E2BProviderOptions,
): Promise<E2BHandle> {
  ctx.signal.throwIfAborted();
  const lifetimeMs = Number.isFinite(ctx.lifetimeMs) ? ctx.lifetimeMs : DEFAULT_LIFETIME_MS;
  let instance: E2BInstance;
  try {
    instance = await port.create(plan.template, {
      timeoutMs: lifetimeMs,
      metadata: e2bMetadata(ctx.owner),
      signal: ctx.signal,
    });
  } catch (error) {
    throw createFailure(error, plan, lifetimeMs);
  }
  try {
    ctx.signal.throwIfAborted();
    const r = await runCollect(instance, `sh -c '${SETUP_SCRIPT}' ${shellQuote(plan.workdir)}`, {
      user: plan.user,
    });
    const shell = r.stdout.trim();
    if (r.exitCode !== 0 || (shell !== "bash" && shell !== "sh")) {
      throw new Error(
        `Cannot prepare workdir "${plan.workdir}" as user "${plan.user}": exit ${r.exitCode}: ` +
          r.stderr.trim().slice(-500),
      );
    }
    ctx.signal.throwIfAborted();
    return new E2BHandle({
      instance,
      workdir: plan.workdir,
      user: plan.user,
      shell,
      clock: o.clock,
      marker: o.marker ?? randomMarker,
    });
  } catch (error) {
    await instance.kill().catch((killError: unknown) =>
      ctx.diagnostic({
        code: "sandbox-stop-failed",
        level: "error",
        message: `Cannot kill the partial e2b sandbox: ${errorMessage(killError)}`,
        data: { sandboxId: instance.id },
      })
    );
    throw error;
  }
}

/** Credential and template errors halt the Experiment (rule 45); a refused lifetime names it. */
function createFailure(error: unknown, plan: E2BPlan, lifetimeMs: number): unknown {
  const status = statusOf(error);
  const message = errorMessage(error);
  if (hasErrorName(error, "AuthenticationError") || status === 401 || status === 403) {
    return new ProviderError(
      "fatal",
      `Cannot create an e2b sandbox: the API key in E2B_API_KEY was refused: ${message}`,
      { cause: error, scope: "experiment" },
    );
  }
  if (hasErrorName(error, "TemplateError") || status === 404 || isNotFoundName(error)) {
    return new ProviderError(
      "fatal",
      `Cannot create an e2b sandbox from template "${plan.template}": ${message}`,
      { cause: error, scope: "experiment" },
    );
  }
  if ((status === 400 || hasErrorName(error, "InvalidArgumentError")) && /timeout/i.test(message)) {
    return new ProviderError(
      "fatal",
      `Cannot create an e2b sandbox living ${lifetimeMs} ms (lifetimeMs): ${message}`,
      { cause: error },
    );
  }
  return error;
}

/** Rule 128, then the shared transport table. */
export function classifyE2BCreateError(error: unknown): CreateErrorClass {
  const status = statusOf(error);
  if (hasErrorName(error, "RateLimitError") || status === 429) return "rate_limit";
  if (
    hasErrorName(error, "AuthenticationError") || hasErrorName(error, "InvalidArgumentError") ||
    hasErrorName(error, "TemplateError") || isNotFoundName(error) ||
    status === 400 || status === 401 || status === 403 || status === 404
  ) {
    return "fatal";
  }
  if (hasErrorName(error, "TimeoutError")) return "ambiguous";
  return classifyTransportError(error);
}

function isNotFoundName(error: unknown): boolean {
  return hasErrorName(error, "NotFoundError") || hasErrorName(error, "SandboxNotFoundError");
}

function statusOf(error: unknown): number | undefined {
  const e = (typeof error === "object" && error !== null ? error : {}) as {
    statusCode?: unknown;
    status?: unknown;
  };
  const status = e.statusCode ?? e.status;
  return typeof status === "number" ? status : undefined;
}

/** 16 random lowercase hex characters. */
function randomMarker(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}
