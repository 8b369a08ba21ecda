/**
 * The embedded loader (toolchain.md §8.5–§8.9): user files are transpiled by esbuild-wasm, each
 * into a function obtained from a small `data:` module, and evaluated once per process under a
 * registry keyed by absolute path. It serves compiled binaries and processes whose import map
 * lacks the project's names.
 */
import { Buffer } from "node:buffer";
import { readFile } from "node:fs/promises";
import process from "node:process";
import { dirname, extname, relative, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { type ApiName, type ApiNamespaces, installedApi } from "./api.ts";
import { BODY_NAME, FrameRewriter } from "./_frames.ts";
import type { ImportMap } from "./import_map.ts";
import { Resolver, type Target, UnresolvedError } from "./_resolve.ts";
import { CachedTransformer, type TransformerSource } from "./_cached_transform.ts";

export type { TransformerSource } from "./_cached_transform.ts";

/** The loader named in messages. */
const LOADER = "embedded loader";
/** The hint for what only the native loader runs. */
const NATIVE_HINT = "run niceeval under Deno (native loader) to use it";
/**
 * Parameters of the function each file becomes (`__niceeval_import_meta` is `META_NAME` of
 * _transform.ts); the body runs in a block inside it, so user declarations of these names stay
 * legal.
 */
const WRAPPER_HEAD =
  `export default function ${BODY_NAME}(exports, require, module, __filename, __dirname, __niceeval_import_meta, global, Buffer, process) {{`;
const WRAPPER_TAIL = "\n}}\n";

/** Loads a user module by absolute path; returns its namespace. */
export type ModuleLoader = (path: string) => Promise<Record<string, unknown>>;

/** Options of {@link createEmbeddedLoader}. */
export interface EmbeddedLoaderOptions {
  /** The project root: messages and frames show paths relative to it. */
  readonly root: string;
  /** The generated import map of the project (bare names mapped to local files). */
  readonly importMap: ImportMap;
  /**
   * The API namespaces `niceeval*` resolve to.
   * @default the namespaces installed at `globalThis[Symbol.for("niceeval.api")]`
   */
  readonly api?: ApiNamespaces;
  /**
   * The directory of the on-disk transform cache (`transformCacheDir`, docs/loader.md).
   * @default no cache: every file is transformed
   */
  readonly cacheDir?: string | undefined;
  /**
   * The transpiler.
   * @default esbuild-wasm, started once per process on the first file the cache does not have
   */
  readonly transformer?: TransformerSource;
}

type Body = (...args: unknown[]) => void;

/** One file in the registry. */
interface ModuleRecord {
  readonly path: string;
  readonly file: string;
  readonly body?: Body;
  readonly json?: unknown;
  /** Resolved targets of the file's literal specifiers. */
  readonly deps: ReadonlyMap<string, Target>;
  readonly module: { exports: unknown };
  state: "ready" | "evaluating" | "done" | "failed";
  error?: unknown;
}

/** The embedded loader of one project; keep one per process so each file runs once. */
export interface EmbeddedLoader {
  readonly load: ModuleLoader;
}

/**
 * Creates the embedded loader of a project. Each file is evaluated at most once, however many
 * loads reach it; a file that fails to load fails every load that reaches it, and only those.
 */
export function createEmbeddedLoader(options: EmbeddedLoaderOptions): EmbeddedLoader {
  const registry = new Registry(options);
  return { load: (path) => registry.load(path) };
}

class Registry {
  readonly #root: string;
  readonly #resolver: Resolver;
  readonly #api: () => ApiNamespaces;
  readonly #transformer: CachedTransformer;
  readonly #frames = new FrameRewriter();
  readonly #prepared = new Map<string, Promise<ModuleRecord>>();
  readonly #builtins = new Map<string, Record<string, unknown>>();
  readonly #namespaces = new Map<object, object>();
  /** Prepared files, for the synchronous `require` of evaluation. */
  readonly #records = new Map<string, ModuleRecord>();
  #framesInstalled = false;

  constructor(options: EmbeddedLoaderOptions) {
    this.#root = options.root;
    this.#resolver = new Resolver(options.root, options.importMap);
    this.#api = () => {
      const api = options.api ?? installedApi();
      if (api === undefined) throw new Error("The niceeval API is not installed");
      return api;
    };
    this.#transformer = new CachedTransformer(options.transformer, options.cacheDir);
  }

  async load(path: string): Promise<Record<string, unknown>> {
    const entry = await this.#prepareGraph(path);
    return this.#evaluate(entry) as Record<string, unknown>;
  }

  /** Prepares `path` and every file it reaches, one at a time; throws the first failure. */
  async #prepareGraph(path: string): Promise<ModuleRecord> {
    const entry = await this.#prepare(path);
    const seen = new Set([path]);
    const queue = [...entry.deps.values()];
    for (let target = queue.shift(); target !== undefined; target = queue.shift()) {
      if (target.kind !== "file" || seen.has(target.path)) continue;
      seen.add(target.path);
      const record = await this.#prepare(target.path);
      queue.push(...record.deps.values());
    }
    return entry;
  }

  #prepare(path: string): Promise<ModuleRecord> {
    let prepared = this.#prepared.get(path);
    if (prepared === undefined) {
      prepared = this.#prepareFile(path);
      this.#prepared.set(path, prepared);
    }
    return prepared;
  }

  async #prepareFile(path: string): Promise<ModuleRecord> {
    const file = this.#display(path);
    const source = await readFile(path, "utf8");
    const base = { path, file, module: { exports: {} }, state: "ready" as const };
    const extension = extname(path);
    if (extension === ".json") {
      try {
        return this.#keep({ ...base, json: JSON.parse(source), deps: new Map() });
      } catch (error) {
        throw new Error(`Cannot parse ${file}: ${errorText(error)}`, { cause: error });
      }
    }
    const transformed = await this.#transformer.transform(
      source,
      { path, extension },
      (error) => transformFailure(file, error),
    );
    const deps = new Map<string, Target>();
    for (const specifier of transformed.specifiers) {
      deps.set(specifier, await this.#resolve(specifier, path, file));
    }
    const url = `data:text/javascript;base64,${
      Buffer.from(WRAPPER_HEAD + transformed.code + WRAPPER_TAIL).toString("base64")
    }`;
    this.#frames.add(url, {
      url: pathToFileURL(path).href,
      firstLineOffset: WRAPPER_HEAD.length,
      mappings: transformed.mappings,
    });
    if (!this.#framesInstalled) {
      this.#frames.install();
      this.#framesInstalled = true;
    }
    const body = (await import(url) as { default: Body }).default;
    return this.#keep({ ...base, body, deps });
  }

  #keep(record: ModuleRecord): ModuleRecord {
    this.#records.set(record.path, record);
    return record;
  }

  async #resolve(specifier: string, path: string, file: string): Promise<Target> {
    let target: Target;
    try {
      target = await this.#resolver.resolve(specifier, path);
    } catch (error) {
      if (!(error instanceof UnresolvedError)) throw error;
      throw new Error(`Cannot import "${specifier}" from ${file} (${LOADER}): ${error.message}`);
    }
    if (target.kind === "builtin" && !this.#builtins.has(target.name)) {
      this.#builtins.set(target.name, await import(target.name));
    }
    return target;
  }

  /** Runs a prepared file once; returns its `module.exports` (partial inside an import cycle). */
  #evaluate(record: ModuleRecord): unknown {
    if (record.state === "failed") throw record.error;
    if (record.state !== "ready") return record.module.exports;
    if (record.body === undefined) {
      record.state = "done";
      record.module.exports = record.json;
      return record.json;
    }
    record.state = "evaluating";
    const url = pathToFileURL(record.path).href;
    const meta = {
      url,
      filename: record.path,
      dirname: dirname(record.path),
      main: false,
      resolve: (specifier: string) => this.#metaResolve(record, specifier),
    };
    try {
      record.body.call(
        undefined,
        record.module.exports,
        (specifier: string) => this.#require(record, specifier),
        record.module,
        record.path,
        dirname(record.path),
        meta,
        globalThis,
        Buffer,
        process,
      );
      record.state = "done";
    } catch (error) {
      record.state = "failed";
      record.error = error;
      throw error;
    }
    return record.module.exports;
  }

  #require(record: ModuleRecord, specifier: string): unknown {
    const target = record.deps.get(specifier);
    if (target === undefined) {
      throw new Error(
        `Cannot import "${specifier}" from ${record.file}: a computed specifier is not ` +
          `supported by the ${LOADER}; ${NATIVE_HINT}`,
      );
    }
    // A transformed ES module flags its exports before its first import runs; a CommonJS file
    // (a package) does not, and gets a built-in's CommonJS value, as Node's require does.
    const commonJs = record.module.exports !== null && !isEsModule(record.module.exports);
    switch (target.kind) {
      case "api":
        return this.#esNamespace(this.#api()[apiKey(target.name)]);
      case "builtin": {
        const ns = this.#builtins.get(target.name)!;
        return commonJs && "default" in ns ? ns.default : this.#esNamespace(ns);
      }
      case "file": {
        // #prepareGraph prepared every file the entry reaches before evaluation began.
        const dep = this.#records.get(target.path);
        if (dep === undefined) throw new Error(`Cannot evaluate "${target.path}": not prepared`);
        return this.#evaluate(dep);
      }
    }
  }

  #metaResolve(record: ModuleRecord, specifier: string): string {
    const target = record.deps.get(specifier);
    if (target?.kind === "file") return pathToFileURL(target.path).href;
    if (target?.kind === "builtin") return target.name;
    return new URL(specifier, pathToFileURL(record.path)).href;
  }

  /** An ES namespace as CommonJS interop expects it: flagged, with live getters. */
  #esNamespace(ns: Record<string, unknown>): object {
    let wrapped = this.#namespaces.get(ns);
    if (wrapped === undefined) {
      wrapped = Object.defineProperty({}, "__esModule", { value: true });
      for (const key of Object.keys(ns)) {
        Object.defineProperty(wrapped, key, { enumerable: true, get: () => ns[key] });
      }
      this.#namespaces.set(ns, wrapped);
    }
    return wrapped;
  }

  #display(path: string): string {
    const rel = relative(this.#root, path);
    return rel.startsWith("..") ? path : rel.split(sep).join("/");
  }
}

function isEsModule(exports: unknown): boolean {
  return typeof exports === "object" && exports !== null &&
    (exports as { __esModule?: unknown }).__esModule === true;
}

function apiKey(name: ApiName): keyof ApiNamespaces {
  return name === "niceeval" ? "root" : name.slice("niceeval/".length) as keyof ApiNamespaces;
}

function transformFailure(file: string, error: unknown): Error {
  const details = error as { line?: number; column?: number; unsupported?: boolean };
  const at = details.line === undefined ? file : `${file}:${details.line}:${details.column}`;
  if (details.unsupported === true) {
    return new Error(
      `${errorText(error)} (at ${at}) is not supported by the ${LOADER}; ${NATIVE_HINT}`,
      { cause: error },
    );
  }
  return new Error(`Cannot parse ${at}: ${errorText(error)}`, { cause: error });
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
