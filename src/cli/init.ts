/**
 * `niceeval init [--example]` (CMD-3, CMD-4): scaffolds a project, never overwriting. It also
 * points the project's `deno.json` at the running niceeval and keeps `.niceeval/` out of git
 * (docs/install.md); those two files are merged, never replaced.
 */
import { dirname, join } from "node:path";
import { UsageError, VERSION } from "../_shared/mod.ts";
import { writeTextAtomic } from "../record/mod.ts";
import { EXAMPLE_FILES, MINIMAL_CONFIG } from "./example_files.ts";
import type { Io } from "./io.ts";
import {
  cloneEntries,
  type DenoConfigEntries,
  gitignoreWithRecord,
  jsrEntries,
  mergeDenoConfig,
  type NiceevalSource,
  sourceOf,
} from "./project_files.ts";

/** One path `init` may create. */
interface Planned {
  readonly path: string;
  readonly dir: boolean;
}

/** The package name a clone's `deno.json` carries. */
const PACKAGE_NAME = "@niceeval/cli";

/** Creates the project files; returns the exit code. */
export async function runInit(io: Io, options: { example: boolean }): Promise<number> {
  const files: Record<string, string> = options.example
    ? { ...EXAMPLE_FILES }
    : { "niceeval.config.ts": MINIMAL_CONFIG };
  const planned: Planned[] = [
    ...["evals", "experiments"].map((d) => ({ path: d, dir: true })),
    ...Object.keys(files).sort().map((f) => ({ path: f, dir: false })),
  ];
  const entries = await entriesFor(sourceOf(io.apiUrls));
  const configName = await denoConfigName(io.cwd);
  const projectFiles = [
    ...(typeof entries === "string" ? [] : [configName]),
    ".gitignore",
  ].map((path) => ({ path, dir: false }));
  await checkKinds(io.cwd, [...planned, ...projectFiles]);
  for (const item of planned) await createPath(io, item, files);
  if (typeof entries === "string") io.stdout.write(`note: ${entries}\n`);
  else await writeDenoConfig(io, configName, entries);
  await writeGitignore(io);
  io.stdout.write(
    options.example
      ? "next: niceeval exp\n"
      : "next: add an experiment under experiments/ and an eval under evals/, then run niceeval exp\n",
  );
  return 0;
}

async function createPath(io: Io, item: Planned, files: Record<string, string>): Promise<void> {
  const path = join(io.cwd, item.path);
  if (await kindOf(path) !== "missing") {
    io.stdout.write(`kept ${item.path} (exists)\n`);
    return;
  }
  if (item.dir) await Deno.mkdir(path, { recursive: true });
  else {
    await Deno.mkdir(dirname(path), { recursive: true });
    await Deno.writeTextFile(path, files[item.path]!, { createNew: true });
  }
  io.stdout.write(`created ${item.path}\n`);
}

/** The project's Deno config file: `deno.json`, else an existing `deno.jsonc`. */
async function denoConfigName(cwd: string): Promise<"deno.json" | "deno.jsonc"> {
  if (await kindOf(join(cwd, "deno.json")) !== "missing") return "deno.json";
  return await kindOf(join(cwd, "deno.jsonc")) === "missing" ? "deno.json" : "deno.jsonc";
}

/**
 * The `deno.json` entries for the running niceeval, or the note that says why there are none. A
 * `file:` entry is a clone when its directory holds the `@niceeval/cli` `deno.json`; any other
 * copy (a compiled binary's virtual files) gets the JSR specifiers of its version.
 */
async function entriesFor(source: NiceevalSource): Promise<DenoConfigEntries | string> {
  switch (source.kind) {
    case "jsr":
      return jsrEntries(source.version);
    case "npm":
      return "no niceeval entries for deno.json: under the npm package, package.json resolves niceeval";
    case "unknown":
      return source.url === undefined
        ? "no niceeval entries for deno.json: this niceeval did not report its entry URLs"
        : `no niceeval entries for deno.json: no mapping is known for "${source.url}"`;
    case "files": {
      const version = await cloneVersion(source.dir);
      return version === undefined ? jsrEntries(VERSION) : cloneEntries(source.dir, version);
    }
  }
}

/** The version in `<dir>/deno.json` when that file is niceeval's own package config. */
async function cloneVersion(dir: string): Promise<string | undefined> {
  const text = await readIfExists(join(dir, "deno.json"));
  if (text === undefined) return undefined;
  let config: { name?: unknown; version?: unknown };
  try {
    config = JSON.parse(text);
  } catch {
    return undefined; // not a package config: treated like any other copy of niceeval
  }
  if (config?.name !== PACKAGE_NAME || typeof config.version !== "string") return undefined;
  return config.version;
}

async function writeDenoConfig(io: Io, name: string, entries: DenoConfigEntries): Promise<void> {
  const path = join(io.cwd, name);
  const exists = await kindOf(path) !== "missing";
  const text = exists ? await readIfExists(path) : undefined;
  if (exists && text === undefined) {
    io.stdout.write(`kept ${name} (exists)\n`); // a dangling symlink: nothing to merge into
    return;
  }
  const change = mergeDenoConfig(text, entries, io.cwd);
  switch (change.kind) {
    case "create":
      await Deno.writeTextFile(path, change.text, { createNew: true });
      io.stdout.write(`created ${name}\n`);
      return;
    case "update":
      await writeTextAtomic(await Deno.realPath(path), change.text, io.random);
      io.stdout.write(`updated ${name}\n`);
      break;
    case "keep":
      io.stdout.write(`kept ${name} (exists)\n`);
      break;
    case "manual":
      io.stdout.write(`kept ${name} (${change.reason}); add these lines to it:\n`);
      for (const line of change.lines) io.stdout.write(`${line}\n`);
      return;
  }
  for (const note of change.notes) io.stdout.write(`note: ${note}\n`);
}

async function writeGitignore(io: Io): Promise<void> {
  const path = join(io.cwd, ".gitignore");
  const exists = await kindOf(path) !== "missing";
  const text = exists ? await readIfExists(path) : undefined;
  const updated = exists && text === undefined ? undefined : gitignoreWithRecord(text);
  if (updated === undefined) io.stdout.write("kept .gitignore (exists)\n");
  else if (!exists) {
    await Deno.writeTextFile(path, updated, { createNew: true });
    io.stdout.write("created .gitignore\n");
  } else {
    await writeTextAtomic(await Deno.realPath(path), updated, io.random);
    io.stdout.write("updated .gitignore\n");
  }
}

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
}

/** Fails (exit 2) when a planned path or one of its parents exists with the wrong type (CMD-3). */
async function checkKinds(cwd: string, planned: readonly Planned[]): Promise<void> {
  for (const item of planned) {
    // Every parent directory is checked too: a file `agents` blocks `agents/scripted.ts`.
    const parts = item.path.split("/");
    for (let i = 1; i <= parts.length; i++) {
      const path = parts.slice(0, i).join("/");
      const wanted = i < parts.length || item.dir ? "directory" : "file";
      const kind = await kindOf(join(cwd, path));
      if (kind === "missing") break;
      if (kind !== wanted) {
        throw new UsageError(
          "usage",
          `${path} exists but is a ${kind}, not a ${wanted}`,
          `move ${path} out of the way, then run niceeval init again`,
        );
      }
    }
  }
}

async function kindOf(path: string): Promise<"missing" | "file" | "directory"> {
  try {
    const info = await Deno.stat(path);
    return info.isDirectory ? "directory" : "file";
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  try {
    // A dangling symlink is not missing: writing through it would create a file elsewhere.
    await Deno.lstat(path);
    return "file";
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return "missing";
    throw error;
  }
}
