/** Reads what the Record keeps of one Attempt, for the coding-agent end-to-end tests. */
import { join } from "node:path";
import { type AttemptFiles, readRunFiles, runIdsOf } from "../../_helpers/record_files.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

/** The summed usage of the Attempt of `evalId` as the Record keeps it. */
export async function recordUsage(project: string, evalId: string): Promise<Json> {
  return (await recordAttempt(project, evalId)).usage;
}

/** The attempt document of the (only) Attempt of `evalId` in the project's Record. */
export async function recordAttempt(project: string, evalId: string): Promise<Json> {
  return (await recordDocuments(project, evalId)).attempt;
}

/** The attempt, assertions and events documents of the (only) Attempt of `evalId`. */
export async function recordDocuments(project: string, evalId: string): Promise<AttemptFiles> {
  const root = join(project, ".niceeval", "record");
  for (const runId of await runIdsOf(root)) {
    for (const documents of (await readRunFiles(root, runId)).attempts.values()) {
      if (documents.attempt.evalId === evalId) return documents;
    }
  }
  throw new Error(`no attempt record of ${evalId} under ${root}`);
}
