/**
 * Structural helpers of the value matchers: copying subjects at registration, equality of
 * `equals` (authoring.md §4.2 rule 1) and partial matching of `jsonMatch` (rule 2).
 */
import { isPlainObject } from "../_shared/mod.ts";
import { isDate, isRegExp } from "./_describe.ts";

/**
 * Copies arrays and plain objects recursively and keeps every other value by reference, so that
 * later mutation of a subject cannot change an entry. A frozen subtree that needs no copy is
 * returned as is, which keeps the identity of niceeval's own immutable snapshots.
 */
export function copyStructure<T>(value: T, seen = new Map<object, unknown>()): T {
  if (typeof value !== "object" || value === null) return value;
  const isArray = Array.isArray(value);
  if (!isArray && !isPlainObject(value)) return value;
  const known = seen.get(value);
  if (known !== undefined) return known as T;
  const copy: Record<string, unknown> | unknown[] = isArray
    ? []
    : Object.create(Object.getPrototypeOf(value));
  seen.set(value, copy);
  let changed = !Object.isFrozen(value);
  for (const [key, child] of Object.entries(value)) {
    const copied = copyStructure(child, seen);
    if (copied !== child) changed = true;
    (copy as Record<string, unknown>)[key] = copied;
  }
  if (isArray) (copy as unknown[]).length = (value as unknown[]).length;
  if (!changed) {
    seen.set(value, value);
    return value;
  }
  return copy as T;
}

/** Path of the first difference under `equals` semantics, or `undefined` when equal. */
export function firstDifference(expected: unknown, received: unknown): string | undefined {
  return differenceAt(expected, received, "$", new Map());
}

function differenceAt(
  expected: unknown,
  received: unknown,
  path: string,
  seen: Map<object, Set<object>>,
): string | undefined {
  // `+0` equals `-0`; everything else compares like Object.is.
  if (Object.is(expected, received) || (expected === 0 && received === 0)) return undefined;
  if (typeof expected !== "object" || typeof received !== "object") return path;
  if (expected === null || received === null) return path;
  if (isDate(expected) || isDate(received)) {
    const same = isDate(expected) && isDate(received) &&
      Object.is(expected.getTime(), received.getTime());
    return same ? undefined : path;
  }
  // A pair already being compared is assumed equal, so cyclic structures terminate.
  const pairs = seen.get(expected) ?? new Set<object>();
  if (pairs.has(received)) return undefined;
  pairs.add(received);
  seen.set(expected, pairs);
  if (Array.isArray(expected) || Array.isArray(received)) {
    if (!Array.isArray(expected) || !Array.isArray(received)) return path;
    if (expected.length !== received.length) return path;
    for (let i = 0; i < expected.length; i++) {
      const diff = differenceAt(expected[i], received[i], `${path}[${i}]`, seen);
      if (diff !== undefined) return diff;
    }
    return undefined;
  }
  if (!isPlainObject(expected) || !isPlainObject(received)) return path;
  const keys = Object.keys(expected);
  const receivedKeys = Object.keys(received);
  if (keys.length !== receivedKeys.length) return path;
  for (const key of keys) {
    if (!Object.hasOwn(received, key)) return childPath(path, key);
    const diff = differenceAt(expected[key], received[key], childPath(path, key), seen);
    if (diff !== undefined) return diff;
  }
  return undefined;
}

function childPath(path: string, key: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key)
    ? `${path}.${key}`
    : `${path}[${JSON.stringify(key)}]`;
}

/**
 * Checks that `pattern` is a `JsonMatch` and returns a frozen structural copy of it; throws a
 * `TypeError` naming the path of the first invalid part.
 */
export function copyJsonPattern(pattern: unknown): unknown {
  return copyPatternAt(pattern, "$", new Set());
}

function copyPatternAt(pattern: unknown, path: string, seen: Set<object>): unknown {
  if (pattern === null || typeof pattern === "string" || typeof pattern === "boolean") {
    return pattern;
  }
  if (typeof pattern === "number" || typeof pattern === "function") return pattern;
  if (isRegExp(pattern)) return pattern;
  if (typeof pattern !== "object" || seen.has(pattern)) {
    throw new TypeError(`Cannot create jsonMatch(): ${path} is not a valid JSON pattern`);
  }
  seen.add(pattern);
  try {
    if (Array.isArray(pattern)) {
      return Object.freeze(pattern.map((v, i) => copyPatternAt(v, `${path}[${i}]`, seen)));
    }
    if (!isPlainObject(pattern)) {
      throw new TypeError(`Cannot create jsonMatch(): ${path} is not a valid JSON pattern`);
    }
    const copy: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(pattern)) {
      copy[key] = copyPatternAt(value, childPath(path, key), seen);
    }
    return Object.freeze(copy);
  } finally {
    seen.delete(pattern);
  }
}

/** Path and cause of the first place where `subject` fails `pattern`, or `undefined`. */
export function jsonMismatch(pattern: unknown, subject: unknown): string | undefined {
  return mismatchAt(pattern, subject, "$");
}

function mismatchAt(pattern: unknown, subject: unknown, path: string): string | undefined {
  if (typeof pattern === "function") {
    return (pattern as (v: unknown) => unknown)(subject) === true
      ? undefined
      : `predicate failed at ${path}`;
  }
  if (isRegExp(pattern)) {
    if (typeof subject !== "string") return `not a string at ${path}`;
    pattern.lastIndex = 0;
    const found = pattern.test(subject);
    pattern.lastIndex = 0;
    return found ? undefined : `no match at ${path}`;
  }
  if (Array.isArray(pattern)) {
    if (!Array.isArray(subject)) return `not an array at ${path}`;
    if (subject.length !== pattern.length) {
      return `length ${subject.length}, expected ${pattern.length} at ${path}`;
    }
    for (let i = 0; i < pattern.length; i++) {
      const problem = mismatchAt(pattern[i], subject[i], `${path}[${i}]`);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  if (isPlainObject(pattern)) {
    if (!isPlainObject(subject)) return `not an object at ${path}`;
    for (const [key, value] of Object.entries(pattern)) {
      if (!Object.hasOwn(subject, key)) return `missing key at ${childPath(path, key)}`;
      const problem = mismatchAt(value, subject[key], childPath(path, key));
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  return Object.is(pattern, subject) ? undefined : `differs at ${path}`;
}
