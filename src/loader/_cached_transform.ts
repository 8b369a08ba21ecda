/**
 * The embedded loader's transpiler behind its on-disk cache (docs/loader.md): a file is looked up
 * first, and esbuild-wasm is started only on the first file the cache does not have, so a
 * process whose files are all cached never reads, compiles or initialises `esbuild.wasm`.
 */
import { basename } from "node:path";
import type { Transformed, Transformer } from "./_transform.ts";
import { TransformCache, transformKey } from "./transform_cache.ts";

/** A transpiler that is started only when a file needs it. */
export interface TransformerSource {
  /** What its output depends on besides the file (version, options): part of every cache key. */
  id(): Promise<string>;
  /** Starts it. */
  start(): Promise<Transformer>;
}

// esbuild-wasm can be initialised once per process only, so its start is shared by all loaders.
let sharedTransformer: Promise<Transformer> | undefined;

/** esbuild-wasm: its identity costs a module import; only its start reads and compiles the wasm. */
export const ESBUILD_TRANSFORMER: TransformerSource = {
  id: () => import("./_transform.ts").then((m) => m.TRANSFORM_ID),
  async start() {
    sharedTransformer ??= import("./_transform.ts").then((m) => m.startTransformer());
    try {
      return await sharedTransformer;
    } catch (error) {
      sharedTransformer = undefined;
      throw error;
    }
  },
};

/** The transpiler of one loader, with its cache when it has a directory. */
export class CachedTransformer {
  readonly #source: TransformerSource;
  readonly #cache: TransformCache | undefined;
  #id: Promise<string> | undefined;
  #started: Promise<Transformer> | undefined;

  constructor(source: TransformerSource | undefined, cacheDir: string | undefined) {
    this.#source = source ?? ESBUILD_TRANSFORMER;
    this.#cache = cacheDir === undefined ? undefined : new TransformCache(cacheDir);
  }

  /**
   * The transform of a file: cached, else transpiled (and stored). A transpiler error goes
   * through `failure`; a failed transform is never cached.
   */
  async transform(
    source: string,
    file: { path: string; extension: string },
    failure: (error: unknown) => Error,
  ): Promise<Transformed> {
    let key: string | undefined;
    if (this.#cache !== undefined) {
      this.#id ??= this.#source.id();
      key = transformKey({
        transformer: await this.#id,
        name: basename(file.path),
        extension: file.extension,
        source,
      });
      const cached = await this.#cache.get(key);
      if (cached !== undefined) return cached;
    }
    this.#started ??= this.#source.start();
    const transformer = await this.#started;
    let transformed;
    try {
      transformed = await transformer.transform(source, file);
    } catch (error) {
      throw failure(error);
    }
    if (key !== undefined) await this.#cache?.put(key, transformed);
    return transformed;
  }
}
