/** `niceeval clean` (CMD-17): removes unpublished Run directories and leftover temp files. */
import { join, resolve } from "node:path";
import { isoTime } from "../_shared/mod.ts";
import { lockRecordRoot, stateDirOf } from "../coordination/mod.ts";
import { isTempName, RecordReader } from "../record/mod.ts";
import { DEFAULT_RECORD_ROOT } from "./exp_defaults.ts";
import type { Io } from "./io.ts";
import { checkRecordRoot } from "./path_flags.ts";
export { CLEAN_FLAGS } from "./clean_flags.ts";

/** Runs `clean`; published Runs are never touched. */
export async function runClean(io: Io, options: { record?: string }): Promise<number> {
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
  // Markers only: a damaged published Run is left alone and never blocks the cleanup (REC-11).
  const { unpublished } = await new RecordReader(root).markers();
  for (const name of unpublished) await Deno.remove(join(root, "runs", name), { recursive: true });
  const temps = await tempFiles(root);
  for (const path of temps) await Deno.remove(path);
  io.stdout.write(
    unpublished.length > 0
      ? `removed ${unpublished.length} unpublished run(s) from ${root}\n`
      : `nothing to clean in ${root}\n`,
  );
  return 0;
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
