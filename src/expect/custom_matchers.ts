/** Custom matchers (authoring.md §4.2): `defineValueMatch` and `defineScoreMatch`. */
import { isPlainObject } from "../_shared/mod.ts";
import { preview } from "./_describe.ts";
import {
  chain,
  createBooleanMatch,
  createScoreMatch,
  toBooleanOutcome,
  toMeasureOutcome,
} from "./_protocol.ts";
import type { MatchOutcome, ScoreMatch, ValueMatch } from "./types.ts";

/** What {@link defineValueMatch} accepts. */
export interface ValueMatchDefinition<T> {
  /** Name shown in criteria, e.g. `isValidIsbn`. */
  readonly name: string;
  /** `true`/`false`, or a full outcome; may be asynchronous. */
  evaluate(value: T): boolean | MatchOutcome | Promise<boolean | MatchOutcome>;
}

/** What {@link defineScoreMatch} accepts. */
export interface ScoreMatchDefinition<T> {
  /** Name shown in criteria, e.g. `rougeL`. */
  readonly name: string;
  /** A measurement in [0, 1], or `{ unavailable: reason }`; may be asynchronous. */
  score(
    value: T,
  ): number | { unavailable: string } | Promise<number | { unavailable: string }>;
}

function readDefinition(who: string, def: unknown, method: string): string {
  if (!isPlainObject(def)) throw new TypeError(`Cannot create ${who}: expected an object`);
  if (typeof def.name !== "string" || def.name.trim() === "") {
    throw new TypeError(`Cannot create ${who}: name must be a non-empty string`);
  }
  if (typeof def[method] !== "function") {
    throw new TypeError(`Cannot create ${who}: ${method} must be a function`);
  }
  return def.name;
}

/**
 * Defines a custom Boolean value match. A throw, or a return value that is neither a boolean nor
 * a `MatchOutcome`, makes the entry `errored`.
 *
 * @param def The name and the evaluation function.
 * @returns A value match usable with `t.check`, `and`, `or`, `not` and tool conditions.
 * @example
 * ```ts
 * import { defineValueMatch } from "niceeval/expect";
 * const isEven = defineValueMatch<number>({ name: "isEven", evaluate: (n) => n % 2 === 0 });
 * ```
 */
export function defineValueMatch<T, R = T>(def: ValueMatchDefinition<T>): ValueMatch<T, R> {
  const name = readDefinition("defineValueMatch()", def, "evaluate");
  const evaluate = def.evaluate;
  return createBooleanMatch<ValueMatch<T, R>>("value", name, {
    base: name,
    evaluate(subject) {
      return chain(evaluate.call(def, subject as T), (raw) => {
        const outcome = toBooleanOutcome(raw, name);
        // A custom matcher cannot refine; the subject is what `orStop()` resolves with.
        delete outcome.refined;
        if (typeof raw === "boolean") outcome.received = preview(subject);
        return outcome;
      });
    },
  });
}

/**
 * Defines a custom measurement. A throw, a number outside [0, 1] or a value of another shape
 * makes the entry `errored`.
 *
 * @param def The name and the scoring function.
 * @returns A measurement usable with `t.check`.
 * @example
 * ```ts
 * import { defineScoreMatch } from "niceeval/expect";
 * const brevity = defineScoreMatch<string>({
 *   name: "brevity",
 *   score: (text) => Math.max(0, 1 - text.length / 1000),
 * });
 * ```
 */
export function defineScoreMatch<T>(def: ScoreMatchDefinition<T>): ScoreMatch<T> {
  const name = readDefinition("defineScoreMatch()", def, "score");
  const score = def.score;
  return createScoreMatch<T>(name, {
    base: name,
    measure: (subject) =>
      chain(score.call(def, subject as T), (raw) => toMeasureOutcome(raw, name)),
  });
}
