/**
 * Definition brands (toolchain.md §8.16). A brand lives under a `Symbol.for` key so that a
 * definition made by another copy of the API is still recognised; niceeval never uses
 * `instanceof` on definitions.
 */
import type { types } from "node:util";

/** The registry key of the brand. */
export const DEFINITION_KEY: unique symbol = Symbol.for("niceeval.definition") as never;

/** The API format version stamped into every brand. */
export const API_FORMAT_VERSION = 1;

/** What a brand says. */
interface Brand {
  readonly kind: DefinitionKind;
  readonly version: number;
}

/** Every kind of branded definition. */
type DefinitionKind =
  | "config"
  | "experiment"
  | "eval"
  | "eval-group"
  | "agent"
  | "sandbox-layer";

/** One frozen brand per kind, shared by every definition of that kind. */
const BRANDS = new Map<DefinitionKind, Brand>();

/** Stamps a (not yet frozen) object with a brand of `kind`; returns the same object. */
export function brand<T extends object>(target: T, kind: DefinitionKind): T {
  let value = BRANDS.get(kind);
  if (!value) {
    value = Object.freeze({ kind, version: API_FORMAT_VERSION });
    BRANDS.set(kind, value);
  }
  Object.defineProperty(target, DEFINITION_KEY, { value, enumerable: false });
  return target;
}

/**
 * Reads the brand of any value, or `undefined` when it has none. Never throws and runs no user
 * code: only an object (no Proxy) whose brand is an own data property counts, as `brand` makes
 * them, so a Proxy with throwing traps, a brand getter or a revoked Proxy is simply unbranded.
 */
export function readBrand(value: unknown): Brand | undefined {
  if ((typeof value !== "object" && typeof value !== "function") || value === null) {
    return undefined;
  }
  if (isProxy(value)) return undefined;
  // The brand first: an unbranded value (a dataset of 100,000 items) needs no other look.
  const stamp = Object.getOwnPropertyDescriptor(value, DEFINITION_KEY);
  if (stamp === undefined || !("value" in stamp)) return undefined;
  // A definition holds data only: a getter would run user code wherever niceeval reads it.
  const own = Object.getOwnPropertyDescriptors(value);
  if (Reflect.ownKeys(own).some((key) => !("value" in own[key as string]!))) return undefined;
  const raw = stamp.value;
  if (typeof raw !== "object" || raw === null || isProxy(raw)) return undefined;
  const kind = Object.getOwnPropertyDescriptor(raw, "kind")?.value;
  const version = Object.getOwnPropertyDescriptor(raw, "version")?.value;
  if (typeof kind !== "string" || typeof version !== "number") return undefined;
  return { kind: kind as DefinitionKind, version };
}

/** True when `value` is a Proxy (revoked ones included): its every read may run user code. */
export function isProxy(value: unknown): boolean {
  return (typeof value === "object" || typeof value === "function") && value !== null &&
    utilTypes().isProxy(value);
}

let loadedTypes: typeof types | undefined;

/**
 * `types` of `node:util`, loaded at the first check: a static import would load `node:util` into
 * every start, `--version` included (docs/start.md).
 */
function utilTypes(): typeof types {
  loadedTypes ??= (globalThis.process as unknown as {
    getBuiltinModule(id: "node:util"): { types: typeof types };
  }).getBuiltinModule("node:util").types;
  return loadedTypes;
}

/** True when `value` carries a current-version brand of `kind`. */
export function isBranded(value: unknown, kind: DefinitionKind): boolean {
  const found = readBrand(value);
  return found?.kind === kind && found.version === API_FORMAT_VERSION;
}
