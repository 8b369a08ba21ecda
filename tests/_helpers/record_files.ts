/**
 * Reads a Run of the Record the way its files say, for tests that look below the reader: the
 * `run.json` header and the records of its append-only log (layout v2, docs/record.md), decoded
 * with the product's frame scanner so a torn tail is visible as `tornBytes`.
 */
import { join } from "node:path";
import { scanLog } from "../../src/record/log.ts";

type Json = Record<string, unknown>;

/** One settled Attempt's documents as its log record holds them. */
export interface AttemptFiles {
  readonly attempt: Json;
  readonly assertions: Json;
  readonly events: Json;
}

/** A v2 Run as its files hold it. */
export interface RunFiles {
  readonly header: Json;
  /** Every record of the log, in order. */
  readonly records: readonly Json[];
  /** Members by SlotId. */
  readonly members: ReadonlyMap<string, Json>;
  /** Settled Attempts by AttemptId. */
  readonly attempts: ReadonlyMap<string, AttemptFiles>;
  readonly diagnostics: readonly Json[];
  /** The end record, if the log has one. */
  readonly end: Json | undefined;
  readonly published: boolean;
  /** Bytes after the last whole record. */
  readonly tornBytes: number;
}

/** The path of a Run's log. */
export function logPathOf(root: string, runId: string): string {
  return join(root, "runs", runId, "records.log");
}

/** Reads Run `runId` of the Record at `root`; a missing log reads as empty. */
export async function readRunFiles(root: string, runId: string): Promise<RunFiles> {
  const dir = join(root, "runs", runId);
  const header = JSON.parse(await Deno.readTextFile(join(dir, "run.json"))) as Json;
  let bytes = new Uint8Array();
  try {
    bytes = await Deno.readFile(join(dir, "records.log"));
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const scan = scanLog(bytes);
  const records = scan.entries.map((e) => e.value);
  const members = new Map<string, Json>();
  const attempts = new Map<string, AttemptFiles>();
  const diagnostics: Json[] = [];
  let end: Json | undefined;
  for (const record of records) {
    if (record.record === "member") {
      const member = record.member as Json;
      members.set(member.slotId as string, member);
    } else if (record.record === "attempt") {
      const attempt = record.attempt as Json;
      attempts.set(attempt.attemptId as string, {
        attempt,
        assertions: record.assertions as Json,
        events: record.events as Json,
      });
    } else if (record.record === "diagnostic") diagnostics.push(record.diagnostic as Json);
    else if (record.record === "end") end = record;
  }
  let published = false;
  try {
    const info = await Deno.lstat(join(dir, "complete"));
    published = info.isFile && info.size === 0;
  } catch {
    published = false;
  }
  return {
    header,
    records,
    members,
    attempts,
    diagnostics,
    end,
    published,
    tornBytes: scan.tornBytes,
  };
}

/** The RunIds of the Record at `root`, sorted; none when it has no `runs/`. */
export async function runIdsOf(root: string): Promise<string[]> {
  try {
    return (await Array.fromAsync(Deno.readDir(join(root, "runs")))).map((e) => e.name).sort();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
}

/** The bytes of `parts` one after another (framed records into one log). */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
