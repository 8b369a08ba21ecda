/**
 * Runs one embedded-loader scenario in its own process and prints its result as JSON: the
 * esbuild-wasm runtime keeps timers for the life of a process, which the test sanitizers of an
 * in-process test would report. Usage: `_embedded_child.ts <scenario> <project dir> [map JSON]`.
 * With `NICEEVAL_TEST_CACHE_DIR` set, the loader uses that transform cache and the output is
 * `{ result, starts }`, `starts` counting the starts of esbuild-wasm.
 */
import { join } from "node:path";
import {
  type ApiNamespaces,
  createEmbeddedLoader,
  describeLoadError,
  type ImportMap,
  type ModuleLoader,
} from "../../src/loader/mod.ts";
import { ESBUILD_TRANSFORMER } from "../../src/loader/_cached_transform.ts";

type Scenario = (load: ModuleLoader, dir: string, api: ApiNamespaces) => Promise<unknown>;

const failure = async (promise: Promise<unknown>) => {
  try {
    await promise;
    return undefined;
  } catch (error) {
    return error as Error;
  }
};

const SCENARIOS: Record<string, Scenario> = {
  once: async (load, dir) => {
    const a = await load(join(dir, "a.ts"));
    const b = await load(join(dir, "b.ts"));
    return {
      shared: a.default === b.instance,
      count: b.count,
      again: (await load(join(dir, "a.ts"))) === a,
    };
  },
  cycle: async (load, dir) => (await load(join(dir, "a.ts"))).seen,
  isolation: async (load, dir) => {
    const first = await failure(load(join(dir, "throws.ts")));
    const second = await failure(load(join(dir, "uses.ts")));
    return {
      message: first?.message,
      sameError: first !== undefined && first === second,
      fine: (await load(join(dir, "fine.ts"))).default,
    };
  },
  frames: async (load, dir) => {
    const error = await failure(load(join(dir, "evals/throws.eval.ts")));
    return { stack: String(error?.stack), described: describeLoadError(error, dir) };
  },
  api: async (load, dir, api) => {
    const mod = await load(join(dir, "e.ts"));
    return { root: mod.same === api.root.defineEval, expect: mod.includes === api.expect.includes };
  },
  value: async (load, dir) => (await load(join(dir, "e.ts"))).default,
  error: async (load, dir) => (await failure(load(join(dir, "e.ts"))))?.message,
  meta: async (load, dir) => {
    const mod = await load(join(dir, "lib/meta.ts"));
    return { url: mod.url, dir: mod.dir };
  },
};

const [name, dir, mapText] = Deno.args;
const api: ApiNamespaces = {
  root: { defineEval: (d: unknown) => ({ eval: d }) },
  expect: { includes: () => "includes" },
  adapter: {},
  sandbox: {},
};
const importMap: ImportMap = mapText ? JSON.parse(mapText) : { imports: {}, scopes: {} };
const cacheDir = Deno.env.get("NICEEVAL_TEST_CACHE_DIR");
let starts = 0;
const { load } = createEmbeddedLoader({
  root: dir!,
  importMap,
  api,
  ...(cacheDir === undefined ? {} : {
    cacheDir,
    transformer: {
      id: ESBUILD_TRANSFORMER.id,
      start: () => {
        starts++;
        return ESBUILD_TRANSFORMER.start();
      },
    },
  }),
});
const result = (await SCENARIOS[name!]!(load, dir!, api)) ?? null;
const output = cacheDir === undefined ? result : { result, starts };
Deno.stdout.writeSync(new TextEncoder().encode(JSON.stringify(output)));
Deno.exit(0);
