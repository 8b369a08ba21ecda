/** Shared helpers of the discovery tests: fixture paths, walked files and a fake module loader. */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEFINITION_KEY } from "../../src/_shared/brand.ts";
import type { ModuleLoader } from "../../src/discovery/evals.ts";
import type { WalkedFile } from "../../src/discovery/walk.ts";

/** `tests/fixtures/<name>` as an absolute path. */
export function fixture(name: string): string {
  return fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
}

/** A walked file of a virtual project rooted at `/virtual`. */
export function walked(relative: string, root = "/virtual"): WalkedFile {
  return { root, path: join(root, relative), relative };
}

/** A loader that answers from a table of namespaces by project-relative path. */
export function fakeLoader(
  modules: Record<string, Record<string, unknown> | Error>,
  root = "/virtual",
): ModuleLoader {
  return (path) => {
    const relative = path.slice(root.length + 1);
    const found = modules[relative];
    if (found === undefined) return Promise.reject(new Error(`no module ${relative}`));
    if (found instanceof Error) return Promise.reject(found);
    return Promise.resolve(found);
  };
}

/** An object branded like a definition of another copy of the API. */
export function foreignBrand(kind: string, version: number, body: object = {}): object {
  const value = { ...body };
  Object.defineProperty(value, DEFINITION_KEY, { value: Object.freeze({ kind, version }) });
  return value;
}
