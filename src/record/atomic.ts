/**
 * Atomic file writes (REC-8): serialize, write `.<name>.tmp-<8 hex>` beside the target, fsync it,
 * rename it over the target, fsync the directory. Nothing is written in place. A write resolves
 * only once a directory fsync that started after its rename has finished, so a resolved write is
 * durable; concurrent writes into one directory may share that fsync (a {@link DirectorySyncer}).
 */
import { basename, dirname, sep } from "node:path";
import { type Random, randomHex8, type Redactor } from "../_shared/mod.ts";

const ENCODER = new TextEncoder();

/**
 * `dir` joined with plain names (no separators, no `.`/`..`): `join` without its normalization,
 * which costs more than the write itself on the Record's hot path.
 */
export function childPath(dir: string, ...names: string[]): string {
  return (dir.endsWith(sep) ? dir.slice(0, -1) : dir) + sep + names.join(sep);
}

/**
 * JSON text as the Record stores it: 2-space indent and a trailing newline. With a redactor,
 * credential values become `***` (CLI-8) and the text stays valid JSON: the serialized text is
 * redacted; in the rare case where that breaks the syntax (a value that also occurs as digits of
 * a number), every string of `value` is redacted before serializing instead.
 */
export function recordJson(value: unknown, redactor?: Redactor): string {
  return redactedJson(value, redactor, 2) + "\n";
}

/**
 * {@link recordJson} of an object whose last key `key` holds a long array, in pieces: the rest of
 * the object, then each element. Joined, the pieces are exactly `recordJson(value, redactor)` when
 * nothing needs redacting; each piece is redacted on its own (issue 20: a header of 100,000 slots
 * is never one string). `itemOf` maps each element as it is written, so that the mapped array never
 * exists whole.
 */
export function* recordJsonPieces(
  value: Record<string, unknown>,
  key: string,
  redactor?: Redactor,
  itemOf: (item: unknown) => unknown = (item) => item,
): Generator<string> {
  const items = value[key];
  const keys = Object.keys(value);
  const whole = () => recordJson({ ...value, [key]: (items as unknown[]).map(itemOf) }, redactor);
  if (!Array.isArray(items) || items.length === 0 || keys[keys.length - 1] !== key) {
    yield Array.isArray(items) ? whole() : recordJson(value, redactor);
    return;
  }
  const head = redactedJson({ ...value, [key]: [] }, redactor, 2);
  const empty = `${JSON.stringify(key)}: []\n}`;
  if (!head.endsWith(empty)) {
    yield whole();
    return;
  }
  yield `${head.slice(0, head.length - "[]\n}".length)}[\n`;
  for (let i = 0; i < items.length; i++) {
    const item = redactedJson(itemOf(items[i]), redactor, 2).replaceAll("\n", "\n    ");
    yield `${i === 0 ? "" : ",\n"}    ${item}`;
  }
  yield "\n  ]\n}\n";
}

/**
 * `JSON.stringify(value, null, indent)` with credential values redacted so that the text stays
 * valid JSON (see {@link recordJson}).
 */
export function redactedJson(value: unknown, redactor?: Redactor, indent?: number): string {
  const text = JSON.stringify(value, null, indent);
  if (redactor === undefined || redactor.isEmpty) return text;
  const redacted = redactor.redact(text);
  if (redacted === text) return text;
  try {
    JSON.parse(redacted);
    return redacted;
  } catch {
    return JSON.stringify(redactDeep(value, redactor), null, indent);
  }
}

/**
 * A copy of a JSON value with every string and every object key redacted: the fallback when
 * redacting the serialized text would break its syntax.
 */
export function redactDeep(value: unknown, redactor: Redactor): unknown {
  if (typeof value === "string") return redactor.redact(value);
  if (value === null || typeof value !== "object") return value;
  const json = (value as { toJSON?: () => unknown }).toJSON;
  if (typeof json === "function") return redactDeep(json.call(value), redactor);
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, redactor));
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) out[redactor.redact(key)] = redactDeep(v, redactor);
  return out;
}

/** One file of {@link writeFilesAtomic}. */
export interface FileText {
  readonly name: string;
  /**
   * The content, or its pieces in order: a large file is then encoded and written a piece at a
   * time instead of as one string and one buffer (issue 20).
   */
  readonly text: string | Iterable<string>;
}

/** fsyncs an open file that was written at `path`; the seam tests use to observe file fsyncs. */
type FileSyncer = (file: Deno.FsFile, path: string) => Promise<void>;

/** How an atomic write fsyncs the files it writes and the target directory. */
interface AtomicOptions {
  /** Shares directory fsyncs with concurrent writes; each write still waits for its own. */
  readonly syncer?: DirectorySyncer;
  /**
   * fsyncs each temporary file (and each {@link createExclusive} file) before it is renamed or
   * its directory is fsynced.
   * @default {@link syncFile}, the real `file.sync()`
   */
  readonly syncFile?: FileSyncer;
  /** Runs right before each rename over `target`; a rejection aborts the write. */
  readonly beforeRename?: (target: string) => Promise<void>;
}

/** Writes `text` to `path` atomically. */
export async function writeTextAtomic(
  path: string,
  text: string,
  random: Random,
  options: AtomicOptions = {},
): Promise<void> {
  await writeFilesAtomic(dirname(path), [{ name: basename(path), text }], { ...options, random });
}

/** Writes `value` as Record JSON to `path` atomically. */
export function writeJsonAtomic(
  path: string,
  value: unknown,
  random: Random,
  options: AtomicOptions = {},
): Promise<void> {
  return writeTextAtomic(path, recordJson(value), random, options);
}

/**
 * Writes several files of one directory atomically: every temporary file is written and fsynced
 * (in parallel), then they are renamed over their targets in the given order, then one directory
 * fsync makes every rename durable. Each file gets exactly REC-8's steps; only the last one, the
 * directory fsync, is shared. On failure the temporary files not yet renamed are removed.
 */
export async function writeFilesAtomic(
  dir: string,
  files: readonly FileText[],
  options: AtomicOptions & { readonly random: Random },
): Promise<void> {
  const temps = files.map((f) => childPath(dir, `.${f.name}.tmp-${randomHex8(options.random)}`));
  const sync = options.syncFile ?? syncFile;
  const writes = files.map((f, i) => writeTemp(temps[i]!, f.text, sync));
  try {
    await Promise.all(writes);
  } catch {
    await failWrites(writes, temps);
  }
  for (let i = 0; i < files.length; i++) {
    try {
      const target = childPath(dir, files[i]!.name);
      await options.beforeRename?.(target);
      await Deno.rename(temps[i]!, target);
    } catch (error) {
      await removeAll(temps.slice(i));
      throw error;
    }
  }
  await (options.syncer ? options.syncer.sync(dir) : syncDirectory(dir));
}

/**
 * Once every temporary file write has ended: removes the written ones (a failed one removed its
 * own) and throws the failure of the first file that failed.
 */
async function failWrites(
  writes: readonly Promise<void>[],
  temps: readonly string[],
): Promise<never> {
  const written = await Promise.allSettled(writes);
  await removeAll(temps.filter((_, i) => written[i]!.status === "fulfilled"));
  throw written.find((w): w is PromiseRejectedResult => w.status === "rejected")!.reason;
}

const CREATE_NEW: Deno.OpenOptions = { write: true, createNew: true };
const READ: Deno.OpenOptions = { read: true };

/** Creates, writes and fsyncs a temporary file; removes it again when writing fails. */
async function writeTemp(
  temp: string,
  text: string | Iterable<string>,
  sync: FileSyncer,
): Promise<void> {
  const file = await Deno.open(temp, CREATE_NEW);
  try {
    if (typeof text === "string") await writeAll(file, ENCODER.encode(text));
    else await writePieces(file, text);
    await sync(file, temp);
  } catch (error) {
    file.close();
    await Deno.remove(temp).catch(() => undefined);
    throw error;
  }
  file.close();
}

/** Pieces gathered up to about this many characters go out in one write. */
const PIECE_BATCH_CHARS = 256 * 1024;

async function writePieces(file: Deno.FsFile, pieces: Iterable<string>): Promise<void> {
  let batch = "";
  for (const piece of pieces) {
    batch += piece;
    if (batch.length >= PIECE_BATCH_CHARS) {
      await writeAll(file, ENCODER.encode(batch));
      batch = "";
    }
  }
  if (batch !== "") await writeAll(file, ENCODER.encode(batch));
}

async function removeAll(paths: readonly string[]): Promise<void> {
  for (const path of paths) await Deno.remove(path).catch(() => undefined);
}

/**
 * Creates `path` exclusively with `text` (empty for markers), fsyncs it and its directory.
 * Throws `Deno.errors.AlreadyExists` when the file exists.
 */
export async function createExclusive(
  path: string,
  text = "",
  options: AtomicOptions = {},
): Promise<void> {
  const file = await Deno.open(path, CREATE_NEW);
  try {
    if (text !== "") await writeAll(file, ENCODER.encode(text));
    await (options.syncFile ?? syncFile)(file, path);
  } finally {
    file.close();
  }
  await (options.syncer ? options.syncer.sync(dirname(path)) : syncDirectory(dirname(path)));
}

/** fsyncs a written file so that its contents are durable before it is renamed or published. */
function syncFile(file: Deno.FsFile, _path: string): Promise<void> {
  return file.sync();
}

/** fsyncs a directory so that renames and creations inside it are durable. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await Deno.open(dir, READ);
  try {
    await handle.sync();
  } finally {
    handle.close();
  }
}

interface DirectoryState {
  running: Promise<void> | null;
  queued: Promise<void> | null;
}

/**
 * Group commit of directory fsyncs. `sync(dir)` resolves after an fsync of `dir` that started
 * after the call, so every rename done before the call is durable when it resolves. Calls that
 * arrive while an fsync runs share the one queued behind it instead of issuing one each.
 */
export class DirectorySyncer {
  readonly #dirs = new Map<string, DirectoryState>();
  readonly #fsync: (dir: string) => Promise<void>;
  #count = 0;

  constructor(fsync: (dir: string) => Promise<void> = syncDirectory) {
    this.#fsync = fsync;
  }

  /** How many directory fsyncs this syncer has started. */
  get count(): number {
    return this.#count;
  }

  /** Resolves once every rename in `dir` made before this call is durable. */
  sync(dir: string): Promise<void> {
    let state = this.#dirs.get(dir);
    if (state === undefined) {
      state = { running: null, queued: null };
      this.#dirs.set(dir, state);
    }
    const { running, queued } = state;
    if (running === null) return this.#start(dir, state);
    if (queued !== null) return queued;
    const s = state;
    s.queued = running.then(noop, noop).then(() => {
      s.queued = null;
      return this.#start(dir, s);
    });
    return s.queued;
  }

  #start(dir: string, state: DirectoryState): Promise<void> {
    this.#count++;
    const running: Promise<void> = this.#fsync(dir).finally(() => {
      if (state.running === running) state.running = null;
      if (state.running === null && state.queued === null) this.#dirs.delete(dir);
    });
    state.running = running;
    return running;
  }
}

function noop(): void {}

async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  // One write is the rule; only a short write needs a view of the rest.
  let offset = await file.write(bytes);
  while (offset < bytes.length) offset += await file.write(bytes.subarray(offset));
}

/** True for the temporary file names of {@link writeTextAtomic}. */
export function isTempName(name: string): boolean {
  return /^\..+\.tmp-[0-9a-f]{8}$/.test(name);
}
