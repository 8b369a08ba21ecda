/** `niceeval init [--example]` (CMD-3, CMD-4): scaffolds a project, never overwriting. */
import { dirname, join } from "node:path";
import { UsageError } from "../_shared/mod.ts";
import { EXAMPLE_FILES, MINIMAL_CONFIG } from "./example_files.ts";
import type { Io } from "./io.ts";

/** Creates the project files; returns the exit code. */
export async function runInit(io: Io, options: { example: boolean }): Promise<number> {
  const files: Record<string, string> = options.example
    ? { ...EXAMPLE_FILES }
    : { "niceeval.config.ts": MINIMAL_CONFIG };
  const dirs = ["evals", "experiments"];
  const planned = [
    ...dirs.map((d) => ({ path: d, dir: true })),
    ...Object.keys(files).sort().map((f) => ({ path: f, dir: false })),
  ];
  await checkKinds(io.cwd, planned);
  for (const item of planned) {
    const path = join(io.cwd, item.path);
    if (await kindOf(path) !== "missing") {
      io.stdout.write(`kept ${item.path} (exists)\n`);
      continue;
    }
    if (item.dir) await Deno.mkdir(path, { recursive: true });
    else {
      await Deno.mkdir(dirname(path), { recursive: true });
      await Deno.writeTextFile(path, files[item.path]!, { createNew: true });
    }
    io.stdout.write(`created ${item.path}\n`);
  }
  io.stdout.write(
    options.example
      ? "next: niceeval exp\n"
      : "next: add an experiment under experiments/ and an eval under evals/, then run niceeval exp\n",
  );
  return 0;
}

/** Fails (exit 2) when a planned path or one of its parents exists with the wrong type (CMD-3). */
async function checkKinds(
  cwd: string,
  planned: readonly { path: string; dir: boolean }[],
): Promise<void> {
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
