/**
 * The transpiler of the embedded loader (toolchain.md §8.5–§8.6): esbuild-wasm's browser build,
 * started once from the package's `esbuild.wasm`. Each file becomes a CommonJS-style body whose
 * imports are `require` calls, with its source map and the list of specifiers it imports. This
 * module is imported lazily: commands that load no user file never start esbuild.
 */
import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import * as esbuild from "esbuild-wasm/esm/browser.js";

/** Name of the `import.meta` object inside a transformed body. */
export const META_NAME = "__niceeval_import_meta";

/**
 * A dynamic `import()` with a computed specifier, as esbuild lowers it. Literal ones become
 * `require("<specifier>")` and are resolved ahead like static imports.
 */
const COMPUTED_IMPORT_REGEXP =
  /Promise\.resolve\(\)\.then\(\(\) => (?:__toESM\d*\()?require\((?!"(?:[^"\\\n]|\\.)*"\))/;

/** A transformed file. */
export interface Transformed {
  /** The CommonJS-style body. */
  readonly code: string;
  /** The `mappings` of its source map (generated → original positions). */
  readonly mappings: string;
  /** Every literal specifier it imports or requires. */
  readonly specifiers: readonly string[];
}

/** A failure to transform a file, with the 1-based position when esbuild gave one. */
export class TransformError extends Error {
  readonly line: number | undefined;
  readonly column: number | undefined;
  /** True when the file uses what the embedded loader cannot run (top-level await). */
  readonly unsupported: boolean;

  constructor(
    message: string,
    details: { line?: number; column?: number; unsupported?: boolean } = {},
  ) {
    super(message);
    this.name = "TransformError";
    this.line = details.line;
    this.column = details.column;
    this.unsupported = details.unsupported ?? false;
  }
}

/** The esbuild loader of each file extension. */
const LOADERS: Readonly<Record<string, esbuild.Loader>> = {
  ".ts": "ts",
  ".mts": "ts",
  ".tsx": "tsx",
  ".jsx": "jsx",
  ".js": "js",
  ".mjs": "js",
  ".cjs": "js",
};

/**
 * Version of what this module does around esbuild (the plugin, the checks and the clean-up of its
 * output). Bump it whenever that changes: it is part of every transform cache key.
 */
const TRANSFORM_FORMAT = 2;

/** esbuild's build options, the per-file `stdin` and the plugin aside. */
const BUILD_OPTIONS = {
  bundle: true,
  write: false,
  format: "cjs",
  platform: "neutral",
  target: "esnext",
  outfile: "/out.js",
  sourcemap: "external",
  logLevel: "silent",
  legalComments: "none",
  define: { "import.meta": META_NAME },
  supported: { "dynamic-import": false, decorators: false },
} as const satisfies esbuild.BuildOptions;

/**
 * Identifies the output of {@link startTransformer}'s transformer for a given file: esbuild's
 * version, its options and {@link TRANSFORM_FORMAT}. The transform cache keys entries by it.
 */
export const TRANSFORM_ID: string = JSON.stringify({
  format: TRANSFORM_FORMAT,
  esbuild: esbuild.version,
  options: BUILD_OPTIONS,
  loaders: LOADERS,
});

/** Transforms source files to CommonJS-style bodies. */
export interface Transformer {
  transform(source: string, options: { path: string; extension: string }): Promise<Transformed>;
}

/** Starts esbuild from the `esbuild.wasm` of the installed package (no worker). */
export async function startTransformer(): Promise<Transformer> {
  const wasm = await readFile(new URL(import.meta.resolve("esbuild-wasm/esbuild.wasm")));
  await esbuild.initialize({
    wasmModule: await WebAssembly.compile(new Uint8Array(wasm)),
    worker: false,
  });
  return { transform };
}

async function transform(
  source: string,
  options: { path: string; extension: string },
): Promise<Transformed> {
  const specifiers = new Set<string>();
  let result: esbuild.BuildResult<{ write: false }>;
  try {
    result = await esbuild.build({
      stdin: {
        contents: source,
        loader: LOADERS[options.extension] ?? "ts",
        // esbuild names the module after it in the output; the name alone keeps the output the
        // same wherever the project lives, so copies of a project share cache entries.
        sourcefile: basename(options.path),
        resolveDir: "/",
      },
      ...BUILD_OPTIONS,
      plugins: [{
        name: "niceeval-imports",
        setup(build: esbuild.PluginBuild) {
          build.onResolve({ filter: /.*/ }, (args) => {
            specifiers.add(args.path);
            return { path: args.path, external: true };
          });
        },
      }],
    });
  } catch (error) {
    throw transformError(error);
  }
  const files = result.outputFiles ?? [];
  const code = files.find((file) => file.path.endsWith(".js"))?.text ?? "";
  const map = files.find((file) => file.path.endsWith(".map"))?.text ?? "{}";
  const computed = COMPUTED_IMPORT_REGEXP.exec(code);
  if (computed) {
    throw new TransformError("import() with a computed specifier", { unsupported: true });
  }
  const mappings = (JSON.parse(map) as { mappings?: unknown }).mappings;
  return {
    code: code.replace(/\n\/\/# sourceMappingURL=.*\n?$/, "\n"),
    mappings: typeof mappings === "string" ? mappings : "",
    specifiers: [...specifiers],
  };
}

function transformError(error: unknown): Error {
  const first = (error as { errors?: esbuild.Message[] }).errors?.[0];
  if (first === undefined) return error instanceof Error ? error : new Error(String(error));
  const unsupported = /top-level await/i.test(first.text);
  return new TransformError(unsupported ? "top-level await" : first.text, {
    ...(first.location ? { line: first.location.line, column: first.location.column + 1 } : {}),
    unsupported,
  });
}
