/** Runs `main` in-process on a temporary copy of a project, with a fake Io. */
import { cp } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { main } from "../../src/cli/main.ts";
import { createFakeIo } from "../_fakes/io.ts";

/** The repository root. */
export const REPO = fileURLToPath(new URL("../../", import.meta.url));
/** The day-one example project. */
export const KEYLESS = join(REPO, "examples", "keyless");

/** A temporary project directory. */
export interface LocalProject extends AsyncDisposable {
  readonly dir: string;
  /** Runs `niceeval <args>` in-process with the project as the working directory. */
  run(
    args: readonly string[],
    env?: Record<string, string>,
  ): Promise<{ code: number; stdout: string; stderr: string }>;
  /** Writes a project file, creating its directory. */
  write(path: string, text: string): Promise<void>;
}

/** Copies `source` (or nothing) into a fresh temporary directory. */
export async function localProject(source: string | null): Promise<LocalProject> {
  const dir = await Deno.makeTempDir({ prefix: "niceeval-local-" });
  if (source !== null) await cp(source, dir, { recursive: true });
  return {
    dir,
    run: async (args, env = {}) => {
      const io = createFakeIo({ cwd: dir, env });
      const code = await main(args, io);
      return { code, stdout: io.stdout.text(), stderr: io.stderr.text() };
    },
    write: async (path, text) => {
      await Deno.mkdir(dirname(join(dir, path)), { recursive: true });
      await Deno.writeTextFile(join(dir, path), text);
    },
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}
