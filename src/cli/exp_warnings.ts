/** Reader warnings shared by `exp`, `exp --dry` and `show`. */
import type { SalvageOutcome } from "../record/mod.ts";

/** The REC-10 reader warning, or undefined when every Run directory is published. */
export function unpublishedWarning(
  unpublished: readonly string[],
  recordRoot: string,
): string | undefined {
  if (unpublished.length === 0) return undefined;
  return `${unpublished.length} unpublished run(s) in ${recordRoot} ignored (in progress, or left by a killed process; niceeval clean removes leftovers)`;
}

/** What salvage did (or, `dry`, would do) to Runs left by killed processes; undefined if nothing. */
export function salvageNotice(
  outcomes: readonly SalvageOutcome[],
  recordRoot: string,
  dry: boolean,
): string | undefined {
  const salvaged = outcomes.filter((o) => o.kind === "salvaged");
  if (salvaged.length === 0) return undefined;
  const kept = salvaged.reduce((sum, o) => sum + o.kept, 0);
  const interrupted = salvaged.reduce((sum, o) => sum + o.interrupted, 0);
  const what = `${salvaged.length} run(s) left unpublished by a killed process in ${recordRoot}`;
  const counts = `${kept} finished Attempt(s) kept, ${interrupted} slot(s) interrupted`;
  return dry
    ? `${what} would be salvaged by the next run: ${counts}`
    : `salvaged ${what}: ${counts}; published as crashed`;
}
