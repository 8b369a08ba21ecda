/** Leftover atomic-write temp files of a Record root, as `niceeval clean` counts them. */
import { join } from "node:path";
import { isTempName } from "../../src/record/mod.ts";

/** How many temp files `clean` would remove under `root`, outside the runs it removes. */
export async function leftoverTemps(
  root: string,
  skipRuns: readonly string[] = [],
): Promise<number> {
  let n = 0;
  const walk = async (dir: string): Promise<void> => {
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      if (entry.isDirectory && !skipRuns.some((run) => path === join(root, "runs", run))) {
        await walk(path);
      } else if (entry.isFile && isTempName(entry.name)) n++;
    }
  };
  await walk(root);
  return n;
}

/** The line `clean` prints for `n` removed temp files, or nothing when there were none. */
export function tempLines(n: number, root: string): string[] {
  return n > 0 ? [`removed ${n} leftover temp file(s) from ${root}`] : [];
}
