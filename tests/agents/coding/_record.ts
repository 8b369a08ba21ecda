/** Reads what the Record keeps of one Attempt, for the coding-agent end-to-end tests. */
import { join } from "node:path";

// deno-lint-ignore no-explicit-any
type Json = any;

/** The summed usage of the Attempt of `evalId` as the Record keeps it. */
export async function recordUsage(project: string, evalId: string): Promise<Json> {
  return (await recordAttempt(project, evalId)).usage;
}

/** The `attempt.json` of the (only) Attempt of `evalId` in the project's Record. */
export async function recordAttempt(project: string, evalId: string): Promise<Json> {
  const root = join(project, ".niceeval", "record");
  for await (const path of walk(root)) {
    if (!path.endsWith("attempt.json")) continue;
    const attempt = JSON.parse(await Deno.readTextFile(path));
    if (attempt.evalId === evalId) return attempt;
  }
  throw new Error(`no attempt.json of ${evalId} under ${root}`);
}

async function* walk(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) yield* walk(path);
    else yield path;
  }
}
