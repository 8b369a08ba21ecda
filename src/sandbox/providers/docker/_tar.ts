/**
 * Tar encoding for the archive endpoints (sandboxes.md rule 110), with npm `tar-stream`: a
 * one-entry archive for `putArchive`, and the first entry of a `getArchive` answer.
 */
// @ts-types="@types/tar-stream"
import tar from "tar-stream";
import { Buffer } from "node:buffer";

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

/** Encodes a one-entry archive as a `Buffer` (what `putArchive` sends). */
export async function oneEntryTar(file: TarFile): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Uint8Array[] = [];
  const collected = (async () => {
    for await (const chunk of pack) chunks.push(chunk as Uint8Array);
  })();
  pack.entry({
    name: file.name,
    type: "file",
    mode: file.mode,
    uid: file.uid,
    gid: file.gid,
    mtime: file.mtime,
    size: file.data.length,
  }, Buffer.from(file.data.buffer, file.data.byteOffset, file.data.length));
  pack.finalize();
  await collected;
  return Buffer.concat(chunks);
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
