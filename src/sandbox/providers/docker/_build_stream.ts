/**
 * The daemon side of one build or pull (sandboxes.md rules 65, 114): the context tar sent to
 * `buildImage`, and the progress stream drained to its end with its log tail kept.
 */
// @ts-types="@types/dockerode"
import type Docker from "dockerode";
import { Buffer } from "node:buffer";
// @ts-types="@types/tar-stream"
import { pack } from "tar-stream";
import { raceAbort } from "../../../_shared/mod.ts";
import type { ContextEntry } from "./_context.ts";

/** Bytes of build log kept for the failure diagnostic (rule 65). */
export const BUILD_LOG_TAIL_BYTES = 64 * 1024;

/** A progress object of the build or pull stream. */
interface ProgressEvent {
  readonly stream?: string;
  readonly status?: string;
  readonly error?: string;
  readonly errorDetail?: { readonly message?: string };
}

/**
 * Drains a build or pull stream to its end; a progress object with `error` fails it even though
 * the HTTP status was 200 (rule 114).
 */
export async function followStream(
  docker: Docker,
  stream: NodeJS.ReadableStream,
  log: LogTail,
  o: { readonly signal: AbortSignal; readonly progress?: (line: string) => void },
): Promise<void> {
  let failure: string | undefined;
  const done = new Promise<void>((resolve, reject) => {
    docker.modem.followProgress(
      stream,
      (error: Error | null) => error ? reject(error) : resolve(),
      (event: ProgressEvent) => {
        const text = event.stream ?? (event.status !== undefined ? `${event.status}\n` : "");
        if (text !== "") {
          log.append(text);
          for (const line of text.split("\n")) if (line.trim() !== "") o.progress?.(line.trim());
        }
        if (event.error !== undefined) {
          failure ??= event.errorDetail?.message ?? event.error;
          log.append(`${event.error}\n`);
        }
      },
    );
  });
  const destroy = () => (stream as unknown as { destroy?(): void }).destroy?.();
  o.signal.addEventListener("abort", destroy, { once: true });
  try {
    await raceAbort(done, o.signal);
  } finally {
    o.signal.removeEventListener("abort", destroy);
  }
  if (failure !== undefined) throw new Error(failure);
}

/** The last {@link BUILD_LOG_TAIL_BYTES} of a log, drained continuously. */
export class LogTail {
  #text = "";
  append(chunk: string): void {
    this.#text += chunk;
    // Characters approximate bytes here; the cut only bounds memory.
    if (this.#text.length > 2 * BUILD_LOG_TAIL_BYTES) this.#trim();
  }
  text(): string {
    this.#trim();
    return this.#text;
  }
  #trim(): void {
    if (this.#text.length > BUILD_LOG_TAIL_BYTES) {
      this.#text = this.#text.slice(-BUILD_LOG_TAIL_BYTES);
    }
  }
}

/** The context as one tar, entries in sorted order with a fixed mtime. */
export async function contextTar(entries: readonly ContextEntry[]): Promise<Uint8Array> {
  const archive = pack();
  const chunks: Uint8Array[] = [];
  const collected = new Promise<void>((resolve, reject) => {
    archive.on("data", (chunk: Uint8Array) => chunks.push(chunk));
    archive.on("end", resolve);
    archive.on("error", reject);
  });
  const mtime = new Date(0);
  for (const e of entries) {
    await new Promise<void>((resolve, reject) => {
      const cb = (error?: Error | null) => error ? reject(error) : resolve();
      if (e.type === "file") {
        const bytes = Buffer.from(e.bytes.buffer, e.bytes.byteOffset, e.bytes.byteLength);
        archive.entry({ name: e.path, mode: e.mode, mtime, type: "file" }, bytes, cb);
      } else if (e.type === "symlink") {
        archive.entry(
          { name: e.path, mode: e.mode, mtime, type: "symlink", linkname: e.linkname },
          cb,
        );
      } else {
        archive.entry({ name: e.path, mode: e.mode, mtime, type: "directory" }, cb);
      }
    });
  }
  archive.finalize();
  await collected;
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.length;
  }
  return out;
}
