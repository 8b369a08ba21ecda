/**
 * The project's ramp files (RAMP-9, RAMP-11): the control file every ramped Invocation reads at
 * each window end, written under `control.lock` with a temporary file, fsync and rename; and one
 * live file per ramped Invocation, published beside the flock it holds while it runs.
 */
import { join } from "node:path";
import { type Clock, errorMessage } from "../_shared/mod.ts";
import { isPositiveInt, listNames, readJsonObject, recordJson, replaceFile } from "./_fs.ts";
import { acquireLock, type FileLock, tryAcquireLock } from "./lock.ts";
import { coordinationDirOf } from "./paths.ts";

/** The control file's schema tag (RAMP-9). */
export const RAMP_CONTROL_SCHEMA = "niceeval.ramp-control/v1";
/** Longest hold reason (RAMP-10). */
export const RAMP_REASON_MAX = 200;

/** A range override. */
export interface RampRangeOverride {
  readonly from: number;
  readonly to: number;
}

/** The control file (RAMP-9). */
export interface RampControlFile {
  readonly schema: typeof RAMP_CONTROL_SCHEMA;
  readonly seq: number;
  readonly hold: { readonly reason: string; readonly since: string; readonly by: string } | null;
  readonly range: RampRangeOverride | null;
}

/** One live ramped Invocation (RAMP-11). */
export interface LiveRampEntry {
  readonly invocationId: string;
  readonly pid: number;
  readonly cap: number;
  readonly from: number;
  readonly to: number;
  readonly state: string;
  readonly heldReason: string | null;
  readonly updatedAt: string;
}

/** `coordination/ramp`. */
export function rampDirOf(projectRoot: string): string {
  return join(coordinationDirOf(projectRoot), "ramp");
}

const EMPTY: RampControlFile = { schema: RAMP_CONTROL_SCHEMA, seq: 0, hold: null, range: null };

/**
 * Reads the control file without locking (RAMP-9), synchronously: it is read at each window end.
 * A missing file is the empty control; an unreadable or invalid one says why.
 */
export function readRampControl(projectRoot: string): RampControlFile | { invalid: string } {
  let text: string;
  try {
    text = Deno.readTextFileSync(join(rampDirOf(projectRoot), "control.json"));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return EMPTY;
    return { invalid: errorMessage(error) };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { invalid: errorMessage(error) };
  }
  return parseControl(value);
}

/** Validates a parsed control file; the first problem found is the reason. */
function parseControl(value: unknown): RampControlFile | { invalid: string } {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { invalid: "not a JSON object" };
  }
  const o = value as Record<string, unknown>;
  if (o.schema !== RAMP_CONTROL_SCHEMA) return { invalid: `schema is not ${RAMP_CONTROL_SCHEMA}` };
  if (!(o.seq === 0 || isPositiveInt(o.seq))) return { invalid: "seq is not an integer ≥ 0" };
  let hold: RampControlFile["hold"] = null;
  if (o.hold !== null) {
    const h = o.hold as Record<string, unknown> | undefined;
    if (
      typeof h !== "object" || h === null || typeof h.reason !== "string" ||
      h.reason.length < 1 || h.reason.length > RAMP_REASON_MAX ||
      typeof h.since !== "string" || typeof h.by !== "string"
    ) return { invalid: "hold is not null or { reason, since, by }" };
    hold = { reason: h.reason, since: h.since, by: h.by };
  }
  let range: RampRangeOverride | null = null;
  if (o.range !== null) {
    const r = o.range as Record<string, unknown> | undefined;
    if (
      typeof r !== "object" || r === null || !isPositiveInt(r.from) || !isPositiveInt(r.to) ||
      r.from > r.to
    ) return { invalid: "range is not null or { from, to } with 1 ≤ from ≤ to" };
    range = { from: r.from, to: r.to };
  }
  return { schema: RAMP_CONTROL_SCHEMA, seq: o.seq as number, hold, range };
}

/**
 * Changes the control file under `control.lock` (RAMP-9): `change` receives the current content
 * (the empty control when it is missing or invalid) and returns the new hold and range; `seq` is
 * incremented. The new file is written to a temporary file, fsynced and renamed over.
 */
export async function updateRampControl(
  projectRoot: string,
  change: (current: RampControlFile) => Pick<RampControlFile, "hold" | "range">,
  options: { readonly clock: Clock; readonly signal?: AbortSignal },
): Promise<RampControlFile> {
  const dir = rampDirOf(projectRoot);
  await Deno.mkdir(dir, { recursive: true });
  await using _lock = await acquireLock(join(dir, "control.lock"), {
    clock: options.clock,
    signal: options.signal ?? new AbortController().signal,
    pollMs: 50,
  });
  const read = readRampControl(projectRoot);
  const current = "invalid" in read ? EMPTY : read;
  const next: RampControlFile = {
    schema: RAMP_CONTROL_SCHEMA,
    seq: current.seq + 1,
    ...change(current),
  };
  await replaceFile(join(dir, "control.json"), recordJson(next));
  return next;
}

/** A ramped Invocation's live file and the flock that proves it lives (RAMP-11). */
export interface LiveRamp extends AsyncDisposable {
  /** Replaces the live file (synchronously: it runs at each window end). */
  publish(entry: Omit<LiveRampEntry, "invocationId" | "pid">): void;
  /** Removes the live file and releases the flock. Idempotent. */
  close(): Promise<void>;
}

/** Takes `live/<invocationId>.lock` and returns the publisher of `live/<invocationId>.json`. */
export async function openLiveRamp(
  projectRoot: string,
  identity: { readonly invocationId: string; readonly pid: number },
): Promise<LiveRamp> {
  const dir = join(rampDirOf(projectRoot), "live");
  const lock: FileLock | null = await tryAcquireLock(join(dir, `${identity.invocationId}.lock`));
  if (lock === null) throw new Error(`The live ramp lock of ${identity.invocationId} is taken`);
  const path = join(dir, `${identity.invocationId}.json`);
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await Deno.remove(path).catch(() => undefined);
    await Deno.remove(lock.path).catch(() => undefined);
    lock.release();
  };
  return {
    publish: (entry) => {
      if (closed) return;
      const temp = `${path}.${identity.pid}.tmp`;
      Deno.writeTextFileSync(temp, recordJson({ ...identity, ...entry }));
      Deno.renameSync(temp, path);
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/**
 * The live ramped Invocations of the project: entries whose lock is taken. Entries whose lock is
 * free belong to dead processes and are deleted (RAMP-11).
 */
export async function listLiveRamps(projectRoot: string): Promise<LiveRampEntry[]> {
  const dir = join(rampDirOf(projectRoot), "live");
  const live: LiveRampEntry[] = [];
  for (const name of await listNames(dir)) {
    if (!name.endsWith(".lock")) continue;
    const id = name.slice(0, -".lock".length);
    const json = join(dir, `${id}.json`);
    const probe = await tryAcquireLock(join(dir, name), { create: false }).catch(() => null);
    if (probe !== null) {
      // Free: its process is gone. Remove the entry while holding the lock.
      await Deno.remove(json).catch(() => undefined);
      await Deno.remove(probe.path).catch(() => undefined);
      probe.release();
      continue;
    }
    const entry = liveEntryOf(await readJsonObject(json));
    if (entry) live.push(entry);
  }
  return live;
}

function liveEntryOf(o: Record<string, unknown> | undefined): LiveRampEntry | undefined {
  if (!o || typeof o.invocationId !== "string" || !isPositiveInt(o.pid)) return undefined;
  if (!isPositiveInt(o.cap) || !isPositiveInt(o.from) || !isPositiveInt(o.to)) return undefined;
  return {
    invocationId: o.invocationId,
    pid: o.pid,
    cap: o.cap,
    from: o.from,
    to: o.to,
    state: typeof o.state === "string" ? o.state : "",
    heldReason: typeof o.heldReason === "string" ? o.heldReason : null,
    updatedAt: typeof o.updatedAt === "string" ? o.updatedAt : "",
  };
}
