/**
 * The Record writer, layout v2 (docs/record.md): per Run a `run.json` header written once, one
 * append-only `records.log` (settled Attempts with their assertions and events, members,
 * diagnostics, the end record) and the zero-byte `complete` marker, the only publish signal.
 *
 * Durability: each Run's log commits in groups (one write and one fdatasync per batch, see
 * `_run_log.ts`); an Attempt is durable once its batch is synced. `begin` makes the Run directory,
 * its header and its log durable (file, Run directory and `runs/` fsyncs) before anything is
 * appended, so a synced batch survives a crash and a later salvage finds it. `complete` is created
 * only after the end record is durable, so a crash at any instant leaves either a fully durable
 * published Run or an unpublished one.
 */
import { join } from "node:path";
import { errorMessage } from "../_shared/mod.ts";
import type { AttemptResult, Clock, Random, Redactor, RunEvent } from "../_shared/mod.ts";
import {
  childPath,
  createExclusive,
  DirectorySyncer,
  recordJson,
  recordJsonPieces,
  writeFilesAtomic,
} from "./atomic.ts";
import { recordLine } from "./log.ts";
import { type LogFile, RunLog } from "./_run_log.ts";
import {
  type AttemptHeader,
  diagnosticRecord,
  endRecord,
  expectedSlotOf,
  LOG_NAME,
  type MemberAction,
  memberRecord,
  recordDocument,
  runHeaderDocument,
  type RunSpec,
  settledAttemptRecord,
} from "./documents.ts";
import { SlotTable } from "./_slot_table.ts";

/** Raised when a Record write fails; the run stops dispatching (REC-9). */
export class RecordWriteError extends Error {
  readonly path: string;
  constructor(path: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "RecordWriteError";
    this.path = path;
  }
}

/**
 * Backlog bounds of {@link RecordWriter.backpressure}, in appended records not yet durable: above
 * the high mark the scheduler holds ended Attempts' slots until every log has synced. Four full
 * batches keep the logs busy without piling results up in memory.
 */
const BACKLOG_HIGH = 1024;

/** One Run being written. Its slots live in the writer's {@link SlotTable}. */
interface RunState {
  readonly runId: string;
  readonly experimentId: string;
  /** Plan positions of the Run's slots. */
  readonly positions: Int32Array;
  readonly dir: string;
  readonly logPath: string;
  log: RunLog | null;
  /** Attempts started and not yet durable as settled. */
  readonly pendingAttempts: Set<string>;
}

/**
 * Forgets an Attempt once its settled record is durable. A function of its own, so that the
 * callback, which lives until the batch syncs, does not keep the result it was written from.
 */
function forgetWhenDurable(pending: Set<string>, attemptId: string): () => void {
  return () => {
    pending.delete(attemptId);
  };
}

/** Opens a Run's log file; a seam for tests that count syncs or inject failures. */
export type LogOpener = (path: string) => Promise<LogFile>;

const CREATE_LOG: Deno.OpenOptions = { write: true, append: true, createNew: true };

/** The real log file: `O_APPEND`, created exclusively. */
export function openLogFile(path: string): Promise<LogFile> {
  return Deno.open(path, CREATE_LOG);
}

/** Writes one Invocation's Runs. */
export class RecordWriter {
  readonly #root: string;
  readonly #clock: Clock;
  readonly #random: Random;
  readonly #redactor: Redactor | undefined;
  readonly #syncer: DirectorySyncer;
  readonly #openLog: LogOpener;
  readonly #batch: { batchRecords?: number; batchMs?: number };
  readonly #runs: RunState[] = [];
  /** Each planned slot and its Run, by slot position (dense: 0 … total − 1). */
  #slots = new SlotTable(0);
  /** Started Attempts by slot position, until they settle. */
  readonly #started = new Map<number, AttemptHeader>();
  #failure: RecordWriteError | undefined;
  /** Called once, on the first write failure. */
  onFailure: (error: RecordWriteError) => void = () => {};

  constructor(
    root: string,
    options: {
      clock: Clock;
      random: Random;
      /** Directory fsyncs (tests count them); default: a real one. */
      syncer?: DirectorySyncer;
      /** Redacts credential values from every record (CLI-8); default: none. */
      redactor?: Redactor;
      /** Opens each Run's log; default: {@link openLogFile}. */
      openLog?: LogOpener;
      /** Group commit bounds; default: `BATCH_RECORDS`, `BATCH_MS`. */
      batchRecords?: number;
      batchMs?: number;
    },
  ) {
    this.#root = root;
    this.#clock = options.clock;
    this.#random = options.random;
    this.#redactor = options.redactor;
    this.#syncer = options.syncer ?? new DirectorySyncer();
    this.#openLog = options.openLog ?? openLogFile;
    this.#batch = {
      ...(options.batchRecords !== undefined ? { batchRecords: options.batchRecords } : {}),
      ...(options.batchMs !== undefined ? { batchMs: options.batchMs } : {}),
    };
  }

  /** The first write failure, if any. */
  get failure(): RecordWriteError | undefined {
    return this.#failure;
  }

  /** How many log syncs the writer has issued (bench and tests). */
  get logSyncs(): number {
    return this.#runs.reduce((sum, run) => sum + (run.log?.syncs ?? 0), 0);
  }

  /**
   * Creates the root, `runs/` and (first writer only) `record.json`; then per Run its directory,
   * its log and its header, all durable; then the members of carried slots.
   */
  async begin(runs: readonly RunSpec[]): Promise<void> {
    const runsDir = join(this.#root, "runs");
    if (!await this.#step(runsDir, () => Deno.mkdir(runsDir, { recursive: true }))) return;
    const recordPath = join(this.#root, "record.json");
    const created = await this.#step(recordPath, async () => {
      try {
        const doc = recordDocument(this.#random.uuid(), this.#clock.now());
        await createExclusive(recordPath, recordJson(doc), { syncer: this.#syncer });
      } catch (error) {
        // A v1 root keeps its record.json: it is never rewritten (docs/record.md).
        if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
      }
    });
    if (!created) return;
    let positions = 0;
    for (const spec of runs) {
      for (const slot of spec.slots) positions = Math.max(positions, slot.position + 1);
    }
    // The specs are not kept: only the compact table and each Run's IDs (issue 20).
    this.#slots = new SlotTable(positions);
    for (const spec of runs) {
      const dir = join(runsDir, spec.header.runId);
      const run: RunState = {
        runId: spec.header.runId,
        experimentId: spec.header.experimentId,
        positions: Int32Array.from(spec.slots, (slot) => slot.position),
        dir,
        logPath: childPath(dir, LOG_NAME),
        log: null,
        pendingAttempts: new Set(),
      };
      for (const slot of spec.slots) this.#slots.set(slot, this.#runs.length);
      this.#runs.push(run);
      if (!await this.#openRun(run, spec)) return;
    }
    if (!await this.#step(runsDir, () => this.#syncer.sync(runsDir))) return;
    for (const spec of runs) {
      for (const slot of spec.slots) {
        if (slot.carried) this.#member(slot.position, "carried", slot.carried, null);
      }
    }
  }

  /** The Run directory, its empty log and its header; one fsync of the directory covers both. */
  #openRun(run: RunState, spec: RunSpec): Promise<boolean> {
    return this.#step(run.dir, async () => {
      await Deno.mkdir(run.dir, { recursive: true });
      run.log = new RunLog(await this.#openLog(run.logPath), this.#clock, this.#batch);
      // The expected slots are made one by one as they are written: 100,000 of them never
      // exist at once.
      const doc = runHeaderDocument({ ...spec.header, expectedSlots: [] });
      doc.expectedSlots = spec.header.expectedSlots;
      const header = recordJsonPieces(doc, "expectedSlots", this.#redactor, expectedSlotOf);
      await writeFilesAtomic(run.dir, [{ name: "run.json", text: header }], {
        random: this.#random,
        syncer: this.#syncer,
      });
    });
  }

  /** Consumes one run event. */
  handle(event: RunEvent): void {
    switch (event.type) {
      case "attempt_start": {
        const slot = this.#slots.slot(event.slot.position);
        const run = this.#runs[this.#slots.runOf(event.slot.position)];
        if (!slot || !run) return;
        this.#started.set(slot.position, {
          attemptId: event.attemptId,
          originRunId: run.runId,
          experimentId: run.experimentId,
          evalId: slot.evalId,
          ordinal: slot.ordinal,
          slotId: slot.slotId,
          executionIdentityDigest: slot.executionIdentityDigest,
          kind: slot.kind,
          startedAt: event.at,
        });
        run.pendingAttempts.add(event.attemptId);
        return;
      }
      case "attempt_end":
        return this.#settle(event.slot.position, event.result);
      case "not_dispatched": {
        const action: MemberAction = event.reason === "interrupted"
          ? "interrupted"
          : "not-dispatched";
        const reason = action === "interrupted" ? null : event.reason;
        this.#member(event.slot.position, action, null, reason);
        return;
      }
      case "slot_errored":
        this.#member(event.slot.position, "not-dispatched", null, event.code);
        return;
      case "diagnostic": {
        if (!event.persist || event.level === "info") return;
        for (const run of this.#runs) {
          if (event.experimentId !== null && run.experimentId !== event.experimentId) {
            continue;
          }
          this.#append(
            run,
            diagnosticRecord({
              code: event.code,
              level: event.level,
              message: event.message,
              evalId: event.evalId,
              data: event.data,
            }),
          );
        }
        return;
      }
      default:
        return;
    }
  }

  /**
   * Waits for pending appends, closes unfilled slots as `interrupted`, then publishes every Run
   * whose slots all have members and whose Attempts are all durable: the end record, then
   * `complete`. Closes every log. Returns the IDs of the published Runs.
   */
  async finish(completion: "completed" | "interrupted"): Promise<string[]> {
    await this.flush();
    for (const run of this.#runs) {
      for (const position of run.positions) this.#member(position, "interrupted", null, null);
    }
    await this.flush();
    const published: string[] = [];
    for (const run of this.#runs) {
      if (this.#failure || run.pendingAttempts.size > 0) continue;
      if (await this.#publish(run, completion)) published.push(run.runId);
    }
    await this.close();
    return published;
  }

  /**
   * Publishes one Run: its end record, durable, then `complete` (exclusive create, fsync, fsync of
   * the Run directory) and one fsync of `runs/`. If a step after the create fails, the marker is
   * removed again: the Run stays unpublished.
   */
  async #publish(run: RunState, completion: "completed" | "interrupted"): Promise<boolean> {
    this.#append(run, endRecord(this.#clock.now(), completion));
    await this.flush();
    if (this.#failure) return false;
    const runs = join(this.#root, "runs");
    const marker = childPath(run.dir, "complete");
    const created = await this.#step(
      marker,
      () => createExclusive(marker, "", { syncer: this.#syncer }),
    );
    if (created && await this.#step(runs, () => this.#syncer.sync(runs))) return true;
    const failure = this.#failure as RecordWriteError | undefined;
    if (!(failure?.cause instanceof Deno.errors.AlreadyExists)) {
      await Deno.remove(marker).catch(() => undefined);
    }
    return false;
  }

  /**
   * Flushes and closes every log without publishing anything: the Runs stay unpublished, as after
   * a kill (salvage seals them later). `finish` closes the logs itself.
   */
  async close(): Promise<void> {
    for (const run of this.#runs) await run.log?.close().catch(() => undefined);
  }

  /**
   * `null` while few appended records wait for their sync; else a promise that resolves once every
   * log has synced (`runPlan`'s `backpressure`).
   */
  backpressure(): Promise<void> | null {
    let unsynced = 0;
    for (const run of this.#runs) unsynced += run.log?.unsynced ?? 0;
    return unsynced <= BACKLOG_HIGH ? null : this.flush();
  }

  /** Resolves once every record appended so far is durable (or failed). */
  async flush(): Promise<void> {
    await Promise.all(this.#runs.map((run) => run.log?.flush()));
  }

  /** True when a started Attempt is not durable as settled (INT-4); call after `flush()`. */
  hasUnsettledAttempts(): boolean {
    return this.#runs.some((run) => run.pendingAttempts.size > 0);
  }

  #settle(position: number, result: AttemptResult): void {
    const run = this.#runs[this.#slots.runOf(position)];
    const header = this.#started.get(position);
    if (!run || !header) return;
    this.#started.delete(position);
    this.#append(
      run,
      () => settledAttemptRecord(header, result),
      forgetWhenDurable(run.pendingAttempts, header.attemptId),
    );
    this.#member(position, "executed", {
      originRunId: run.runId,
      attemptId: result.attemptId,
    }, null);
  }

  /** Appends the slot's member record unless it has one already. */
  #member(
    position: number,
    action: MemberAction,
    attempt: { readonly originRunId: string; readonly attemptId: string } | null,
    reason: string | null,
  ): void {
    const slot = this.#slots.memberFields(position);
    const run = this.#runs[this.#slots.runOf(position)];
    if (!slot || !run || !this.#slots.claimMember(position)) return;
    this.#append(
      run,
      memberRecord({
        slotId: slot.slotId,
        evalId: slot.evalId,
        ordinal: slot.ordinal,
        action,
        attempt: attempt
          ? { originRunId: attempt.originRunId, attemptId: attempt.attemptId }
          : null,
        reason,
      }),
    );
  }

  /**
   * Appends one record to a Run's log; `onDurable` runs once its batch is synced. Serializing can
   * fail (an event that is not JSON): that is the write's failure, as for an I/O error.
   */
  #append(run: RunState, record: unknown | (() => unknown), onDurable?: () => void): void {
    const log = run.log;
    if (this.#failure || log === null) return;
    let line: string;
    try {
      line = recordLine(typeof record === "function" ? record() : record, this.#redactor);
    } catch (error) {
      this.#fail(run.logPath, error);
      return;
    }
    log.append(line).then(onDurable, this.#failer(run.logPath));
  }

  /**
   * The rejection handler of an append. Made here, not in `#append`: a closure keeps its whole
   * scope alive, and `#append`'s scope holds the record (issue 20: each Attempt's result stayed in
   * memory until its batch was synced).
   */
  #failer(path: string): (error: unknown) => void {
    return (error) => this.#fail(path, error);
  }

  /** Runs one write step; false when it failed or an earlier write failed. */
  async #step(path: string, work: () => Promise<unknown>): Promise<boolean> {
    if (this.#failure) return false;
    try {
      await work();
      return true;
    } catch (error) {
      this.#fail(path, error);
      return false;
    }
  }

  #fail(path: string, error: unknown): void {
    if (this.#failure) return;
    this.#failure = new RecordWriteError(path, errorMessage(error), { cause: error });
    this.onFailure(this.#failure);
  }
}
