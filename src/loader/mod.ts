/**
 * @module loader
 * Owns how user modules are loaded (the native loader) and the API registry on `globalThis`.
 * It never validates definitions or reads the project structure.
 */
export { loadNative } from "./native.ts";
export { describeLoadError } from "./load_error.ts";
export { API_KEY, API_NAMES, installApi, installedApi } from "./api.ts";
export type { ApiName, ApiNamespaces, ApiUrls } from "./api.ts";
