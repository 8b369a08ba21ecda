/**
 * Error families shared by every domain (STYLE.md §5).
 *
 * `UsageError` and its subclasses mean "nothing can run": the CLI prints `error: … [code]` and
 * `hint: …` and exits 2. Every other error that reaches `main` is a bug (exit 3).
 */

/** A condition under which nothing can run: bad flags, invalid project, busy Record root. */
export class UsageError extends Error {
  /** Kebab-case diagnostic code, e.g. `usage`, `config-missing`. */
  readonly code: string;
  /** One concrete next step for the user. */
  readonly hint: string;
  /** Further `error:` lines printed before the hint (discovery reports every bad file). */
  readonly extraLines: readonly string[];

  constructor(
    code: string,
    message: string,
    hint: string,
    options?: ErrorOptions & { extraLines?: readonly string[] },
  ) {
    super(message, options);
    this.name = "UsageError";
    this.code = code;
    this.hint = hint;
    this.extraLines = options?.extraLines ?? [];
  }
}

/** Codes of {@link DefinitionError}. */
export type DefinitionErrorCode =
  | "definition.reserved-option"
  | "definition.unknown-option"
  | "definition.unsupported-option"
  | "definition.missing-option"
  | "definition.invalid-value";

/**
 * Thrown synchronously by every `define*` function on the first invalid option.
 *
 * @example
 * ```ts
 * import { DefinitionError, defineEval } from "niceeval";
 * try {
 *   defineEval({ timeoutMs: -1, test() {} });
 * } catch (error) {
 *   if (!(error instanceof DefinitionError)) throw error;
 *   console.error(`${error.path}: ${error.message} [${error.code}]`);
 * }
 * ```
 */
export class DefinitionError extends Error {
  /** What kind of problem the option has. */
  readonly code: DefinitionErrorCode;
  /** Path of the offending option, e.g. `sharedState.key` or `tags[2]`. */
  readonly path: string;

  constructor(code: DefinitionErrorCode, path: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "DefinitionError";
    this.code = code;
    this.path = path;
  }
}

/**
 * A misuse of the assertion API inside a test body; the Attempt becomes `errored`.
 *
 * @example
 * ```ts
 * import { AssertionAuthoringError, defineEval } from "niceeval";
 * export default defineEval({
 *   async test(t) {
 *     try {
 *       t.log(await t.sandbox.readText("notes.txt"));
 *     } catch (error) {
 *       // `no-sandbox`: the experiment runs this eval without a sandbox.
 *       const noSandbox = error instanceof AssertionAuthoringError && error.code === "no-sandbox";
 *       if (!noSandbox) throw error;
 *       t.skip("needs a sandbox");
 *     }
 *   },
 * });
 * ```
 */
export class AssertionAuthoringError extends Error {
  /** Kebab-case code such as `session-busy`, `no-sandbox` or `not-supported`. */
  readonly code: string;

  constructor(code: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "AssertionAuthoringError";
    this.code = code;
  }
}

/**
 * Thrown by a test or an agent: this Attempt errors and the Eval's remaining ordinals halt.
 *
 * @example
 * ```ts
 * import { defineEval, EvalFatalError } from "niceeval";
 * export default defineEval({
 *   async test(t) {
 *     const exists = await t.sandbox.pathExists("fixture.json");
 *     if (!exists) throw new EvalFatalError("fixture.json is missing: no ordinal can pass");
 *   },
 * });
 * ```
 */
export class EvalFatalError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "EvalFatalError";
  }
}

/**
 * Thrown by a test or an agent: this Attempt errors and the whole Experiment halts.
 *
 * @example
 * ```ts
 * import { defineEval, ExperimentFatalError } from "niceeval";
 * export default defineEval({
 *   async test(t) {
 *     if (t.model === undefined) throw new ExperimentFatalError("the experiment sets no model");
 *     await t.send("Say hello");
 *   },
 * });
 * ```
 */
export class ExperimentFatalError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ExperimentFatalError";
  }
}

/**
 * Rejection of `t.send` when the agent failed terminally; the Attempt is `errored`.
 *
 * @example
 * ```ts
 * import { AgentSendError, defineEval } from "niceeval";
 * export default defineEval({
 *   async test(t) {
 *     try {
 *       await t.send("Say hello");
 *     } catch (error) {
 *       if (error instanceof AgentSendError) t.log(`the agent failed: ${error.code}`);
 *       throw error;
 *     }
 *   },
 * });
 * ```
 */
export class AgentSendError extends Error {
  /** `agent-send-failed` or `agent-invalid-turn`. */
  readonly code: string;

  constructor(code: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "AgentSendError";
    this.code = code;
  }
}

/**
 * Returns the message of any thrown value, for one-line reports. Never throws: user code may throw
 * a Proxy, an object whose `message` getter or `toString` throws, or a symbol.
 */
export function errorMessage(error: unknown): string {
  try {
    if (error instanceof Error) return String(error.message);
    if (typeof error === "string") return error;
    try {
      return JSON.stringify(error) ?? String(error);
    } catch {
      return String(error);
    }
  } catch {
    return `a thrown ${typeof error} that cannot be described`;
  }
}

/**
 * Checks a thrown value's `name`, which survives two copies of the API (no `instanceof`). A value
 * whose `name` cannot be read has no name.
 */
export function hasErrorName(error: unknown, name: string): boolean {
  try {
    return typeof error === "object" && error !== null &&
      (error as { name?: unknown }).name === name;
  } catch {
    return false;
  }
}
