/** Loads `niceeval.config.ts` from the project root (authoring.md §1.1 rules 1–2). */
import { API_FORMAT_VERSION, readBrand } from "../_shared/mod.ts";
import { errorMessage, hasErrorName, UsageError } from "../_shared/mod.ts";
import { type ConfigDefinition, defineConfig } from "./define.ts";

/** The config file name; the project root is the directory that holds it. */
export const CONFIG_FILE = "niceeval.config.ts";

/** Loads a user module and returns its namespace. */
type ModuleLoader = (path: string) => Promise<Record<string, unknown>>;

/**
 * Imports the config module and checks its default export. Throws `config-missing`,
 * `config.import-failed` or `config-invalid` as {@link UsageError}.
 */
export async function loadConfig(root: string, load: ModuleLoader): Promise<ConfigDefinition> {
  // `node:path` and the loader load only when a config is read: the public root, which every
  // start loads, reaches this module (docs/start.md).
  const { join } = await import("node:path");
  const path = join(root, CONFIG_FILE);
  try {
    const info = await Deno.stat(path);
    if (!info.isFile) throw new Deno.errors.NotFound();
  } catch {
    throw new UsageError(
      "config-missing",
      `no ${CONFIG_FILE} in ${root}`,
      "run niceeval init, or change into the project directory",
    );
  }
  let mod: Record<string, unknown>;
  try {
    mod = await load(path);
  } catch (error) {
    if (hasErrorName(error, "DefinitionError")) {
      const e = error as Error & { path?: string };
      throw new UsageError(
        "config-invalid",
        `${CONFIG_FILE}: ${e.message}`,
        "fix the option named above; see the defineConfig options",
        { cause: error },
      );
    }
    const { describeLoadError } = await import("../loader/mod.ts");
    throw new UsageError(
      "config.import-failed",
      `${CONFIG_FILE}: cannot load: ${describeLoadError(error, root)}`,
      "fix the error above, then run the command again",
      { cause: error },
    );
  }
  const config = mod.default;
  const found = readBrand(config);
  if (found?.kind === "config" && found.version !== API_FORMAT_VERSION) {
    throw new UsageError(
      "config-invalid",
      `${CONFIG_FILE}: the config was made by an API of format version ${found.version}; this niceeval reads version ${API_FORMAT_VERSION}`,
      `map "niceeval" to the running niceeval's version (API format ${API_FORMAT_VERSION})`,
    );
  }
  if (found?.kind !== "config") {
    throw new UsageError(
      "config-invalid",
      `${CONFIG_FILE}: the default export must be defineConfig({...})`,
      'write: import { defineConfig } from "niceeval"; export default defineConfig({});',
    );
  }
  checkShape(config as object);
  return config as ConfigDefinition;
}

/**
 * Validates a branded config again through `defineConfig`: a brand made by another copy of the
 * API, or forged by hand, proves nothing about the values behind it, and later code trusts them.
 */
function checkShape(config: object): void {
  try {
    // readBrand admitted data properties only, so spreading runs no user code.
    defineConfig({ ...config });
  } catch (error) {
    throw new UsageError(
      "config-invalid",
      `${CONFIG_FILE}: ${
        hasErrorName(error, "DefinitionError")
          ? errorMessage(error)
          : `the default export cannot be read: ${errorMessage(error).split("\n")[0]}`
      }`,
      'write: import { defineConfig } from "niceeval"; export default defineConfig({});',
      { cause: error },
    );
  }
}
