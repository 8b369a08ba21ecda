/**
 * `defineEval`, `defineScoreEval`, `defineEvalGroup` and `defineExperiment` (authoring.md §2, §6.1).
 * Each validates synchronously, throws `DefinitionError` on the first problem, and returns a
 * frozen, branded definition.
 */
import { brand, isBranded } from "../_shared/mod.ts";
import { DefinitionError } from "../_shared/mod.ts";
import type { JsonValue } from "../_shared/mod.ts";
import { check, checkOptions, describe } from "../_shared/mod.ts";
import type { SandboxLayer } from "../sandbox/mod.ts";
import type { ScoreTestContext, TestContext } from "./test_context.ts";

/** A sandbox template or layer from `niceeval/sandbox` (Sandboxes chapter). */
export type { SandboxLayer };

/** The kind of an eval: pass/fail or earned points. */
export type EvalKind = "pass" | "score";

/** Options shared by `defineEval` and `defineScoreEval`; `C` is the test context type. */
export interface EvalOptions<C> {
  /** Shown by list and show; no effect on results. */
  description?: string;
  /** Default []; non-empty, no whitespace; duplicates dropped. */
  tags?: readonly string[];
  /** Per-Attempt limit in milliseconds. */
  timeoutMs?: number;
  /** JSON; part of the eval's identity. */
  metadata?: Record<string, JsonValue>;
  /** Template or prepare layer from `niceeval/sandbox`. */
  sandbox?: SandboxLayer;
  /** The test body. */
  test(t: C): void | Promise<void>;
}

/**
 * Options of `defineScoreEval`: the shared ones plus what a score is measured against
 * (docs/scores.md).
 */
export interface ScoreEvalOptions<C> extends EvalOptions<C> {
  /**
   * The possible score: the most one Attempt can earn, a finite number > 0. Default: the sum of the
   * points of the Attempt's `.score(points)` entries; needed for a maximum when `t.score` is used.
   */
  maxPoints?: number;
  /**
   * Pass threshold in points, a finite number ≥ 0 (at most `maxPoints`): an Attempt that earns
   * less is `failed` (exit code 1, a JUnit failure). Default: none, a score never fails.
   */
  passAt?: number;
}

/** A validated eval definition. */
export interface EvalDefinition<K extends EvalKind = EvalKind, C = unknown> {
  readonly evaluationKind: K;
  /** Score evals: the declared possible score, when declared. */
  readonly maxPoints?: number;
  /** Score evals: the declared pass threshold in points, when declared. */
  readonly passAt?: number;
  readonly description?: string;
  readonly tags: readonly string[];
  readonly timeoutMs?: number;
  readonly metadata: Readonly<Record<string, JsonValue>>;
  readonly sandbox?: SandboxLayer;
  /**
   * The test body. Method syntax on purpose: it keeps `EvalDefinition<"pass", TestContext>`
   * assignable to the plain `EvalDefinition` that groups and discovery hold.
   */
  test(t: C): void | Promise<void>;
}

const EVAL_OPTIONS = {
  known: ["description", "tags", "timeoutMs", "metadata", "sandbox", "test"],
  required: ["test"],
  later: ["judge", "reporters", "plugins", "diff"],
  reserved: ["id", "evaluationKind", "configHash"],
};

/** Options only score evals have. */
const SCORE_ONLY = ["maxPoints", "passAt"];

const SCORE_EVAL_OPTIONS = { ...EVAL_OPTIONS, known: [...EVAL_OPTIONS.known, ...SCORE_ONLY] };

/** Shared by every eval that declares none (a dataset of 10,000 evals holds one of each). */
const NO_TAGS: readonly string[] = Object.freeze([]);
const NO_METADATA: Readonly<Record<string, JsonValue>> = Object.freeze({});

/** A base class whose constructor returns its argument, so that a subclass stamps that object. */
const Stampable = class {
  constructor(target: object) {
    return target;
  }
} as new (target: object) => object;

/**
 * Marks the eval definitions this copy of the API made. They are frozen, and so are their tags
 * and metadata: discovery's second validation has nothing to add for them (a 100,000-eval dataset
 * skips 100,000 remakes), while a brand from another copy of the API, or a forged one, is still
 * validated again. The mark is a private field, which no other code can read or copy, and which
 * costs a definition no memory (a set of them would hold 40 bytes per eval).
 */
class MadeHere extends Stampable {
  #made = true;

  /** Stamps `target`, which must not be frozen yet. */
  static stamp(target: object): void {
    new MadeHere(target);
  }

  static has(value: object): boolean {
    return #made in value;
  }
}

/** True for an eval definition that this copy of the API made (see {@link MadeHere}). */
export function madeHere(value: unknown): boolean {
  return typeof value === "object" && value !== null && MadeHere.has(value);
}

/** Validates eval options for either kind. */
export function makeEval<K extends EvalKind, C>(
  kind: K,
  def: EvalOptions<C> | ScoreEvalOptions<C>,
): EvalDefinition<K, C> {
  const what = kind === "pass" ? "defineEval" : "defineScoreEval";
  if (kind === "pass") rejectScoreOptions(def);
  const o = checkOptions(def, kind === "pass" ? EVAL_OPTIONS : SCORE_EVAL_OPTIONS, what);
  const out: Record<string, unknown> = {
    evaluationKind: kind,
    tags: o.tags === undefined ? NO_TAGS : check.tags(o.tags, "tags", what),
    metadata: o.metadata === undefined
      ? NO_METADATA
      : check.jsonObject(o.metadata, "metadata", what),
    test: check.function(o.test, "test", what),
  };
  if (o.description !== undefined) {
    out.description = check.string(o.description, "description", what, { singleLine: true });
  }
  if (o.timeoutMs !== undefined) {
    out.timeoutMs = check.positiveInteger(o.timeoutMs, "timeoutMs", what);
  }
  if (o.sandbox !== undefined) out.sandbox = sandboxOf(o.sandbox, "sandbox");
  if (o.maxPoints !== undefined) {
    out.maxPoints = check.positiveNumber(o.maxPoints, "maxPoints", what);
  }
  if (o.passAt !== undefined) {
    if (typeof o.passAt === "string") {
      throw new DefinitionError(
        "definition.invalid-value",
        "passAt",
        `passAt must be a number of points ≥ 0, got ${
          describe(o.passAt)
        }: for a share of the possible score, write that share of maxPoints (0.8 × maxPoints)`,
      );
    }
    out.passAt = check.nonNegativeNumber(o.passAt, "passAt", what);
    const max = out.maxPoints as number | undefined;
    if (max !== undefined && (out.passAt as number) > max) {
      throw new DefinitionError(
        "definition.invalid-value",
        "passAt",
        `passAt must be at most maxPoints (${max}), got ${describe(o.passAt)}`,
      );
    }
  }
  MadeHere.stamp(out);
  return Object.freeze(brand(out, "eval")) as unknown as EvalDefinition<K, C>;
}

/** `maxPoints` and `passAt` belong to score evals: a pass eval naming one is a mistake. */
function rejectScoreOptions(def: unknown): void {
  if (typeof def !== "object" || def === null) return;
  for (const key of SCORE_ONLY) {
    if ((def as Record<string, unknown>)[key] === undefined) continue;
    throw new DefinitionError(
      "definition.unknown-option",
      key,
      `${key} is an option of defineScoreEval: a defineEval eval passes or fails on its checks`,
    );
  }
}

/** A validated eval group definition. */
export interface EvalGroupDefinition {
  readonly evals: readonly EvalDefinition[];
  readonly onUnavailable: "stop-group" | "replace-sandbox";
  readonly sandbox?: SandboxLayer;
  readonly description?: string;
}

/** What `defineEvalGroup` accepts. */
export interface EvalGroupOptions {
  /** Non-empty; discovered definitions. */
  evals: readonly EvalDefinition[];
  /** What happens when the shared sandbox fails; required. */
  onUnavailable: "stop-group" | "replace-sandbox";
  /** Template or layer shared by all members. */
  sandbox?: SandboxLayer;
  description?: string;
}

const GROUP_OPTIONS = {
  known: ["evals", "onUnavailable", "sandbox", "description"],
  required: ["evals", "onUnavailable"],
  later: ["plugins"],
  // A group's ID is its directory (rule 1.4.1); computed keys are never declared (rule 2.4.4).
  reserved: ["id", "evaluationKind", "configHash"],
};

/**
 * Defines an eval group: members run one at a time in one shared sandbox per experiment.
 *
 * @param def The group's members and options.
 * @returns The validated, frozen group definition.
 * @throws {DefinitionError} When an option is unknown or invalid.
 * @example
 * ```ts
 * import { defineEval, defineEvalGroup } from "niceeval";
 * // In evals/repo/eval-group.ts, members are imported from their *.eval.ts files.
 * const member = defineEval({ test() {} });
 * const group = defineEvalGroup({ evals: [member], onUnavailable: "stop-group" });
 * ```
 */
export function defineEvalGroup(def: EvalGroupOptions): EvalGroupDefinition {
  const what = "defineEvalGroup";
  const o = checkOptions(def, GROUP_OPTIONS, what);
  if (!Array.isArray(o.evals) || o.evals.length === 0) {
    throw new DefinitionError(
      "definition.invalid-value",
      "evals",
      `evals must be a non-empty array of eval definitions, got ${describe(o.evals)}`,
    );
  }
  o.evals.forEach((member, i) => {
    if (!isBranded(member, "eval")) {
      throw new DefinitionError(
        "definition.invalid-value",
        `evals[${i}]`,
        `evals[${i}] must be a defineEval or defineScoreEval result`,
      );
    }
  });
  if (o.onUnavailable !== "stop-group" && o.onUnavailable !== "replace-sandbox") {
    throw new DefinitionError(
      "definition.invalid-value",
      "onUnavailable",
      `onUnavailable must be "stop-group" or "replace-sandbox", got ${describe(o.onUnavailable)}`,
    );
  }
  const out: Record<string, unknown> = {
    evals: Object.freeze([...o.evals]),
    onUnavailable: o.onUnavailable,
  };
  if (o.sandbox !== undefined) out.sandbox = sandboxOf(o.sandbox, "sandbox");
  if (o.description !== undefined) {
    out.description = check.string(o.description, "description", what, { singleLine: true });
  }
  return Object.freeze(brand(out, "eval-group")) as unknown as EvalGroupDefinition;
}

function sandboxOf(value: unknown, path: string): SandboxLayer {
  if (!isBranded(value, "sandbox-layer")) {
    throw new DefinitionError(
      "definition.invalid-value",
      path,
      `${path} must be a sandbox template or layer from niceeval/sandbox, got ${describe(value)}`,
    );
  }
  return value as SandboxLayer;
}

/** Exposes the sandbox check to the experiment definition module. */
export { sandboxOf };

/**
 * Defines a pass/fail eval: one test case, run against every experiment that selects it.
 *
 * @param def The eval options and its `test(t)` body.
 * @returns The validated, frozen eval definition.
 * @throws {DefinitionError} When an option is unknown or invalid.
 * @example
 * ```ts
 * import { defineEval } from "niceeval";
 * import { includes } from "niceeval/expect";
 * export default defineEval({
 *   async test(t) {
 *     await t.send("Say hello");
 *     t.check(t.reply, includes("Hello"));
 *   },
 * });
 * ```
 */
export function defineEval(def: EvalOptions<TestContext>): EvalDefinition<"pass", TestContext> {
  return makeEval("pass", def);
}

/**
 * Defines a score eval: its result is earned points out of a possible score; with `passAt`, an
 * Attempt that earns less fails.
 *
 * @param def The eval options and its `test(t)` body.
 * @returns The validated, frozen eval definition.
 * @throws {DefinitionError} When an option is unknown or invalid.
 * @example
 * ```ts
 * import { defineScoreEval } from "niceeval";
 * export default defineScoreEval({
 *   maxPoints: 2,
 *   passAt: 1.5,
 *   test(t) {
 *     t.score(2).label("fixed two points");
 *   },
 * });
 * ```
 */
export function defineScoreEval(
  def: ScoreEvalOptions<ScoreTestContext>,
): EvalDefinition<"score", ScoreTestContext> {
  return makeEval("score", def);
}
