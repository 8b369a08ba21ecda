/**
 * The embedded loader (toolchain.md §8.5–§8.9): user files are transpiled by esbuild-wasm, each
 * into a function obtained from one evaluated text of a few files, and evaluated once per process
 * under a registry keyed by absolute path. It serves compiled binaries and processes whose import
 * map lacks the project's names.
 */
import { Buffer } from "node:buffer";
import process from "node:process";
import { dirname, extname, relative, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { type ApiName, type ApiNamespaces, installedApi } from "./api.ts";
import { BODY_NAME, FrameRewriter } from "./_frames.ts";
import type { ImportMap } from "./import_map.ts";
import { Resolver, type Target, UnresolvedError } from "./_resolve.ts";
import { CachedTransformer, type TransformerSource } from "./_cached_transform.ts";

import type { LoadOutcome, ModuleLoader } from "./one_graph.ts";

export type { TransformerSource } from "./_cached_transform.ts";
export type { ModuleLoader } from "./one_graph.ts";

/** The loader named in messages. */
const LOADER = "embedded loader";
/** The hint for what only the native loader runs. */
const NATIVE_HINT = "run niceeval under Deno (native loader) to use it";
/**
 * Parameters of the function each file becomes (`__niceeval_import_meta` is `META_NAME` of
 * _transform.ts); the body runs in a block inside it, so user declarations of these names stay
 * legal. One evaluated text holds an array of such functions, one per file.
 */
const WRAPPER_HEAD =
  `function ${BODY_NAME}(exports, require, module, __filename, __dirname, __niceeval_import_meta, global, Buffer, process) {{`;
const WRAPPER_TAIL = "\n}},\n";
/** Strict, like the module code it stands for; one line, so body lines keep their numbers. */
const TEXT_HEAD = '"use strict";[\n';
const TEXT_TAIL = "];\n//# sourceURL=";
/**
 * The size of code one evaluated text holds: a text that fails to compile is compiled again file
 * by file, so a text stays small enough for that to be cheap (docs/loader.md).
 */
const TEXT_CHARS = 16_384;
/** Line terminators besides `\n`: a body holding one ends its text (line numbers stay exact). */
const OTHER_LINE_BREAK_REGEXP = /[\r\u2028\u2029]/;

let compiled = 0;

/** A process-unique name for one compiled text of bodies, as frames show it. */
function compiledName(): string {
  return `niceeval-embedded-${++compiled}`;
}

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
  /** The transformed code, until it is compiled into {@link body}. */
  code?: string;
  mappings?: string;
  body?: Body;
  /** Why the transformed code did not compile (fails every load that reaches the file). */
  compileError?: unknown;
  readonly json?: unknown;
  /** Resolved targets of the file's literal specifiers. */
  readonly deps: ReadonlyMap<string, Target>;
  readonly module: { exports: unknown };
  state: "ready" | "evaluating" | "done" | "failed";
  error?: unknown;
}

/** The embedded loader of one project; keep one per process so each file runs once. */
export interface EmbeddedLoader {
  /** Loads one file; `load.loadAll` loads many, their code compiled in a few modules. */
  readonly load: ModuleLoader;
}

/**
 * Creates the embedded loader of a project. Each file is evaluated at most once, however many
 * loads reach it; a file that fails to load fails every load that reaches it, and only those.
 */
export function createEmbeddedLoader(options: EmbeddedLoaderOptions): EmbeddedLoader {
  const registry = new Registry(options);
  return {
    load: Object.assign((path: string) => registry.load(path), {
      loadAll: (paths: readonly string[]) => registry.loadAll(paths),
    }),
  };
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
  /** Prepared files whose code is not compiled yet, in preparation order. */
  readonly #uncompiled: ModuleRecord[] = [];
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
    const graph = await this.#prepareGraph(path);
    this.#compile();
    return this.#evaluateGraph(graph);
  }

  /**
   * Loads `paths` in order: every graph is prepared first, the code of all their files compiled
   * in a few evaluated texts, then each is evaluated; each outcome is what `load` gives alone.
   */
  async loadAll(paths: readonly string[]): Promise<LoadOutcome[]> {
    const graphs: (ModuleRecord[] | { error: unknown })[] = [];
    for (const path of paths) {
      try {
        graphs.push(await this.#prepareGraph(path));
      } catch (error) {
        graphs.push({ error });
      }
    }
    this.#compile();
    return graphs.map((graph) => {
      if (!Array.isArray(graph)) return { ok: false, error: graph.error };
      try {
        return { ok: true, namespace: this.#evaluateGraph(graph) };
      } catch (error) {
        return { ok: false, error };
      }
    });
  }

  /** Evaluates a prepared graph's entry, unless a file of the graph did not compile. */
  #evaluateGraph(graph: readonly ModuleRecord[]): Record<string, unknown> {
    const broken = graph.find((record) => record.compileError !== undefined);
    if (broken !== undefined) throw broken.compileError;
    return this.#evaluate(graph[0]!) as Record<string, unknown>;
  }

  /**
   * Prepares `path` and every file it reaches, one at a time; throws the first failure. Returns
   * the records reached, the entry first.
   */
  async #prepareGraph(path: string): Promise<ModuleRecord[]> {
    const entry = await this.#prepare(path);
    const graph = [entry];
    const seen = new Set([path]);
    const queue = [...entry.deps.values()];
    for (let target = queue.shift(); target !== undefined; target = queue.shift()) {
      if (target.kind !== "file" || seen.has(target.path)) continue;
      seen.add(target.path);
      const record = await this.#prepare(target.path);
      graph.push(record);
      queue.push(...record.deps.values());
    }
    return graph;
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
    const source = await Deno.readTextFile(path);
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
    const record = this.#keep({
      ...base,
      code: transformed.code,
      mappings: transformed.mappings,
      deps,
    });
    this.#uncompiled.push(record);
    return record;
  }

  /**
   * Compiles the code of every prepared file not compiled yet, a few files per evaluated text;
   * a text that fails is compiled again file by file, so only the files whose code fails to
   * compile are marked.
   */
  #compile(): void {
    const records = this.#uncompiled.splice(0);
    if (records.length === 0) return;
    if (!this.#framesInstalled) {
      this.#frames.install();
      this.#framesInstalled = true;
    }
    for (const chunk of chunks(records)) {
      try {
        this.#compileText(chunk);
      } catch {
        for (const record of chunk) {
          try {
            this.#compileText([record]);
          } catch (error) {
            record.compileError = error;
          }
        }
      }
    }
  }

  /** Evaluates one text holding the bodies of `records`, and hands each its body. */
  #compileText(records: readonly ModuleRecord[]): void {
    let text = TEXT_HEAD;
    let line = 1;
    const starts: number[] = [];
    for (const record of records) {
      starts.push(line);
      text += WRAPPER_HEAD + record.code + WRAPPER_TAIL;
      // The code's own lines, then the line of the wrapper's closing braces.
      line += lineCount(record.code!) + 2;
    }
    // The name under which the runtime shows frames of these bodies (rewritten by `_frames.ts`).
    const url = compiledName();
    text += TEXT_TAIL + url;
    records.forEach((record, i) =>
      this.#frames.add(url, {
        url: pathToFileURL(record.path).href,
        line: starts[i]!,
        firstLineOffset: WRAPPER_HEAD.length,
        mappings: record.mappings!,
      })
    );
    // An indirect eval, in the global scope: an `import()` per module would make the runtime
    // process its whole module graph again each time (docs/loader.md).
    const bodies = (0, eval)(text) as Body[];
    records.forEach((record, i) => {
      record.body = bodies[i]!;
      delete record.code;
    });
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
    if (record.compileError !== undefined) throw record.compileError;
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

/**
 * Splits records into texts of about {@link TEXT_CHARS} characters of code each; a body that
 * holds a line terminator other than `\n` ends its text, so the lines after it stay exact.
 */
function chunks(records: readonly ModuleRecord[]): ModuleRecord[][] {
  const out: ModuleRecord[][] = [];
  let current: ModuleRecord[] = [];
  let size = 0;
  for (const record of records) {
    if (current.length > 0 && size + record.code!.length > TEXT_CHARS) {
      out.push(current);
      current = [];
      size = 0;
    }
    current.push(record);
    size += record.code!.length;
    if (OTHER_LINE_BREAK_REGEXP.test(record.code!)) {
      out.push(current);
      current = [];
      size = 0;
    }
  }
  if (current.length > 0) out.push(current);
  return out;
}

/** The number of `\n` in `text`. */
function lineCount(text: string): number {
  let count = 0;
  for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) count++;
  return count;
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
