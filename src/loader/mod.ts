/**
 * @module loader
 * Owns how user modules are loaded (the native and embedded loaders, and which one a process
 * uses), the generated import map and the API registry on `globalThis`. It never validates
 * definitions or reads the project structure.
 */
export { createNativeLoader, loadNative } from "./native.ts";
export type { NativeLoaderOptions } from "./native.ts";
export { loadInOneGraph } from "./one_graph.ts";
export type { GroupLoad, LoadOutcome, ModuleLoader } from "./one_graph.ts";
export { createEmbeddedLoader } from "./embedded.ts";
export type { EmbeddedLoader, EmbeddedLoaderOptions, TransformerSource } from "./embedded.ts";
export { transformCacheDir } from "./transform_cache.ts";
export { LOADER_KINDS, selectLoader, unmatchedAlias } from "./select.ts";
export type { LoaderFacts, LoaderKind, LoaderSelection } from "./select.ts";
export { describeLoadError } from "./load_error.ts";
export { buildImportMap, importMapText } from "./import_map.ts";
export type { BuildImportMapInput, ImportMap } from "./import_map.ts";
export { readProjectMap } from "./project_map.ts";
export { API_KEY, API_NAMES, installApi, installedApi } from "./api.ts";
export type { ApiName, ApiNamespaces, ApiUrls } from "./api.ts";
