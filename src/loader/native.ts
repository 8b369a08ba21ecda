/**
 * The native loader (toolchain.md §8.4): Deno imports user files itself, once per process. Many
 * files load through one generated entry module (docs/loader.md "One module graph").
 */
import { pathToFileURL } from "node:url";
import { GroupUnavailable, loadInOneGraph, type ModuleLoader } from "./one_graph.ts";

/** Options of {@link createNativeLoader} (tests). */
export interface NativeLoaderOptions {
  /**
   * Imports a module by URL.
   * @default the runtime's own `import()`
   */
  readonly importModule?: (url: string) => Promise<unknown>;
  /**
   * The directory of the generated entry modules.
   * @default the OS temp directory
   */
  readonly tempDir?: string;
}

/**
 * Creates a native loader: `load(path)` imports one file; `loadAll(paths)` imports them all in a
 * single `import()` of a generated entry module in the OS temp directory, removed once loaded.
 */
export function createNativeLoader(options: NativeLoaderOptions = {}): ModuleLoader {
  const importModule = options.importModule ?? ((url: string) => import(url));
  const single = async (path: string) =>
    await importModule(pathToFileURL(path).href) as Record<string, unknown>;
  const group = async (paths: readonly string[]) => {
    const entry = await writeEntry(paths, options.tempDir);
    try {
      const namespace = await importModule(pathToFileURL(entry).href) as Record<string, unknown>;
      return paths.map((_, i) => namespace[`m${i}`] as Record<string, unknown>);
    } finally {
      await Deno.remove(entry).catch(() => {
        // Already gone; the OS temp directory is cleaned anyway.
      });
    }
  };
  return Object.assign(single, {
    loadAll: (paths: readonly string[]) => loadInOneGraph(paths, group, single),
  });
}

/** Loads user modules with the runtime's own `import()`. */
export const loadNative: ModuleLoader = createNativeLoader();

/** Writes the entry module that re-exports each file's namespace as `m0`, `m1`, …; its path. */
async function writeEntry(paths: readonly string[], dir: string | undefined): Promise<string> {
  const text = paths
    .map((path, i) => `export * as m${i} from ${JSON.stringify(pathToFileURL(path).href)};\n`)
    .join("");
  let entry: string | undefined;
  try {
    entry = await Deno.makeTempFile({
      prefix: "niceeval-graph-",
      suffix: ".mjs",
      ...(dir === undefined ? {} : { dir }),
    });
    await Deno.writeTextFile(entry, text);
    return entry;
  } catch (error) {
    if (entry !== undefined) await Deno.remove(entry).catch(() => {});
    throw new GroupUnavailable(`Cannot write the entry module: ${error}`, { cause: error });
  }
}
