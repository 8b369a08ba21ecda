/** Finding a published Run by its RunId or a RunId prefix, shared by `show --run` and `--compare`. */
import { UsageError } from "../_shared/mod.ts";
import type { PublishedRun } from "../record/mod.ts";

/**
 * The Run whose RunId is `id`, else the only one whose RunId starts with `id` (at least 8
 * characters); undefined when none matches, `run-ambiguous` when several do.
 */
export function runByIdOrPrefix(
  id: string,
  runs: readonly PublishedRun[],
): PublishedRun | undefined {
  const exact = runs.find((r) => r.runId === id);
  if (exact) return exact;
  const matches = id.length >= 8 ? runs.filter((r) => r.runId.startsWith(id)) : [];
  if (matches.length > 1) {
    throw new UsageError(
      "run-ambiguous",
      `run "${id}" matches ${matches.length} runs`,
      `use more characters: ${matches.slice(0, 5).map((r) => r.runId).join(", ")}`,
    );
  }
  return matches[0];
}
