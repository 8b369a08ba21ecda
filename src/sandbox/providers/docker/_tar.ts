/**
 * Tar encoding for the archive endpoints (sandboxes.md rule 110), with npm `tar-stream`: the
 * archives `putArchive` sends (one file, or a whole directory upload), and the first entry of a
 * `getArchive` answer.
 */
// @ts-types="@types/tar-stream"
import tar from "tar-stream";
import { Buffer } from "node:buffer";
import type { UploadEntry } from "../../types.ts";

/** One regular file as the archive should carry it. */
export interface TarFile {
  /** The entry's name (the file's basename). */
  readonly name: string;
  readonly data: Uint8Array;
  readonly mode: number;
  readonly uid: number;
  readonly gid: number;
  readonly mtime: Date;
}

/** One entry of a many-entry archive: a regular file (with its bytes) or a directory. */
export type TarEntry =
  | (TarFile & { readonly type: "file" })
  | (Omit<TarFile, "data"> & { readonly type: "directory" });

/** Encodes a one-entry archive as a `Buffer` (what `putArchive` sends). */
export function oneEntryTar(file: TarFile): Promise<Buffer> {
  return packTar([{ ...file, type: "file" }]);
}

/**
 * Encodes `entries` in order as one archive `Buffer`; an async source is read one entry at a time,
 * so a file's bytes are loaded only when its turn comes.
 */
export async function packTar(
  entries: Iterable<TarEntry> | AsyncIterable<TarEntry>,
): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Uint8Array[] = [];
  const collected = (async () => {
    for await (const chunk of pack) chunks.push(chunk as Uint8Array);
  })();
  try {
    for await (const entry of entries) {
      const header = {
        name: entry.name,
        mode: entry.mode,
        uid: entry.uid,
        gid: entry.gid,
        mtime: entry.mtime,
      };
      if (entry.type === "directory") pack.entry({ ...header, type: "directory" });
      else {
        const { data } = entry;
        pack.entry(
          { ...header, type: "file", size: data.length },
          Buffer.from(data.buffer, data.byteOffset, data.length),
        );
      }
    }
  } catch (error) {
    pack.destroy();
    await collected.catch(() => undefined);
    throw error;
  }
  pack.finalize();
  await collected;
  return Buffer.concat(chunks);
}

/**
 * The archive entries of a directory upload, owned by `owner`; a file's bytes are read from the
 * host only when its turn comes. Entries without a host mode get `0644` (files) or `0755`
 * (directories).
 */
export async function* uploadTarEntries(
  entries: readonly UploadEntry[],
  owner: { readonly uid: number; readonly gid: number; readonly mtime: Date },
  signal?: AbortSignal,
): AsyncGenerator<TarEntry> {
  for (const entry of entries) {
    signal?.throwIfAborted();
    const common = { name: entry.path, ...owner };
    if (entry.kind === "directory") {
      yield { ...common, type: "directory", mode: entry.mode ?? 0o755 };
    } else {
      const data = await Deno.readFile(entry.source, signal ? { signal } : {});
      yield { ...common, type: "file", mode: entry.mode ?? 0o644, data };
    }
  }
}

/** The first entry of an archive: its type, link target and (for files) bytes. */
export interface FirstEntry {
  readonly type: string;
  readonly linkname?: string;
  readonly data: Uint8Array;
}

/** Reads the first entry of the archive `source` and drains the rest. */
export async function firstTarEntry(
  source: NodeJS.ReadableStream,
): Promise<FirstEntry | undefined> {
  const extract = tar.extract();
  source.pipe(extract as unknown as NodeJS.WritableStream);
  let first: FirstEntry | undefined;
  for await (const entry of extract) {
    const chunks: Uint8Array[] = [];
    for await (const chunk of entry) {
      if (first === undefined) chunks.push(chunk as Uint8Array);
    }
    if (first === undefined) {
      first = {
        type: entry.header.type ?? "file",
        ...(entry.header.linkname ? { linkname: entry.header.linkname } : {}),
        data: Buffer.concat(chunks),
      };
    }
  }
  return first;
}
