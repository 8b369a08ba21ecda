/**
 * Group commit of one Run's append-only log (docs/record.md): records are framed as they come,
 * collected into a batch, and each batch is written with one write and made durable with one
 * fdatasync. A batch closes after {@link BATCH_RECORDS} records or {@link BATCH_MS} ms after its
 * first record, whichever comes first; batches that close while a sync runs are written together
 * after it. An append resolves once the batch holding it is durable.
 */
import type { Clock, TimerHandle } from "../_shared/mod.ts";
import { frame } from "./log.ts";

/** Records per batch at most: a full batch is written at once. */
export const BATCH_RECORDS = 256;
/** Milliseconds a batch stays open after its first record at most. */
export const BATCH_MS = 25;

/** The file side of a log, a seam for tests that count syncs or inject failures. */
export interface LogFile {
  write(bytes: Uint8Array): Promise<number>;
  /** Makes every byte written so far durable (fdatasync). */
  syncData(): Promise<void>;
  close(): void;
}

interface Waiter {
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

interface Batch {
  readonly chunks: Uint8Array[];
  readonly waiters: Waiter[];
  bytes: number;
}

const emptyBatch = (): Batch => ({ chunks: [], waiters: [], bytes: 0 });

/** Appends framed records to one open log file. */
export class RunLog {
  readonly #file: LogFile;
  readonly #clock: Clock;
  readonly #batchRecords: number;
  readonly #batchMs: number;
  #open: Batch = emptyBatch();
  #closed: Batch[] = [];
  #timer: TimerHandle | undefined;
  #writing = false;
  #failure: { readonly error: unknown } | undefined;
  #syncs = 0;
  #unsynced = 0;
  #idle: (() => void)[] = [];

  constructor(
    file: LogFile,
    clock: Clock,
    options: { batchRecords?: number; batchMs?: number } = {},
  ) {
    this.#file = file;
    this.#clock = clock;
    this.#batchRecords = options.batchRecords ?? BATCH_RECORDS;
    this.#batchMs = options.batchMs ?? BATCH_MS;
  }

  /** How many syncs this log has issued. */
  get syncs(): number {
    return this.#syncs;
  }

  /** Records appended and not yet durable. */
  get unsynced(): number {
    return this.#unsynced;
  }

  /** Appends one record (a {@link recordLine}); resolves once it is durable. */
  append(json: string): Promise<void> {
    if (this.#failure) return Promise.reject(this.#failure.error);
    const bytes = frame(json);
    return new Promise<void>((resolve, reject) => {
      const batch = this.#open;
      batch.chunks.push(bytes);
      batch.bytes += bytes.length;
      batch.waiters.push({ resolve, reject });
      this.#unsynced++;
      if (batch.chunks.length >= this.#batchRecords) this.#closeBatch();
      else if (this.#timer === undefined) {
        this.#timer = this.#clock.setTimeout(() => this.#closeBatch(), this.#batchMs);
      }
    });
  }

  /** Closes the open batch now; resolves once every record appended so far is durable. */
  flush(): Promise<void> {
    this.#closeBatch();
    if (!this.#writing && this.#closed.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Flushes, then closes the file. */
  async close(): Promise<void> {
    await this.flush();
    this.#file.close();
  }

  #closeBatch(): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#open.chunks.length === 0) return;
    this.#closed.push(this.#open);
    this.#open = emptyBatch();
    if (!this.#writing) void this.#pump();
  }

  /** Writes and syncs closed batches until none is left: one write and one sync per round. */
  async #pump(): Promise<void> {
    this.#writing = true;
    while (this.#closed.length > 0) {
      const batches = this.#closed;
      this.#closed = [];
      const waiters = batches.flatMap((b) => b.waiters);
      try {
        if (this.#failure) throw this.#failure.error;
        await writeAll(this.#file, concat(batches));
        this.#syncs++;
        await this.#file.syncData();
        for (const w of waiters) w.resolve();
      } catch (error) {
        this.#failure ??= { error };
        for (const w of waiters) w.reject(this.#failure.error);
      }
      this.#unsynced -= waiters.length;
    }
    this.#writing = false;
    const idle = this.#idle;
    this.#idle = [];
    for (const resolve of idle) resolve();
  }
}

function concat(batches: readonly Batch[]): Uint8Array {
  if (batches.length === 1 && batches[0]!.chunks.length === 1) return batches[0]!.chunks[0]!;
  let total = 0;
  for (const b of batches) total += b.bytes;
  const out = new Uint8Array(total);
  let at = 0;
  for (const b of batches) {
    for (const chunk of b.chunks) {
      out.set(chunk, at);
      at += chunk.length;
    }
  }
  return out;
}

async function writeAll(file: LogFile, bytes: Uint8Array): Promise<void> {
  let offset = await file.write(bytes);
  while (offset < bytes.length) offset += await file.write(bytes.subarray(offset));
}
