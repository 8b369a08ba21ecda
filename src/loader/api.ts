/**
 * The API registry on `globalThis` (toolchain.md §8.15–§8.17): the four public namespaces the
 * CLI installs before loading user modules, so that any copy of the API is recognised.
 */

/** The registry key of the installed API namespaces. */
export const API_KEY: unique symbol = Symbol.for("niceeval.api") as never;

/** The four public API namespaces. */
export interface ApiNamespaces {
  readonly root: Record<string, unknown>;
  readonly expect: Record<string, unknown>;
  readonly adapter: Record<string, unknown>;
  readonly sandbox: Record<string, unknown>;
}

/** The bare names of the four public API entries, in the order of {@link ApiNamespaces}. */
export const API_NAMES = [
  "niceeval",
  "niceeval/expect",
  "niceeval/adapter",
  "niceeval/sandbox",
] as const;

/** One of the four bare names user files import the API by. */
export type ApiName = typeof API_NAMES[number];

/**
 * Where the running niceeval's four public entries live, as absolute URLs (`file:` in a clone or
 * an npm install, `https:` for a JSR install). Project files, import maps and the embedded loader
 * point `niceeval*` at these, so user files get the running API and its types.
 */
export type ApiUrls = Readonly<Record<ApiName, string>>;

/** Installs the namespaces at `globalThis[Symbol.for("niceeval.api")]` (first install wins). */
export function installApi(api: ApiNamespaces): ApiNamespaces {
  const global = globalThis as unknown as Record<symbol, ApiNamespaces | undefined>;
  global[API_KEY] ??= Object.freeze({ ...api });
  return global[API_KEY]!;
}

/** The installed namespaces, if any. */
export function installedApi(): ApiNamespaces | undefined {
  return (globalThis as unknown as Record<symbol, ApiNamespaces | undefined>)[API_KEY];
}
