/** JSON values as the authoring API defines them (authoring.md §0), plus hashing helpers. */
import type { createHash } from "node:crypto";

/** A value that round-trips through `JSON.stringify`/`JSON.parse` unchanged. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | readonly JsonValue[]
  | { readonly [key: string]: JsonValue };

/** Returns true for a plain object (prototype `Object.prototype` or `null`). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Returns the path of the first non-JSON part of `value` (`""` for the value itself), or
 * `undefined` when the whole value is JSON: finite numbers, plain objects and arrays, no cycles.
 */
export function findNonJson(
  value: unknown,
  path = "",
  seen = new Set<object>(),
): string | undefined {
  if (value === null || typeof value === "string" || typeof value === "boolean") return undefined;
  if (typeof value === "number") return Number.isFinite(value) ? undefined : path;
  if (typeof value !== "object") return path;
  if (seen.has(value)) return path;
  seen.add(value);
  try {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        if (!(i in value)) return `${path}[${i}]`;
        const bad = findNonJson(value[i], `${path}[${i}]`, seen);
        if (bad !== undefined) return bad;
      }
      return undefined;
    }
    if (!isPlainObject(value)) return path;
    for (const [key, child] of Object.entries(value)) {
      const bad = findNonJson(child, path === "" ? key : `${path}.${key}`, seen);
      if (bad !== undefined) return bad;
    }
    return undefined;
  } finally {
    seen.delete(value);
  }
}

/** Returns true when `value` is JSON per authoring.md §0. */
export function isJsonValue(value: unknown): value is JsonValue {
  return findNonJson(value) === undefined;
}

/** Freezes a JSON value and everything inside it; returns the same value. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** JSON text with object keys sorted, so equal values always give equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      out[key] = sortKeys((value as Record<string, unknown>)[key]);
    }
    return out;
  }
  return value;
}

/** Lowercase hex SHA-256 of a UTF-8 string or bytes. */
export function sha256Hex(input: string | Uint8Array): string {
  return hashOf("sha256").update(input).digest("hex");
}

/** `process.getBuiltinModule`, which loads a built-in module synchronously. */
interface BuiltinModules {
  getBuiltinModule(id: "node:crypto"): { createHash: typeof createHash };
}

let hashFactory: typeof createHash | undefined;

/**
 * `createHash` of `node:crypto`, loaded at the first hash: a static import would load
 * `node:crypto` into every start, `--version` included (docs/start.md).
 */
function hashOf(algorithm: string): ReturnType<typeof createHash> {
  hashFactory ??= (globalThis.process as unknown as BuiltinModules).getBuiltinModule("node:crypto")
    .createHash;
  return hashFactory(algorithm);
}
