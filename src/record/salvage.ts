/**
 * Salvage of Runs left unpublished by a process that is gone (docs/record.md): their synced
 * settled Attempts are kept, every other slot becomes `interrupted`, and the Run is published with
 * `completion: "crashed"`. Only the holder of the Record-root lock salvages: under that lock no
 * other process writes, so every unpublished Run belongs to a process that died.
 *
 * A torn tail of the log (never synced: a batch is acknowledged only after its sync) is cut off
 * before anything is appended; nothing that was synced is ever rewritten.
 */
import { join } from "node:path";
import type { Clock, Redactor } from "../_shared/mod.ts";
import { childPath, createExclusive, DirectorySyncer, isTempName } from "./atomic.ts";
import { endRecord, LOG_NAME, memberRecord } from "./documents.ts";
import { frameAt, recordLine } from "./log.ts";
import { RunLog } from "./_run_log.ts";
import { indexRunLog, LogProblem, type RunIndex } from "./_run_index.ts";
import { RUN_HEADER_SCHEMA } from "./schema.ts";
import { isRecordUuid } from "./ids.ts";
import type { RecordReader } from "./reader.ts";

/** What salvage found (or would do) for one unpublished Run directory. */
export type SalvageOutcome =
  /** Sealed and published: `kept` settled Attempts, `interrupted` slots without a result. */
  | {
    readonly kind: "salvaged";
    readonly runId: string;
    readonly kept: number;
    readonly interrupted: number;
  }
  /** A directory with no header: the process died before the Run held anything; removed. */
  | { readonly kind: "empty"; readonly runId: string }
  /** Not salvageable (a layout-1 Run, or a damaged header or log): left for `clean`. */
  | { readonly kind: "skipped"; readonly runId: string; readonly reason: string };

/** Options of {@link salvageRuns}. */
export interface SalvageOptions {
  readonly clock: Clock;
  readonly redactor?: Redactor;
  /** Only count what salvage would do; write nothing. */
  readonly dryRun?: boolean;
}

/**
 * Salvages every unpublished Run of the root. The caller holds the root lock (or, with `dryRun`,
 * knows that no process holds it).
 */
export async function salvageRuns(
  reader: RecordReader,
  options: SalvageOptions,
): Promise<SalvageOutcome[]> {
  const { unpublished } = await reader.markers();
  const outcomes: SalvageOutcome[] = [];
  for (const name of unpublished) {
    if (!isRecordUuid(name)) {
      outcomes.push({ kind: "skipped", runId: name, reason: "the directory name is not a RunId" });
      continue;
    }
    outcomes.push(await salvageRun(join(reader.root, "runs", name), name, options));
  }
  return outcomes;
}

async function salvageRun(
  dir: string,
  runId: string,
  options: SalvageOptions,
): Promise<SalvageOutcome> {
  const header = await readHeader(dir);
  if (header === "missing") {
    if (await onlyEmptyLog(dir)) {
      if (!options.dryRun) await Deno.remove(dir, { recursive: true });
      return { kind: "empty", runId };
    }
    return { kind: "skipped", runId, reason: "run.json is missing" };
  }
  if (typeof header === "string") return { kind: "skipped", runId, reason: header };
  if (await exists(childPath(dir, "complete"))) {
    // A `complete` that is not a zero-byte file: damage, never overwritten.
    return { kind: "skipped", runId, reason: "complete is not a zero-byte file" };
  }
  if (header.runId !== runId) {
    return { kind: "skipped", runId, reason: "run.json names another Run" };
  }
  const logPath = childPath(dir, LOG_NAME);
  let index: RunIndex;
  let bytes: Uint8Array;
  try {
    bytes = await readOrEmpty(logPath);
    index = indexRunLog(bytes, runId, false);
  } catch (error) {
    if (error instanceof LogProblem) {
      return { kind: "skipped", runId, reason: `${LOG_NAME}: ${error.message}` };
    }
    throw error;
  }
  if (index.tornBytes > 0 && hasWholeFrameAfter(bytes, index.validEnd)) {
    // Whole records after a bad one: damage in the middle, not a torn tail. Cutting there would
    // drop records that were synced; the Run is left as it is.
    return { kind: "skipped", runId, reason: `${LOG_NAME}: a damaged record before whole ones` };
  }
  const missing = header.expectedSlots.filter((slot) => !index.members.has(slot.slotId));
  const executed = new Map([...index.attempts.values()].map((a) => [a.doc.slotId, a.doc]));
  const kept = header.expectedSlots.filter((slot) => {
    const member = index.members.get(slot.slotId);
    return member ? member.action === "executed" : executed.has(slot.slotId);
  }).length;
  const interrupted = missing.filter((slot) => !executed.has(slot.slotId)).length;
  if (options.dryRun) return { kind: "salvaged", runId, kept, interrupted };
  if (index.end === null) {
    await Deno.truncate(logPath, index.validEnd);
    const log = new RunLog(
      await Deno.open(logPath, { write: true, append: true, create: true }),
      options.clock,
    );
    try {
      for (const slot of missing) {
        const attempt = executed.get(slot.slotId);
        const record = memberRecord({
          slotId: slot.slotId,
          evalId: slot.evalId,
          ordinal: slot.ordinal,
          action: attempt ? "executed" : "interrupted",
          attempt: attempt ? { originRunId: runId, attemptId: attempt.attemptId } : null,
          reason: null,
        });
        // A failed write rejects every later append too: `end` below reports it.
        log.append(recordLine(record, options.redactor)).catch(() => undefined);
      }
      const end = log.append(recordLine(endRecord(options.clock.now(), "crashed")));
      await log.flush();
      await end;
    } finally {
      await log.close().catch(() => undefined);
    }
  }
  const syncer = new DirectorySyncer();
  await createExclusive(childPath(dir, "complete"), "", { syncer });
  await syncer.sync(join(dir, ".."));
  return { kind: "salvaged", runId, kept, interrupted };
}

/** The Run's v2 header, `"missing"`, or why it is not one. */
async function readHeader(dir: string) {
  let text: string;
  try {
    const info = await Deno.lstat(childPath(dir, "run.json"));
    if (!info.isFile) return "run.json is not a regular file";
    text = await Deno.readTextFile(childPath(dir, "run.json"));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return "missing" as const;
    throw error;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return "run.json is not JSON";
  }
  if ((raw as { schemaVersion?: unknown } | null)?.schemaVersion === 1) {
    return "a layout-1 Run (written by an older niceeval) is not salvaged";
  }
  const parsed = RUN_HEADER_SCHEMA.safeParse(raw);
  return parsed.success ? parsed.data : "run.json is not a Run header";
}

/**
 * True when a whole frame starts at any line start after `from`: a torn tail is the end of the
 * last write, so no whole record can follow it.
 */
function hasWholeFrameAfter(bytes: Uint8Array, from: number): boolean {
  for (let i = from; i < bytes.length; i++) {
    if (bytes[i] === 0x0a && frameAt(bytes, i + 1) !== undefined) return true;
  }
  return false;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

/** True when the directory holds nothing but, at most, an empty log. */
async function onlyEmptyLog(dir: string): Promise<boolean> {
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isFile && isTempName(entry.name)) continue; // a header write the kill cut short
    if (entry.name !== LOG_NAME || !entry.isFile) return false;
    if ((await Deno.lstat(childPath(dir, LOG_NAME))).size > 0) return false;
  }
  return true;
}

async function readOrEmpty(path: string): Promise<Uint8Array> {
  try {
    const info = await Deno.lstat(path);
    if (!info.isFile) throw new LogProblem("is not a regular file");
    return await Deno.readFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return new Uint8Array();
    throw error;
  }
}
