/**
 * The on-disk transform cache of the embedded loader (docs/loader.md): one small JSON file per
 * transformed user file, keyed by a hash of everything the output depends on, so that a process
 * whose files are all cached never starts esbuild. The cache is an optimisation only: an entry
 * that cannot be read or fails its checks is a miss, and a directory that cannot be written
 * leaves the loader working without it.
 */
import { mkdir, readdir, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import { isAbsolute, join } from "node:path";
import {
  type Clock,
  type Random,
  randomHex8,
  realClock,
  realRandom,
  sha256Hex,
} from "../_shared/mod.ts";
import type { Transformed } from "./_transform.ts";

/** Version of the entry format (and of the key layout); bump it when either changes. */
const ENTRY_FORMAT = 1;
const DAY_MS = 24 * 60 * 60 * 1000;
/** An entry not used for this long is removed by the next sweep. */
export const PRUNE_AFTER_MS = 30 * DAY_MS;
/** A process that writes an entry sweeps the directory when the last sweep is older than this. */
export const SWEEP_EVERY_MS = DAY_MS;
/** A hit refreshes an entry's modification time (its "last used") when it is older than this. */
const TOUCH_AFTER_MS = DAY_MS;
/** A temporary file left this old by a writer that died is removed by a sweep. */
const TEMP_MAX_AGE_MS = DAY_MS;
/** File whose modification time is the time of the last sweep. */
const SWEEP_MARKER = "last-sweep";

/**
 * The transform cache directory of an environment snapshot: `$XDG_CACHE_HOME/niceeval/transform`
 * (an absolute `XDG_CACHE_HOME` only), else `$HOME/.cache/niceeval/transform`; undefined (no
 * cache) when neither is set. Never the state directory: a failing `exp` writes nothing there
 * (cli.md ERR-3).
 */
export function transformCacheDir(env: Readonly<Record<string, string>>): string | undefined {
  const xdg = env.XDG_CACHE_HOME;
  if (xdg && isAbsolute(xdg)) return join(xdg, "niceeval", "transform");
  if (env.HOME) return join(env.HOME, ".cache", "niceeval", "transform");
  return undefined;
}

/** What the transform of one file depends on. */
export interface TransformKeyInput {
  /** {@link Transformer}'s identity: its version and options (`TRANSFORM_ID`). */
  readonly transformer: string;
  /** The file's name without its directory: esbuild names the module after it in the output. */
  readonly name: string;
  readonly extension: string;
  readonly source: string;
}

/** The cache key of a transform: a SHA-256 over the entry format and every input. */
export function transformKey(input: TransformKeyInput): string {
  return sha256Hex(
    JSON.stringify([ENTRY_FORMAT, input.transformer, input.name, input.extension, input.source]),
  );
}

/** Seams of {@link TransformCache}. */
export interface TransformCacheOptions {
  /** @default the wall clock */
  readonly clock?: Pick<Clock, "now">;
  /** Names temporary files. @default the platform's generator */
  readonly random?: Random;
}

/**
 * A transform cache directory. Entries are written atomically (a temporary file, then rename),
 * so a reader sees a whole entry or none, whatever other processes write at the same time.
 */
export class TransformCache {
  readonly #dir: string;
  readonly #clock: Pick<Clock, "now">;
  readonly #random: Random;
  #writable = true;
  #swept = false;

  constructor(dir: string, options: TransformCacheOptions = {}) {
    this.#dir = dir;
    this.#clock = options.clock ?? realClock;
    this.#random = options.random ?? realRandom;
  }

  /** The path of an entry. */
  entryPath(key: string): string {
    return join(this.#dir, `${key}.json`);
  }

  /** The cached transform of `key`; undefined when absent, unreadable or corrupt. */
  async get(key: string): Promise<Transformed | undefined> {
    const path = this.entryPath(key);
    let text: string;
    try {
      // One runtime call, where `node:fs` makes four (open, stat, read, close): 5,000 files.
      text = await Deno.readTextFile(path);
    } catch {
      return undefined;
    }
    const entry = parseEntry(text, key);
    if (entry !== undefined) await this.#touch(path);
    return entry;
  }

  /** Stores the transform of `key`, replacing any entry; failures only turn writing off. */
  async put(key: string, value: Transformed): Promise<void> {
    if (!this.#writable) return;
    const path = this.entryPath(key);
    const temp = join(this.#dir, `${key}.${randomHex8(this.#random)}.tmp`);
    try {
      // Private to the user: an entry holds the code of a user file.
      await mkdir(this.#dir, { recursive: true, mode: 0o700 });
      await writeFile(temp, entryText(key, value), { flag: "wx", mode: 0o600 });
      await rename(temp, path);
    } catch {
      this.#writable = false;
      await rm(temp, { force: true }).catch(() => undefined);
      return;
    }
    await this.#sweep();
  }

  /** Marks an entry as used: the sweep removes entries by their modification time. */
  async #touch(path: string): Promise<void> {
    try {
      const now = this.#clock.now();
      if (now - ((await Deno.stat(path)).mtime?.getTime() ?? 0) < TOUCH_AFTER_MS) return;
      await utimes(path, now / 1000, now / 1000);
    } catch {
      // A read-only cache still serves hits.
    }
  }

  /**
   * At most once per cache (one per loader) and once per {@link SWEEP_EVERY_MS} per directory:
   * removes entries unused for {@link PRUNE_AFTER_MS} and stale temporary files.
   */
  async #sweep(): Promise<void> {
    if (this.#swept) return;
    this.#swept = true;
    const now = this.#clock.now();
    const marker = join(this.#dir, SWEEP_MARKER);
    try {
      const last = await stat(marker).then((info) => info.mtimeMs, () => undefined);
      if (last !== undefined && now - last < SWEEP_EVERY_MS) return;
      await writeFile(marker, "");
      await utimes(marker, now / 1000, now / 1000);
      for (const name of await readdir(this.#dir)) {
        const maxAge = name.endsWith(".json")
          ? PRUNE_AFTER_MS
          : name.endsWith(".tmp")
          ? TEMP_MAX_AGE_MS
          : undefined;
        if (maxAge === undefined) continue;
        const path = join(this.#dir, name);
        const used = await stat(path).then((info) => info.mtimeMs, () => now);
        if (now - used > maxAge) await rm(path, { force: true }).catch(() => undefined);
      }
    } catch {
      // Pruning is best effort; the next writer tries again.
    }
  }
}

function entryText(key: string, value: Transformed): string {
  const payload = [value.code, value.mappings, [...value.specifiers]];
  return JSON.stringify({
    format: ENTRY_FORMAT,
    key,
    digest: sha256Hex(JSON.stringify(payload)),
    code: value.code,
    mappings: value.mappings,
    specifiers: value.specifiers,
  });
}

/** The transform stored in `text`, when it is a whole entry of `key` whose digest matches. */
function parseEntry(text: string, key: string): Transformed | undefined {
  let entry: unknown;
  try {
    entry = JSON.parse(text);
  } catch {
    return undefined;
  }
  const { format, key: entryKey, digest, code, mappings, specifiers } = (entry ?? {}) as Record<
    string,
    unknown
  >;
  if (
    format !== ENTRY_FORMAT || entryKey !== key || typeof code !== "string" ||
    typeof mappings !== "string" || !Array.isArray(specifiers) ||
    !specifiers.every((s) => typeof s === "string")
  ) {
    return undefined;
  }
  if (digest !== sha256Hex(JSON.stringify([code, mappings, specifiers]))) return undefined;
  return { code, mappings, specifiers: specifiers as string[] };
}
