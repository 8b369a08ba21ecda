/**
 * The `SandboxError` family (sandboxes.md §2.5). Callers recognise these errors by `name` and
 * `code`, never by `instanceof`, so an error from another copy of the API still counts.
 */
import type { CommandResult, CreateErrorClass } from "./types.ts";

/**
 * The base of every sandbox error; an uncaught one makes the Attempt `errored` with `code`.
 *
 * @example
 * ```ts
 * import { defineEval } from "niceeval";
 * import type { SandboxError } from "niceeval/sandbox";
 * export default defineEval({
 *   async test(t) {
 *     try {
 *       await t.sandbox.runShellOrThrow("make");
 *     } catch (error) {
 *       // Recognised by `name` and `code`, so an error from another copy of the API counts too.
 *       const code = (error as Partial<SandboxError>).code;
 *       if (typeof code === "string" && code.startsWith("sandbox-")) t.log(`failed: ${code}`);
 *       throw error;
 *     }
 *   },
 * });
 * ```
 */
export class SandboxError extends Error {
  /** Kebab-case code, e.g. `sandbox-command-failed`. */
  readonly code: string;

  /**
   * @param code The kebab-case code.
   * @param message Sentence-case message without a final period.
   * @param options `cause` of the error.
   */
  constructor(code: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "SandboxError";
    this.code = code;
  }
}

/**
 * Factory or layer options are invalid (`sandbox-config-invalid`).
 *
 * @example
 * ```ts
 * import { localSandbox, type SandboxConfigError } from "niceeval/sandbox";
 * try {
 *   localSandbox({ passEnv: [""] });
 * } catch (error) {
 *   if ((error as Error).name !== "SandboxConfigError") throw error;
 *   console.error(`option ${(error as SandboxConfigError).option} is invalid`);
 * }
 * ```
 */
export class SandboxConfigError extends SandboxError {
  /** Path of the offending option, e.g. `fixture` or `passEnv[1]`. */
  readonly option: string;

  constructor(option: string, message: string, options?: ErrorOptions) {
    super("sandbox-config-invalid", message, options);
    this.name = "SandboxConfigError";
    this.option = option;
  }
}

/**
 * An `*OrThrow` command exited non-zero (`sandbox-command-failed`).
 *
 * @example
 * ```ts
 * import { defineEval } from "niceeval";
 * import type { SandboxCommandError } from "niceeval/sandbox";
 * export default defineEval({
 *   async test(t) {
 *     try {
 *       await t.sandbox.runShellOrThrow("npm test");
 *     } catch (error) {
 *       if ((error as Error).name !== "SandboxCommandError") throw error;
 *       t.log((error as SandboxCommandError).result.stderr);
 *     }
 *   },
 * });
 * ```
 */
export class SandboxCommandError extends SandboxError {
  /** The complete result of the command. */
  readonly result: CommandResult;

  constructor(result: CommandResult, message: string, options?: ErrorOptions) {
    super("sandbox-command-failed", message, options);
    this.name = "SandboxCommandError";
    this.result = result;
  }
}

/**
 * A command exceeded its limit (`sandbox-command-timeout`).
 *
 * @example
 * ```ts
 * import { defineEval } from "niceeval";
 * import type { SandboxTimeoutError } from "niceeval/sandbox";
 * export default defineEval({
 *   async test(t) {
 *     try {
 *       await t.sandbox.runShell("npm run build", { timeoutMs: 60_000 });
 *     } catch (error) {
 *       if ((error as Error).name !== "SandboxTimeoutError") throw error;
 *       t.log(`the build ran over ${(error as SandboxTimeoutError).limitMs} ms`);
 *     }
 *   },
 * });
 * ```
 */
export class SandboxTimeoutError extends SandboxError {
  /** The limit that passed. */
  readonly limitMs: number;
  /** True when the caller gave `timeoutMs`; false when the Attempt deadline gave it. */
  readonly explicit: boolean;

  constructor(limitMs: number, explicit: boolean, message: string, options?: ErrorOptions) {
    super("sandbox-command-timeout", message, options);
    this.name = "SandboxTimeoutError";
    this.limitMs = limitMs;
    this.explicit = explicit;
  }
}

/**
 * A signal aborted the command (`sandbox-command-aborted`); `cause` is the signal's reason.
 *
 * @example
 * ```ts
 * import { defineEval } from "niceeval";
 * export default defineEval({
 *   async test(t) {
 *     const stop = AbortSignal.any([t.signal, AbortSignal.timeout(5_000)]);
 *     try {
 *       await t.sandbox.runShell("tail -f server.log", { signal: stop });
 *     } catch (error) {
 *       if ((error as Error).name !== "SandboxAbortedError") throw error;
 *     }
 *   },
 * });
 * ```
 */
export class SandboxAbortedError extends SandboxError {
  constructor(message: string, options?: ErrorOptions) {
    super("sandbox-command-aborted", message, options);
    this.name = "SandboxAbortedError";
  }
}

/**
 * The handle was retired or stopped, or the lease ended (`sandbox-retired`).
 *
 * @example
 * ```ts
 * import { SandboxRetiredError } from "niceeval/sandbox";
 * // Inside a custom provider: a call on a stopped VM.
 * class VmConnection {
 *   #stopped = false;
 *   stop(): void {
 *     this.#stopped = true;
 *   }
 *   run(script: string): void {
 *     if (this.#stopped) throw new SandboxRetiredError(`Cannot run "${script}": VM stopped`);
 *   }
 * }
 * ```
 */
export class SandboxRetiredError extends SandboxError {
  constructor(message: string, options?: ErrorOptions) {
    super("sandbox-retired", message, options);
    this.name = "SandboxRetiredError";
  }
}

/**
 * An option is not in the handle's capabilities (`sandbox-unsupported`).
 *
 * @example
 * ```ts
 * import { defineEval } from "niceeval";
 * export default defineEval({
 *   async test(t) {
 *     try {
 *       await t.sandbox.runShell("whoami", { user: "root" });
 *     } catch (error) {
 *       if ((error as Error).name !== "SandboxUnsupportedError") throw error;
 *       t.skip("the provider cannot run commands as another user");
 *     }
 *   },
 * });
 * ```
 */
export class SandboxUnsupportedError extends SandboxError {
  /** `user` or `stdin`. */
  readonly option: string;

  constructor(option: string, message: string, options?: ErrorOptions) {
    super("sandbox-unsupported", message, options);
    this.name = "SandboxUnsupportedError";
    this.option = option;
  }
}

/**
 * A path does not exist (`sandbox-file-not-found`).
 *
 * @example
 * ```ts
 * import { defineEval } from "niceeval";
 * export default defineEval({
 *   async test(t) {
 *     let report = "";
 *     try {
 *       report = await t.sandbox.readText("report.md");
 *     } catch (error) {
 *       if ((error as Error).name !== "SandboxFileNotFoundError") throw error;
 *     }
 *     t.log(report === "" ? "no report written" : report);
 *   },
 * });
 * ```
 */
export class SandboxFileNotFoundError extends SandboxError {
  /** The normalized sandbox path. */
  readonly path: string;

  constructor(path: string, message: string, options?: ErrorOptions) {
    super("sandbox-file-not-found", message, options);
    this.name = "SandboxFileNotFoundError";
    this.path = path;
  }
}

/**
 * Empty or NUL path, a directory read, or a local path escape (`sandbox-path-invalid`).
 *
 * @example
 * ```ts
 * import { defineEval } from "niceeval";
 * import type { SandboxPathError } from "niceeval/sandbox";
 * export default defineEval({
 *   async test(t) {
 *     try {
 *       await t.sandbox.readText("src");
 *     } catch (error) {
 *       if ((error as Error).name !== "SandboxPathError") throw error;
 *       t.log(`not a file: ${(error as SandboxPathError).path}`);
 *     }
 *   },
 * });
 * ```
 */
export class SandboxPathError extends SandboxError {
  /** The path as given. */
  readonly path: string;

  constructor(path: string, message: string, options?: ErrorOptions) {
    super("sandbox-path-invalid", message, options);
    this.name = "SandboxPathError";
    this.path = path;
  }
}

/** Data of a failed create (rule 45). */
interface CreateFailure {
  readonly provider: string;
  readonly class: CreateErrorClass;
  readonly tries: number;
  readonly message: string;
}

/** Create failed for good (`sandbox-create-failed`, rule 45). */
export class SandboxCreateError extends SandboxError {
  readonly data: CreateFailure;
  /** `experiment` for credential or template errors; else `attempt`. */
  readonly scope: "attempt" | "experiment";
  /** The retries made before the create failed for good, per class. */
  readonly retries: readonly { readonly class: CreateErrorClass; readonly count: number }[];

  constructor(
    data: CreateFailure,
    scope: "attempt" | "experiment",
    options?: ErrorOptions,
    retries: readonly { readonly class: CreateErrorClass; readonly count: number }[] = [],
  ) {
    super(
      "sandbox-create-failed",
      `Cannot create sandbox "${data.provider}" after ${data.tries} ${
        data.tries === 1 ? "try" : "tries"
      } (${data.class}): ${data.message}`,
      options,
    );
    this.name = "SandboxCreateError";
    this.data = data;
    this.scope = scope;
    this.retries = retries;
  }
}

/**
 * A provider's own classified create error: built-in providers throw it so that niceeval can
 * classify the failure and tell credential or template errors (scope `experiment`) apart.
 */
export class ProviderError extends Error {
  readonly kind: CreateErrorClass;
  /** `experiment` halts the Experiment's dispatch (rule 45). */
  readonly scope: "attempt" | "experiment";

  constructor(
    kind: CreateErrorClass,
    message: string,
    options?: ErrorOptions & { scope?: "attempt" | "experiment" },
  ) {
    super(message, options);
    this.name = "ProviderError";
    this.kind = kind;
    this.scope = options?.scope ?? "attempt";
  }
}

/** A pool failure (§6): `sandbox-pool-frozen`, `sandbox-reuse-git-missing`, … */
export class SandboxPoolError extends SandboxError {
  /** `experiment` halts the Experiment's dispatch. */
  readonly scope: "attempt" | "experiment";
  /** The phase of a new instance that failed (`sandbox.create`, `sandbox.setup`, …), if any. */
  readonly phase: string | undefined;
  /** Details, e.g. the create failure of rule 45. */
  readonly data: unknown;

  constructor(
    code: string,
    message: string,
    options?: ErrorOptions & { scope?: "attempt" | "experiment"; phase?: string; data?: unknown },
  ) {
    super(code, message, options);
    this.name = "SandboxPoolError";
    this.scope = options?.scope ?? "attempt";
    this.phase = options?.phase;
    this.data = options?.data;
  }
}

const SANDBOX_ERROR_NAMES = new Set([
  "SandboxError",
  "SandboxConfigError",
  "SandboxCommandError",
  "SandboxTimeoutError",
  "SandboxAbortedError",
  "SandboxRetiredError",
  "SandboxUnsupportedError",
  "SandboxFileNotFoundError",
  "SandboxPathError",
  "SandboxCreateError",
  "SandboxPoolError",
]);

/** True for any `SandboxError`, also one made by another copy of the API (checks name and code). */
export function isSandboxError(error: unknown): error is SandboxError {
  if (typeof error !== "object" || error === null) return false;
  const { name, code } = error as { name?: unknown; code?: unknown };
  return typeof name === "string" && SANDBOX_ERROR_NAMES.has(name) && typeof code === "string";
}

/** True when `error` is a sandbox error with `code` (across API copies). */
export function hasSandboxCode(error: unknown, code: string): boolean {
  return isSandboxError(error) && error.code === code;
}
