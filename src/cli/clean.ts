/**
 * `niceeval clean` (CMD-17): salvages the Runs that killed processes left unpublished (their
 * finished Attempts are kept, docs/record.md), removes the unpublished Runs that cannot be kept,
 * and leftover temp files. `--discard` removes every unpublished Run instead.
 */
import { join, resolve } from "node:path";
import { isoTime } from "../_shared/mod.ts";
import { lockRecordRoot, stateDirOf } from "../coordination/mod.ts";
import { isTempName, RecordReader, type SalvageOutcome, salvageRuns } from "../record/mod.ts";
import { DEFAULT_RECORD_ROOT } from "./exp_defaults.ts";
import type { Io } from "./io.ts";
import { checkRecordRoot } from "./path_flags.ts";
export { CLEAN_FLAGS } from "./clean_flags.ts";

/** Runs `clean`; published Runs are never touched. */
export async function runClean(
  io: Io,
  options: { record?: string; discard?: boolean },
): Promise<number> {
  const root = resolve(io.cwd, options.record ?? DEFAULT_RECORD_ROOT);
  await checkRecordRoot(root, options.record);
  try {
    await Deno.stat(root);
  } catch {
    io.stdout.write(`nothing to clean in ${root}\n`);
    return 0;
  }
  await using _lock = await lockRecordRoot(root, stateDirOf(io.env), {
    pid: io.pid,
    hostname: io.hostname,
    startedAt: isoTime(io.clock.now()),
  });
  const salvaged: SalvageOutcome[] = [];
  if (!options.discard) {
    const outcomes = await salvageRuns(new RecordReader(root), {
      clock: io.clock,
      redactor: io.redactor,
    });
    salvaged.push(...outcomes.filter((o) => o.kind === "salvaged"));
  }
  // Markers only: a damaged published Run is left alone and never blocks the cleanup (REC-11).
  const { unpublished } = await new RecordReader(root).markers();
  for (const name of unpublished) await Deno.remove(join(root, "runs", name), { recursive: true });
  const temps = await tempFiles(root);
  for (const path of temps) await Deno.remove(path);
  io.stdout.write(reportOf(salvaged, { runs: unpublished.length, temps: temps.length }, root));
  return 0;
}

/** What `clean` says: one line per kind of work done, or that there was none. */
function reportOf(
  salvaged: readonly SalvageOutcome[],
  removed: { readonly runs: number; readonly temps: number },
  root: string,
): string {
  const lines: string[] = [];
  if (salvaged.length > 0) {
    const kept = salvaged.reduce((sum, o) => sum + (o.kind === "salvaged" ? o.kept : 0), 0);
    lines.push(
      `salvaged ${salvaged.length} run(s) left by a killed process in ${root}: ${kept} finished Attempt(s) kept, published as crashed`,
    );
  }
  if (removed.runs > 0) lines.push(`removed ${removed.runs} unpublished run(s) from ${root}`);
  if (removed.temps > 0) {
    lines.push(`removed ${removed.temps} leftover temp file(s) from ${root}`);
  }
  if (lines.length === 0) lines.push(`nothing to clean in ${root}`);
  return lines.join("\n") + "\n";
}

/** Leftover atomic-write temp files anywhere under the root (REC-8 names). */
async function tempFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) out.push(...await tempFiles(path));
    else if (entry.isFile && isTempName(entry.name)) out.push(path);
  }
  return out;
}
