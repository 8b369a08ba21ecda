/**
 * Builds the npm package `niceeval` (toolchain.md §10.2): the four public bundles with their
 * declarations, `dist/cli.js` and `dist/import_map.mjs`, after checking `npm/package.json`
 * against `deno.json` and `deno.lock`. It ends by running `dist/cli.js --version`.
 *
 * Usage: `deno run -A --frozen scripts/build_npm.ts [--package-dir <dir>]`
 *
 * Without `--package-dir` it writes `npm/dist/`. With it, it stages a complete package in `<dir>`
 * (the files of `npm/` plus `dist/`), so that tests never write into the checkout. How the
 * declarations are produced is explained in `docs/npm.md`.
 *
 * @module
 */

import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { API_NAMES, type ApiUrls, importMapText } from "../src/loader/mod.ts";

const REPO = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");

/** A public entry: its source in `src/public/` and its bundle name in `dist/`. */
interface PublicEntry {
  readonly name: typeof API_NAMES[number];
  readonly source: string;
  readonly out: string;
}

const PUBLIC_ENTRIES: readonly PublicEntry[] = [
  { name: "niceeval", source: "src/public/root.ts", out: "mod" },
  { name: "niceeval/expect", source: "src/public/expect.ts", out: "expect" },
  { name: "niceeval/adapter", source: "src/public/adapter.ts", out: "adapter" },
  { name: "niceeval/sandbox", source: "src/public/sandbox.ts", out: "sandbox" },
];

/**
 * Packages that `dist/cli.js` imports at run time instead of bundling them, each with its reason.
 * The package lists exactly these (plus `deno`) at the versions `deno.lock` resolves.
 */
export const EXTERNALS: Readonly<Record<string, string>> = {
  "esbuild-wasm": "the embedded loader reads esbuild.wasm next to the package's own files",
  "dockerode": "the docker provider's client; loaded only when a plan uses docker",
  "e2b": "the e2b provider's client; loaded only when a plan or a sandbox command uses e2b",
  "tar-stream": "the docker provider's file transfers; loaded only when a plan uses docker",
  "@vercel/sandbox": "the vercel provider's client; loaded only when a plan uses vercel",
};

/** The bare-name prefix that stands for a relative import in the declaration stage. */
const STAGE_PREFIX = "niceeval-stage/";

/** Files of `npm/` that a staged package copies. */
const STATIC_FILES = ["package.json", "bin", "README.md", "LICENSE"];

/**
 * The module specifier of an `import` or `export … from` statement at the start of a line (so not
 * one in a doc comment's example), or of an `import("…")` call or type.
 */
const SPECIFIER_REGEXPS = [
  /^((?:import|export)\b[^;]*?\bfrom\s*|import\s*)(["'])([^"']+)\2/gm,
  /(\bimport\(\s*)(["'])([^"']+)\2/g,
];

/** Replaces each module specifier of `text` with what `map` returns for it. */
function mapSpecifiers(
  text: string,
  map: (specifier: string) => string,
): string {
  let result = text;
  for (const regexp of SPECIFIER_REGEXPS) {
    result = result.replace(
      regexp,
      (_all, head: string, quote: string, specifier: string) => {
        return `${head}${quote}${map(specifier)}${quote}`;
      },
    );
  }
  return result;
}

/** The module specifiers of `text`. */
function specifiersOf(text: string): string[] {
  const found: string[] = [];
  mapSpecifiers(text, (specifier) => {
    found.push(specifier);
    return specifier;
  });
  return found;
}

/** The pinned Deno version, from `scripts/deno` (toolchain.md §3). */
async function denoPin(): Promise<string> {
  const text = await readFile(join(REPO, "scripts/deno"), "utf8");
  const match = /^DENO_VERSION=(\S+)$/m.exec(text);
  if (match === null) {
    throw new Error("Cannot read scripts/deno: no DENO_VERSION= line");
  }
  return match[1]!;
}

/** The dependencies `npm/package.json` must list: `deno` and every external at its lock version. */
export function expectedDependencies(
  config: { imports?: Record<string, string> },
  lock: { specifiers?: Record<string, string> },
  deno: string,
): Record<string, string> {
  const expected: Record<string, string> = { deno };
  for (const name of Object.keys(EXTERNALS)) {
    const specifier = config.imports?.[name];
    const match = specifier === undefined ? null : /^npm:(.+)@\^?([^@]+)$/.exec(specifier);
    if (match === null) {
      throw new Error(
        `Cannot find the external "${name}" in deno.json imports as npm:${name}@…`,
      );
    }
    const locked = lockVersion(lock, match[1]!, match[2]!);
    if (locked === undefined) {
      throw new Error(`Cannot find "${specifier}" in deno.lock`);
    }
    expected[name] = locked;
  }
  return expected;
}

/** The version `deno.lock` resolves for `npm:<name>@<range>` (keys use the major or range). */
function lockVersion(
  lock: { specifiers?: Record<string, string> },
  name: string,
  range: string,
): string | undefined {
  const major = range.split(".")[0];
  for (
    const key of [
      `npm:${name}@${range}`,
      `npm:${name}@^${range}`,
      `npm:${name}@${major}`,
    ]
  ) {
    const version = lock.specifiers?.[key];
    if (version !== undefined) return version.replace(/_.*$/, "");
  }
  return undefined;
}

/** Fails unless `npm/package.json` agrees with `deno.json`, `deno.lock` and the root LICENSE. */
async function checkPackage(): Promise<void> {
  const config = JSON.parse(await readFile(join(REPO, "deno.json"), "utf8"));
  const lock = JSON.parse(await readFile(join(REPO, "deno.lock"), "utf8"));
  const pkg = JSON.parse(
    await readFile(join(REPO, "npm/package.json"), "utf8"),
  );
  const problems: string[] = [];
  if (pkg.version !== config.version) {
    problems.push(
      `version is "${pkg.version}", deno.json has "${config.version}"`,
    );
  }
  const expected = expectedDependencies(config, lock, await denoPin());
  const actual: Record<string, string> = pkg.dependencies ?? {};
  for (const [name, version] of Object.entries(expected)) {
    if (actual[name] !== version) {
      problems.push(
        `dependencies["${name}"] is ${JSON.stringify(actual[name])}, want "${version}"`,
      );
    }
  }
  for (const name of Object.keys(actual)) {
    if (!(name in expected)) {
      problems.push(`dependencies["${name}"] is not an external`);
    }
  }
  const license = await readFile(join(REPO, "LICENSE"), "utf8");
  if (await readFile(join(REPO, "npm/LICENSE"), "utf8") !== license) {
    problems.push("npm/LICENSE differs from LICENSE");
  }
  if (problems.length > 0) {
    throw new Error(
      `Cannot build: npm/package.json is out of date: ${problems.join("; ")}`,
    );
  }
}

/** Runs the pinned Deno; throws with its output when it fails. */
async function deno(
  args: string[],
  options: { cwd?: string } = {},
): Promise<string> {
  const output = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: options.cwd ?? REPO,
    env: { DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  if (!output.success) {
    throw new Error(
      `Cannot build: deno ${args.join(" ")} exited ${output.code}:\n` +
        decoder.decode(output.stderr) + decoder.decode(output.stdout),
    );
  }
  return decoder.decode(output.stdout);
}

/**
 * The JavaScript bundles: the four public entries, `cli.js` and `import_map.mjs`. The public
 * entries reach the provider registry, whose lazily imported providers use externals too, so they
 * are bundled together with code splitting into `dist/api/` (a lazily imported module stays lazy,
 * and code they share is one module); `dist/<entry>.js` re-exports its bundle.
 */
async function bundleJs(dist: string): Promise<void> {
  const externals = Object.keys(EXTERNALS).flatMap((name) => [name, `${name}/*`]);
  const bundle = (args: readonly string[]) =>
    deno([
      "bundle",
      "--frozen",
      "--quiet",
      "--platform",
      "deno",
      ...externals.flatMap((name) => ["--external", name]),
      ...args,
    ]);
  await bundle([
    "--code-splitting",
    "--outdir",
    join(dist, "api"),
    ...PUBLIC_ENTRIES.map((entry) => entry.source),
  ]);
  for (const entry of PUBLIC_ENTRIES) {
    const bundled = `./api/${basename(entry.source, ".ts")}.js`;
    // Deno finds the types of a `file:` import through this header; Node tools use `exports`.
    await writeFile(
      join(dist, `${entry.out}.js`),
      `/* @ts-self-types="./${entry.out}.d.ts" */\nexport * from "${bundled}";\n`,
    );
  }
  await bundleCli(dist);
  await bundle(["--output", join(dist, "import_map.mjs"), "src/loader/import_map.ts"]);
}

/**
 * `dist/cli.js` and its chunks in `dist/cli/`. Code splitting keeps each lazily imported module
 * lazy: a single-file bundle would hoist the imports of external packages (and so their loading)
 * to its top, even for `--version`. `data:` imports stay as written (the loader probe).
 */
async function bundleCli(dist: string): Promise<void> {
  const externals = ["data:*", "niceeval", "niceeval/*"];
  for (const name of Object.keys(EXTERNALS)) externals.push(name, `${name}/*`);
  await deno([
    "bundle",
    "--frozen",
    "--quiet",
    "--platform",
    "deno",
    "--code-splitting",
    ...externals.flatMap((name) => ["--external", name]),
    "--outdir",
    join(dist, "cli"),
    "npm/entry.ts",
  ]);
  await writeFile(
    join(dist, "cli.js"),
    `// The niceeval CLI of the npm package; the bundle and its chunks are in ./cli/.\n` +
      `import "./cli/entry.js";\n`,
  );
}

/** The flat name of a source file in the declaration stage: `loader/mod.ts` → `loader__mod`. */
function flatName(pathInSrc: string): string {
  return pathInSrc.replace(/\.ts$/, "").replaceAll("/", "__");
}

async function sourceFiles(dir: string, prefix = ""): Promise<string[]> {
  const files: string[] = [];
  for (
    const entry of await readdir(join(dir, prefix), { withFileTypes: true })
  ) {
    const path = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isDirectory()) files.push(...await sourceFiles(dir, path));
    else if (
      entry.name.endsWith(".ts") && !entry.name.endsWith("_test.ts")
    ) files.push(path);
  }
  return files.sort();
}

/**
 * Copies `src/` into one flat folder, each relative import rewritten to an external bare name
 * (`niceeval-stage/<flat name>.ts`). `deno bundle --declaration` inlines the declarations of every
 * module it can load and writes each declaration file under its base name into one folder; with
 * unloadable, external imports and unique base names, it emits one declaration file per module.
 */
async function stageSources(stage: string): Promise<string[]> {
  const src = join(REPO, "src");
  const files = await sourceFiles(src);
  const staged: string[] = [];
  for (const file of files) {
    const text = await readFile(join(src, file), "utf8");
    const rewritten = mapSpecifiers(text, (specifier) => {
      if (!/^\.{1,2}\//.test(specifier)) return specifier;
      return `${STAGE_PREFIX}${flatName(relative(src, join(src, dirname(file), specifier)))}.ts`;
    });
    staged.push(join(stage, `${flatName(file)}.ts`));
    // With its imports unresolved, a module's body no longer type-checks; its declarations come
    // from explicit types alone, so the check the emit runs is switched off for staged files.
    await writeFile(staged.at(-1)!, `// @ts-nocheck\n${rewritten}`);
  }
  return staged;
}

/**
 * The configuration of the declaration stage: the repository's package imports, its
 * `node_modules`, and loose compiler options. The emit type-checks each module with its staged
 * imports unresolved (so `any`), which strict options would reject; the declarations themselves
 * come from explicit types only and do not depend on the options.
 */
async function stageConfig(stage: string): Promise<void> {
  const config = JSON.parse(await readFile(join(REPO, "deno.json"), "utf8"));
  const imports: Record<string, string> = {};
  for (
    const [name, target] of Object.entries(
      config.imports as Record<string, string>,
    )
  ) {
    if (!name.startsWith("niceeval")) imports[name] = target;
  }
  await writeFile(
    join(stage, "deno.json"),
    JSON.stringify({
      imports,
      compilerOptions: { strict: false },
      nodeModulesDir: "manual",
    }),
  );
  await symlink(join(REPO, "node_modules"), join(stage, "node_modules"));
}

/** Points the staged `./<flat>.ts` specifiers at `<prefix><flat>.js` (types resolve beside it). */
function retarget(text: string, prefix: string): string {
  return mapSpecifiers(
    text,
    (specifier) => `${prefix}${specifier.slice(STAGE_PREFIX.length).replace(/\.ts$/, ".js")}`,
  );
}

/** The staged declarations reachable from the public entries, by flat name. */
async function reachableDeclarations(
  out: string,
): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  const pending = PUBLIC_ENTRIES.map((entry) => flatName(entry.source.slice("src/".length)));
  while (pending.length > 0) {
    const name = pending.pop()!;
    if (found.has(name)) continue;
    const text = await readFile(join(out, `${name}.d.ts`), "utf8");
    found.set(name, text);
    for (const specifier of specifiersOf(text)) {
      if (!specifier.startsWith(STAGE_PREFIX)) {
        throw new Error(
          `Cannot build: the declarations of src/${name.replaceAll("__", "/")}.ts import ` +
            `"${specifier}"; public declarations import only each other (toolchain.md §4.6)`,
        );
      }
      pending.push(specifier.slice(STAGE_PREFIX.length).replace(/\.ts$/, ""));
    }
  }
  return found;
}

/**
 * Writes `dist/<entry>.d.ts` and the declarations they reach in `dist/types/`. Every import of a
 * declaration file names another one of them (toolchain.md §10.6); anything else fails the build.
 * Declarations come from explicit types alone (the JSR rule), so this step needs no type check.
 */
async function buildDeclarations(dist: string): Promise<void> {
  const stage = await mkdtemp(join(tmpdir(), "niceeval-npm-types-"));
  try {
    const staged = await stageSources(stage);
    await stageConfig(stage);
    const out = join(stage, "out");
    await deno([
      "bundle",
      "--config",
      join(stage, "deno.json"),
      "--no-lock",
      "--no-check",
      "--quiet",
      "--platform",
      "deno",
      "--declaration",
      "--packages",
      "external",
      "--external",
      `${STAGE_PREFIX}*`,
      // Externals that only provider modules import; `--packages` alone still follows them.
      ...Object.keys(EXTERNALS).flatMap((
        name,
      ) => ["--external", name, "--external", `npm:${name}*`]),
      "--outdir",
      out,
      ...staged,
    ]);
    const declarations = await reachableDeclarations(out);
    await mkdir(join(dist, "types"), { recursive: true });
    for (const [name, text] of declarations) {
      await writeFile(
        join(dist, "types", `${name}.d.ts`),
        retarget(text, "./"),
      );
    }
    for (const entry of PUBLIC_ENTRIES) {
      const text = declarations.get(
        flatName(entry.source.slice("src/".length)),
      )!;
      await writeFile(
        join(dist, `${entry.out}.d.ts`),
        retarget(text, "./types/"),
      );
    }
  } finally {
    await rm(stage, { recursive: true, force: true });
  }
}

/** Copies the hand-written files of `npm/` into a staged package folder. */
async function stagePackage(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const name of STATIC_FILES) {
    await cp(join(REPO, "npm", name), join(dir, name), { recursive: true });
  }
}

/** Runs the built CLI with an import map of the four public bundles; returns what it printed. */
async function smokeTest(dist: string): Promise<string> {
  const apiUrls = Object.fromEntries(
    PUBLIC_ENTRIES.map((entry) => [entry.name, pathToFileURL(join(dist, `${entry.out}.js`)).href]),
  ) as unknown as ApiUrls;
  const dir = await mkdtemp(join(tmpdir(), "niceeval-npm-smoke-"));
  const map = join(dir, "import_map.json");
  await writeFile(map, importMapText({ imports: apiUrls, scopes: {} }));
  try {
    const args = ["run", "-A", "--no-lock", "--no-config", "--quiet", "--cached-only"];
    // The launcher's flag (npm/bin/niceeval.cjs), so that the check runs the CLI as users do.
    args.push("--unstable-lazy-dynamic-imports");
    args.push(`--import-map=${map}`, join(dist, "cli.js"), "--version");
    return (await deno(args, { cwd: dirname(dist) })).trim();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Builds the package; returns the folder that holds `package.json` and `dist/`. */
export async function buildNpm(
  options: { packageDir?: string } = {},
): Promise<string> {
  await checkPackage();
  const packageDir = options.packageDir ?? join(REPO, "npm");
  if (options.packageDir !== undefined) await stagePackage(packageDir);
  const dist = join(packageDir, "dist");
  await rm(dist, { recursive: true, force: true });
  await mkdir(dist, { recursive: true });
  await bundleJs(dist);
  await buildDeclarations(dist);
  const version = await smokeTest(dist);
  const expected = JSON.parse(await readFile(join(REPO, "deno.json"), "utf8")).version;
  if (!version.includes(expected)) {
    throw new Error(
      `Cannot build: dist/cli.js --version printed "${version}", want ${expected}`,
    );
  }
  return packageDir;
}

async function writeAll(
  stream: { write(p: Uint8Array): Promise<number> },
  text: string,
) {
  let bytes = new TextEncoder().encode(text);
  while (bytes.length > 0) bytes = bytes.subarray(await stream.write(bytes));
}

async function main(args: string[]): Promise<number> {
  const at = args.indexOf("--package-dir");
  const packageDir = at >= 0 ? args[at + 1] : undefined;
  if (
    (at >= 0 && packageDir === undefined) || args.length !== (at >= 0 ? 2 : 0)
  ) {
    await writeAll(Deno.stderr, "usage: build_npm.ts [--package-dir <dir>]\n");
    return 2;
  }
  try {
    const dir = await buildNpm(packageDir === undefined ? {} : { packageDir });
    await writeAll(Deno.stdout, `built ${join(dir, "dist")}\n`);
    return 0;
  } catch (error) {
    await writeAll(Deno.stderr, `build_npm: ${(error as Error).message}\n`);
    return 1;
  }
}

if (import.meta.main) {
  Deno.exitCode = await main(Deno.args);
}
