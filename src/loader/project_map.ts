/**
 * Reads a project's generated import map from disk (toolchain.md §8.11): the files are read
 * asynchronously and handed to the pure {@link buildImportMap}.
 */
import { readFile } from "node:fs/promises";
import { UsageError } from "../_shared/mod.ts";
import type { ApiUrls } from "./api.ts";
import { buildImportMap, type ImportMap } from "./import_map.ts";

/** Files one map may need: the config, and the `importMap` file it names. */
const MAX_FILES = 3;
const HINT_REGEXP = /\s*\(hint: (.*)\)$/;

/** Asks the caller to read a file first (never escapes {@link readProjectMap}). */
class MissingText extends Error {
  constructor(readonly path: string) {
    super(`Cannot read "${path}" synchronously`);
  }
}

/**
 * Builds the import map of the project at `root`.
 *
 * @throws {UsageError} `config-invalid` when `deno.json`, `deno.jsonc` or the import map they
 * name is not valid JSON or has no import-map shape
 */
export async function readProjectMap(root: string, apiUrls: ApiUrls): Promise<ImportMap> {
  const texts = new Map<string, string | undefined>();
  for (let round = 0;; round++) {
    try {
      return buildImportMap({
        root,
        apiUrls,
        readText: (path) => {
          if (!texts.has(path)) throw new MissingText(path);
          return texts.get(path);
        },
      });
    } catch (error) {
      if (!(error instanceof MissingText) || round > MAX_FILES) throw asUsageError(error);
      texts.set(error.path, await readText(error.path));
    }
  }
}

async function readText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as { code?: unknown }).code === "ENOENT") return undefined;
    throw new UsageError(
      "config-invalid",
      `Cannot read "${path}": ${error instanceof Error ? error.message : error}`,
      "make the file readable, or remove it",
      { cause: error },
    );
  }
}

function asUsageError(error: unknown): unknown {
  if (!(error instanceof Error) || error instanceof UsageError) return error;
  const hint = HINT_REGEXP.exec(error.message)?.[1] ?? "fix the file named above";
  return new UsageError("config-invalid", error.message.replace(HINT_REGEXP, ""), hint, {
    cause: error,
  });
}
