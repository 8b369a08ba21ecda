/** Loads a project for a command: `.env`, the config, then discovery (CLI-6, CLI-7). */
import { join } from "node:path";
import { credentialValues, osErrorReason, UsageError } from "../_shared/mod.ts";
import {
  CONFIG_FILE,
  type ConfigDefinition,
  loadConfig,
  missingEnvEntries,
  parseEnvFile,
} from "../config/mod.ts";
import { type DiscoveredProject, discoverProject, type DiscoveryIssue } from "../discovery/mod.ts";
import {
  API_NAMES,
  type ApiUrls,
  createEmbeddedLoader,
  loadNative,
  type ModuleLoader,
  readProjectMap,
  transformCacheDir,
} from "../loader/mod.ts";
import type { Io } from "./io.ts";

/** A loaded project. */
export interface LoadedProject {
  readonly root: string;
  readonly config: ConfigDefinition;
  readonly discovered: DiscoveredProject;
  /** The process environment with the `.env` entries that filled gaps (credentials for agents). */
  readonly env: Readonly<Record<string, string>>;
}

/**
 * Checks that the config exists, reads `.env`, loads the config and discovers the project; throws
 * `UsageError` on bad input.
 */
export async function loadProject(
  io: Io,
  options: { experiments: boolean },
): Promise<LoadedProject> {
  const root = io.cwd;
  // Outside a project, `config-missing` says more than any problem of a stray `.env`.
  await requireConfig(root);
  const env = { ...io.env, ...Object.fromEntries(await applyEnvFile(io, root)) };
  const load = await projectLoader(io, root);
  const config = await loadConfig(root, load);
  const discovered = await discoverProject(root, {
    load,
    experiments: options.experiments,
  });
  return { root, config, discovered, env };
}

/**
 * The loader the process selected (`Io.loader`): native unless it is `embedded`. One project load per command, so the embedded registry made
 * here evaluates each file once for the config, the evals and the experiments.
 */
export async function projectLoader(io: Io, root: string): Promise<ModuleLoader> {
  if (io.loader !== "embedded") return loadNative;
  const importMap = await readProjectMap(root, io.apiUrls ?? ownApiUrls());
  return createEmbeddedLoader({ root, importMap, cacheDir: transformCacheDir(io.env) }).load;
}

/** The entries of this copy of niceeval, for an Io without them (in-process tests). */
function ownApiUrls(): ApiUrls {
  const [root, ...subpaths] = API_NAMES;
  return Object.fromEntries([
    [root, new URL("../../mod.ts", import.meta.url).href],
    ...subpaths.map((name) => [
      name,
      new URL(`../public/${name.slice("niceeval/".length)}.ts`, import.meta.url).href,
    ]),
  ]) as ApiUrls;
}

/**
 * Applies the `.env` entries that are not set yet; returns them. Every credential value of the
 * file, applied or not, is redacted from then on (CLI-8).
 */
async function applyEnvFile(io: Io, root: string): Promise<[string, string][]> {
  const path = join(root, ".env");
  let text: string;
  try {
    // A directory fails to read and a named pipe would block the open until a writer comes:
    // only a regular file (or a link to one) is read.
    const info = await Deno.stat(path);
    if (!info.isFile) {
      throw new UsageError(
        "env.invalid-file",
        `.env must be a regular file, got ${info.isDirectory ? "a directory" : "a special file"}`,
        "replace .env with a file of KEY=value lines, or remove it",
      );
    }
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    if (error instanceof UsageError) throw error;
    throw new UsageError(
      "env.invalid-file",
      `.env cannot be read: ${osErrorReason(error)}`,
      "make .env a readable file of KEY=value lines, or remove it",
    );
  }
  const entries = parseEnvFile(text);
  io.redactor.add(credentialValues(entries));
  const missing = missingEnvEntries(entries, io.env);
  for (const [key, value] of missing) io.setEnv(key, value);
  return missing;
}

/** Prints discovery warnings as `! <file>: <message>` on stderr (not under `--json`). */
export function printWarnings(io: Io, warnings: readonly DiscoveryIssue[]): void {
  for (const w of warnings) io.stderr.write(`! ${w.file}: ${w.message} [${w.code}]\n`);
}

/** Fails with `config-missing` unless the project root holds the config file (CLI-6). */
export async function requireConfig(root: string): Promise<void> {
  try {
    if ((await Deno.stat(join(root, CONFIG_FILE))).isFile) return;
  } catch {
    // Reported below.
  }
  throw new UsageError(
    "config-missing",
    `no ${CONFIG_FILE} in ${root}`,
    "run niceeval init, or change into the project directory",
  );
}
