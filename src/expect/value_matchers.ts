/** Value matchers (authoring.md §4.2): equality, JSON patterns, schemas, predicates. */
import { isJsonValue, type JsonValue } from "../_shared/mod.ts";
import { nameArgument, preview, quoted, truncate } from "./_describe.ts";
import { chain, createBooleanMatch } from "./_protocol.ts";
import { copyJsonPattern, copyStructure, firstDifference, jsonMismatch } from "./_structure.ts";
import type { ValueMatch } from "./types.ts";

/** A partial JSON pattern of {@link jsonMatch}. */
export type JsonMatch =
  | string
  | number
  | boolean
  | null
  | RegExp
  | ((v: unknown) => boolean)
  | readonly JsonMatch[]
  | { readonly [k: string]: JsonMatch };

/**
 * Matches a value structurally equal to `expected`: primitives by `Object.is` (`+0` equals `-0`),
 * arrays element-wise, plain objects by own enumerable keys, `Date`s by time, other objects by
 * identity.
 *
 * @param expected The value to compare with; arrays and plain objects are copied at creation.
 * @returns A value match.
 * @example
 * ```ts
 * import { equals } from "niceeval/expect";
 * const exactAnswer = equals({ city: "Brooklyn", sky: "sunny" });
 * ```
 */
export function equals<const T>(expected: T): ValueMatch<unknown, T> {
  const reference = copyStructure(expected);
  return createBooleanMatch<ValueMatch<unknown, T>>("value", `equals(${nameArgument(expected)})`, {
    base: "equals",
    evaluate(subject) {
      const diff = firstDifference(reference, subject);
      return {
        result: diff === undefined ? "matched" : "mismatched",
        expected: preview(reference),
        received: preview(subject),
        ...(diff === undefined || diff === "$" ? {} : { reason: `differs at ${diff}` }),
      };
    },
  });
}

/**
 * Matches a value partially: object patterns need every listed key (extra keys are allowed),
 * array patterns need the same length, a `RegExp` needs a matching string, a function must
 * return `true`, other leaves compare with `Object.is`.
 *
 * @param expected The pattern.
 * @returns A value match.
 * @example
 * ```ts
 * import { jsonMatch } from "niceeval/expect";
 * const brooklyn = jsonMatch({ city: /brooklyn/i, days: (v) => typeof v === "number" });
 * ```
 */
export function jsonMatch(expected: JsonMatch): ValueMatch<unknown, unknown> {
  const reference = copyJsonPattern(expected);
  return createBooleanMatch<ValueMatch<unknown, unknown>>(
    "value",
    `jsonMatch(${nameArgument(reference)})`,
    {
      base: "jsonMatch",
      evaluate(subject) {
        const problem = jsonMismatch(reference, subject);
        return {
          result: problem === undefined ? "matched" : "mismatched",
          expected: preview(reference),
          received: preview(subject),
          ...(problem === undefined ? {} : { reason: problem }),
        };
      },
    },
  );
}

/** The minimal Standard Schema v1 interface that {@link matches} reads. */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (
      value: unknown,
    ) => StandardSchemaResult<Output> | Promise<StandardSchemaResult<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
  };
}

/** Result of a Standard Schema validation. */
type StandardSchemaResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<{ readonly message: string }> };

/** The output type of a Standard Schema. */
type InferSchemaOutput<S extends StandardSchemaV1> = NonNullable<
  S["~standard"]["types"]
>["output"];

/**
 * Matches a value that a Standard Schema v1 validates; `orStop()` resolves with the schema's
 * output value.
 *
 * @param schema Any Standard Schema (zod, valibot, arktype, …).
 * @returns A value match refined to the schema's output type.
 * @example
 * ```ts
 * import { matches, type StandardSchemaV1 } from "niceeval/expect";
 * declare const forecast: StandardSchemaV1<unknown, { sky: string }>;
 * const isForecast = matches(forecast);
 * ```
 */
export function matches<S extends StandardSchemaV1>(
  schema: S,
): ValueMatch<unknown, InferSchemaOutput<S>> {
  const standard = (schema as Partial<StandardSchemaV1> | null)?.["~standard"];
  if (typeof standard?.validate !== "function") {
    throw new TypeError("Cannot create matches(): argument is not a Standard Schema");
  }
  const vendor = typeof standard.vendor === "string" ? standard.vendor : "schema";
  const expected = `${vendor} schema`;
  return createBooleanMatch<ValueMatch<unknown, InferSchemaOutput<S>>>(
    "value",
    `matches(${vendor})`,
    {
      base: "matches",
      evaluate(subject) {
        return chain(standard.validate(subject), (result) => {
          if (typeof result !== "object" || result === null) {
            throw new TypeError(`${vendor} validate() returned no result object`);
          }
          if (result.issues !== undefined) {
            const messages = Array.from(result.issues, (issue) => String(issue?.message));
            return {
              result: "mismatched",
              reason: truncate(messages.join("; ") || "validation failed"),
              expected,
              received: preview(subject),
            };
          }
          if (!("value" in result)) throw new TypeError(`${vendor} validate() returned no value`);
          return { result: "matched", expected, refined: { value: result.value } };
        });
      },
    },
  );
}

function labelled(base: string, label: string | undefined): string {
  if (label !== undefined && typeof label !== "string") {
    throw new TypeError(`Cannot create ${base}(): label must be a string`);
  }
  return label === undefined ? `${base}()` : `${base}(${quoted(label)})`;
}

/**
 * Matches anything except `null` and `undefined`; `orStop()` resolves with the narrowed value.
 *
 * @param label Optional name of what must be defined.
 * @returns A value match refined to `NonNullable<T>`.
 * @example
 * ```ts
 * import { isDefined } from "niceeval/expect";
 * const hasData = isDefined<{ id: string } | undefined>("structured output");
 * ```
 */
export function isDefined<T = unknown>(label?: string): ValueMatch<T, NonNullable<T>> {
  return createBooleanMatch<ValueMatch<T, NonNullable<T>>>("value", labelled("isDefined", label), {
    base: "isDefined",
    evaluate(subject) {
      const defined = subject !== null && subject !== undefined;
      return {
        result: defined ? "matched" : "mismatched",
        expected: "defined",
        received: preview(subject),
      };
    },
  });
}

function exactly(base: "isTrue" | "isFalse", wanted: boolean, label: string | undefined) {
  return createBooleanMatch<ValueMatch<unknown, boolean>>("value", labelled(base, label), {
    base,
    evaluate(subject) {
      const result = subject === wanted ? "matched" : "mismatched";
      return { result, expected: wanted, received: preview(subject) };
    },
  });
}

/**
 * Matches exactly `true`.
 *
 * @param label Optional name of the flag.
 * @returns A value match.
 * @example
 * ```ts
 * import { isTrue } from "niceeval/expect";
 * const confirmed = isTrue("order confirmed");
 * ```
 */
export function isTrue(label?: string): ValueMatch<unknown, true> {
  return exactly("isTrue", true, label) as ValueMatch<unknown, true>;
}

/**
 * Matches exactly `false`.
 *
 * @param label Optional name of the flag.
 * @returns A value match.
 * @example
 * ```ts
 * import { isFalse } from "niceeval/expect";
 * const notEscalated = isFalse("escalated");
 * ```
 */
export function isFalse(label?: string): ValueMatch<unknown, false> {
  return exactly("isFalse", false, label) as ValueMatch<unknown, false>;
}

/**
 * Matches a value for which `predicate` returns `true` (or a promise of `true`). Any other
 * return value makes the entry `errored`.
 *
 * @param label What the predicate checks; used in criteria.
 * @param predicate The check; it may be asynchronous.
 * @returns A value match.
 * @example
 * ```ts
 * import { satisfies } from "niceeval/expect";
 * const short = satisfies("at most 3 lines", (text: string) => text.split("\n").length <= 3);
 * ```
 */
export function satisfies<T>(
  label: string,
  predicate: (value: T) => boolean | Promise<boolean>,
): ValueMatch<T, T> {
  if (typeof label !== "string" || label === "") {
    throw new TypeError("Cannot create satisfies(): label must be a non-empty string");
  }
  if (typeof predicate !== "function") {
    throw new TypeError("Cannot create satisfies(): predicate must be a function");
  }
  return createBooleanMatch<ValueMatch<T, T>>("value", `satisfies(${quoted(label)})`, {
    base: "satisfies",
    evaluate(subject) {
      return chain(predicate(subject as T), (answer) => {
        if (typeof answer !== "boolean") {
          throw new TypeError(
            `satisfies(${quoted(label)}) returned ${typeof answer}, not a boolean`,
          );
        }
        return {
          result: answer ? "matched" : "mismatched",
          expected: label,
          received: preview(subject),
        };
      });
    },
  });
}

/**
 * Matches a command result (`t.sandbox.runCommand`) whose `exitCode` is 0.
 *
 * @returns A value match; any other subject is `mismatched` with reason `not-a-command-result`.
 * @example
 * ```ts
 * import { commandSucceeded } from "niceeval/expect";
 * const testsPass = commandSucceeded();
 * ```
 */
export function commandSucceeded(): ValueMatch<unknown, unknown> {
  return createBooleanMatch<ValueMatch<unknown, unknown>>("value", "commandSucceeded()", {
    base: "commandSucceeded",
    evaluate(subject) {
      const exitCode = (subject as { exitCode?: unknown } | null)?.exitCode;
      if (typeof subject !== "object" || subject === null || typeof exitCode !== "number") {
        return {
          result: "mismatched",
          reason: "not-a-command-result",
          expected: 0,
          received: preview(subject),
        };
      }
      if (exitCode === 0) return { result: "matched", expected: 0, received: 0 };
      const stderr = (subject as { stderr?: unknown }).stderr;
      const tail = typeof stderr === "string" ? stderr.trim().slice(-200) : "";
      const received: JsonValue = isJsonValue(exitCode) ? exitCode : String(exitCode);
      return { result: "mismatched", expected: 0, received, ...(tail ? { reason: tail } : {}) };
    },
  });
}
