/** `defineExperiment` (authoring.md §6.1, §6.2): one agent, one model, one flag set. */
import { brand, isBranded } from "../_shared/mod.ts";
import { DefinitionError } from "../_shared/mod.ts";
import type { JsonValue } from "../_shared/mod.ts";
import { check, checkOptions, describe } from "../_shared/mod.ts";
import { MAX_ATTEMPTS, MAX_BUDGET_USD, MAX_CONCURRENCY } from "../_shared/mod.ts";
import type { Agent, DiagnosticInput, ProgressUpdate } from "../agents/mod.ts";
import { type EvalKind, type SandboxLayer, sandboxOf } from "./definitions.ts";

/** What an experiment's `evals` predicate sees of one eval. */
export interface EvalDescriptor {
  readonly id: string;
  readonly description?: string;
  readonly tags: readonly string[];
  readonly evaluationKind: EvalKind;
  readonly metadata: Readonly<Record<string, JsonValue>>;
  readonly groupId?: string;
}

/** The context of experiment `setup` and `teardown`. */
export interface ExperimentHookContext {
  readonly experimentId: string;
  readonly selectedEvalIds: readonly string[];
  readonly signal: AbortSignal;
  progress(u: ProgressUpdate): void;
  diagnostic(d: DiagnosticInput): void;
  log(message: string): void;
}

/** What `classifyFailure` sees of one terminal failure. */
export interface FailureInfo {
  readonly phase: "agent.setup" | "agent.send" | "agent.teardown" | "test" | "sandbox";
  readonly code: string;
  readonly message: string;
  readonly error: unknown;
  readonly experimentId: string;
  readonly evalId: string;
  readonly ordinal: number;
}

/** How `classifyFailure` classifies a failure. */
export interface FailureClass {
  readonly reason: string;
  readonly retryable?: boolean;
  readonly scope?: "attempt" | "eval" | "experiment";
}

/** Which evals an experiment covers. */
export type EvalSelection = "*" | readonly string[] | ((e: EvalDescriptor) => boolean);

/** What `defineExperiment` accepts. */
export interface ExperimentOptions {
  /** The agent under test; from `defineAgent` or a built-in factory. */
  agent: Agent;
  /** No line breaks; not part of any identity. */
  description?: string;
  /** Becomes `ctx.model` / `t.model`. */
  model?: string;
  /** JSON; becomes `ctx.flags` / `t.flags`; part of the configuration identity. */
  flags?: Record<string, JsonValue>;
  /** Attempts per eval (ordinals 0…n−1); default 1. */
  attempts?: number;
  /** A passed Attempt stops the eval's undispatched ordinals; default false. */
  earlyExit?: boolean;
  /** `"*"` (default), prefixes, or a predicate. */
  evals?: EvalSelection;
  /** Per-Attempt timeout in milliseconds. */
  timeoutMs?: number;
  /** Cap on this experiment's running Attempts in one invocation. */
  maxConcurrency?: number;
  /** USD of estimated cost; at or over it, new Attempts are not dispatched. */
  budget?: number;
  /** Sandbox template or layer. */
  sandbox?: SandboxLayer;
  /** Attempts share sandboxes serially; default false. */
  sandboxReuse?: boolean;
  /** Cross-invocation mutual exclusion of external state. */
  sharedState?: { key: string };
  /** Classifies terminal failures (retry, halt scope). */
  classifyFailure?: (info: FailureInfo) => FailureClass | undefined;
  /** Runs once per invocation before the first dispatched Attempt. */
  setup?: (ctx: ExperimentHookContext) => void | Promise<void>;
  /** Runs once after the last Attempt settles, if the lifecycle started. */
  teardown?: (ctx: ExperimentHookContext) => void | Promise<void>;
}

/** A validated experiment definition. */
export interface ExperimentDefinition {
  readonly agent: Agent;
  readonly description?: string;
  readonly model?: string;
  readonly flags: Readonly<Record<string, JsonValue>>;
  readonly attempts: number;
  readonly earlyExit: boolean;
  readonly evals: EvalSelection;
  readonly timeoutMs?: number;
  readonly maxConcurrency?: number;
  readonly budget?: number;
  readonly sandbox?: SandboxLayer;
  readonly sandboxReuse: boolean;
  readonly sharedState?: { readonly key: string };
  readonly classifyFailure?: (info: FailureInfo) => FailureClass | undefined;
  readonly setup?: (ctx: ExperimentHookContext) => void | Promise<void>;
  readonly teardown?: (ctx: ExperimentHookContext) => void | Promise<void>;
}

const WHAT = "defineExperiment";
const OPTIONS = {
  known: [
    "agent",
    "description",
    "model",
    "flags",
    "attempts",
    "earlyExit",
    "evals",
    "timeoutMs",
    "maxConcurrency",
    "budget",
    "sandbox",
    "sandboxReuse",
    "sharedState",
    "classifyFailure",
    "setup",
    "teardown",
  ],
  required: ["agent"],
  later: ["reasoningEffort", "labels", "judge", "plugins"],
  // Computed by niceeval, never declared (rule 2.4.4), whichever definition they are set on.
  reserved: ["id", "evaluationKind", "configHash"],
};
const SHARED_STATE_KEY_REGEXP = /^[a-z0-9][a-z0-9._/-]{0,127}$/;

/**
 * Defines an experiment: one agent, model and flag set evaluated against selected evals.
 *
 * @param def The experiment options.
 * @returns The validated, frozen experiment definition.
 * @throws {DefinitionError} When an option is unknown or invalid.
 * @example
 * ```ts
 * import { defineExperiment } from "niceeval";
 * import { scriptedAgent } from "niceeval/adapter";
 * export default defineExperiment({
 *   agent: scriptedAgent({ script: [], fallback: { text: "Hello" } }),
 *   model: "scripted-v1",
 * });
 * ```
 */
export function defineExperiment(def: ExperimentOptions): ExperimentDefinition {
  const o = checkOptions(def, OPTIONS, WHAT);
  if (!isBranded(o.agent, "agent")) {
    throw new DefinitionError(
      "definition.invalid-value",
      "agent",
      `agent must come from defineAgent or a built-in agent factory, got ${describe(o.agent)}`,
    );
  }
  const out: Record<string, unknown> = {
    agent: o.agent,
    flags: o.flags === undefined ? Object.freeze({}) : check.jsonObject(o.flags, "flags", WHAT),
    attempts: o.attempts === undefined
      ? 1
      : check.positiveInteger(o.attempts, "attempts", WHAT, MAX_ATTEMPTS),
    earlyExit: o.earlyExit === undefined ? false : check.boolean(o.earlyExit, "earlyExit", WHAT),
    evals: evalsOf(o.evals),
    sandboxReuse: o.sandboxReuse === undefined
      ? false
      : check.boolean(o.sandboxReuse, "sandboxReuse", WHAT),
  };
  if (o.description !== undefined) {
    out.description = check.string(o.description, "description", WHAT, { singleLine: true });
  }
  if (o.model !== undefined) out.model = check.string(o.model, "model", WHAT, { nonEmpty: true });
  if (o.timeoutMs !== undefined) {
    out.timeoutMs = check.positiveInteger(o.timeoutMs, "timeoutMs", WHAT);
  }
  if (o.maxConcurrency !== undefined) {
    out.maxConcurrency = check.positiveInteger(
      o.maxConcurrency,
      "maxConcurrency",
      WHAT,
      MAX_CONCURRENCY,
    );
  }
  if (o.budget !== undefined) {
    out.budget = check.nonNegativeNumber(o.budget, "budget", WHAT, MAX_BUDGET_USD);
  }
  if (o.sandbox !== undefined) out.sandbox = sandboxOf(o.sandbox, "sandbox");
  if (o.sharedState !== undefined) out.sharedState = sharedStateOf(o.sharedState);
  for (const hook of ["classifyFailure", "setup", "teardown"] as const) {
    if (o[hook] !== undefined) out[hook] = check.function(o[hook], hook, WHAT);
  }
  return Object.freeze(brand(out, "experiment")) as unknown as ExperimentDefinition;
}

function evalsOf(value: unknown): EvalSelection {
  if (value === undefined || value === "*") return "*";
  if (typeof value === "function") return value as (e: EvalDescriptor) => boolean;
  if (Array.isArray(value) && value.length > 0) {
    value.forEach((prefix, i) => check.string(prefix, `evals[${i}]`, WHAT, { nonEmpty: true }));
    return Object.freeze([...value]) as readonly string[];
  }
  throw new DefinitionError(
    "definition.invalid-value",
    "evals",
    `evals must be "*", a non-empty array of eval-ID prefixes, or a predicate, got ${
      describe(value)
    }`,
  );
}

function sharedStateOf(value: unknown): { readonly key: string } {
  const o = checkOptions(
    value,
    { known: ["key"], required: ["key"] },
    "sharedState",
    "sharedState",
  );
  const key = check.string(o.key, "sharedState.key", WHAT, { pattern: SHARED_STATE_KEY_REGEXP });
  return Object.freeze({ key });
}
