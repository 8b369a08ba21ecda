/**
 * The Record writer (REC-7 … REC-9): turns run events into atomic file writes under
 * `runs/<RunId>/`, and publishes each Run with its `complete` marker once every planned slot has a
 * member. Writes of one slot stay in order; different slots write in parallel, bounded.
 *
 * Durability: every write resolves only once its rename is durable (REC-8; the three settle-time
 * files of an Attempt share one fsync of their directory, concurrent members share fsyncs of
 * `members/`). `complete` is created only after every write of its Run has resolved and after
 * fsyncs of `attempts/` (the Attempt directories' entries) and `runs/` (the Run's entry), so a
 * crash at any instant leaves either a fully durable published Run or an unpublished one.
 */
import { join } from "node:path";
import type { Clock } from "../_shared/mod.ts";
import type { AttemptResult, RunEvent } from "../_shared/mod.ts";
import type { Random, Redactor } from "../_shared/mod.ts";
import { childPath, createExclusive, DirectorySyncer, recordJson } from "./atomic.ts";
import { KeyedQueue } from "./_keyed_queue.ts";
import {
  type AttemptState,
  type Job,
  RecordWriteError,
  runJob,
  type RunState,
  settledFiles,
  WriteGuard,
} from "./_writer_jobs.ts";
import {
  type AttemptHeader,
  type MemberAction,
  recordDocument,
  runDocument,
  type RunSpec,
  type WriterSlot,
} from "./documents.ts";

export { RecordWriteError };

/**
 * Bound of parallel write jobs: concurrent fsyncs overlap in the device queue (and batch in the
 * journal of a journaling file system).
 */
const DEFAULT_PARALLEL_WRITES = 32;

/**
 * Backlog bounds of {@link RecordWriter.backpressure}, in queued writes (an executed Attempt
 * queues three): above the high mark the scheduler holds ended Attempts' slots until the backlog
 * is down to the low mark. Wide enough to keep every parallel write busy and fsyncs shared.
 */
const BACKLOG_HIGH = 8 * DEFAULT_PARALLEL_WRITES;
const BACKLOG_LOW = 4 * DEFAULT_PARALLEL_WRITES;

/** Writes one Invocation's Runs. */
export class RecordWriter {
  readonly #root: string;
  readonly #clock: Clock;
  readonly #random: Random;
  readonly #queue: KeyedQueue<Job>;
  readonly #guard: WriteGuard;
  readonly #syncer: DirectorySyncer;
  readonly #runs: RunState[] = [];
  /** Each planned slot and its Run, indexed by slot position (dense: 0 … total − 1). */
  #slotAt: (WriterSlot | undefined)[] = [];
  #runAt: (RunState | undefined)[] = [];
  readonly #attempts = new Map<number, AttemptState>();
  /** Called once, on the first write failure. */
  onFailure: (error: RecordWriteError) => void = () => {};

  constructor(
    root: string,
    options: {
      clock: Clock;
      random: Random;
      /** Bound of parallel write jobs (default 32). */
      parallelWrites?: number;
      /** Directory fsyncs (tests count them); default: a real one. */
      syncer?: DirectorySyncer;
      /** Redacts credential values from every document (CLI-8); default: none. */
      redactor?: Redactor;
    },
  ) {
    this.#root = root;
    this.#clock = options.clock;
    this.#random = options.random;
    this.#syncer = options.syncer ?? new DirectorySyncer();
    this.#guard = new WriteGuard(
      options.random,
      this.#syncer,
      (error) => this.onFailure(error),
      options.redactor,
    );
    this.#queue = new KeyedQueue(
      options.parallelWrites ?? DEFAULT_PARALLEL_WRITES,
      (job) => runJob(job, this.#guard),
    );
  }

  /** The first write failure, if any. */
  get failure(): RecordWriteError | undefined {
    return this.#guard.failure;
  }

  /** Creates the root, `runs/` and (first writer only) `record.json`; then writes REC-9 steps 1–2. */
  async begin(runs: readonly RunSpec[]): Promise<void> {
    await this.#guard.run(
      join(this.#root, "runs"),
      () => Deno.mkdir(join(this.#root, "runs"), { recursive: true }),
    );
    const recordPath = join(this.#root, "record.json");
    await this.#guard.run(recordPath, async () => {
      try {
        const doc = recordDocument(this.#random.uuid(), this.#clock.now());
        await createExclusive(recordPath, recordJson(doc), { syncer: this.#syncer });
      } catch (error) {
        if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
      }
    });
    let positions = 0;
    for (const spec of runs) {
      for (const slot of spec.slots) positions = Math.max(positions, slot.position + 1);
    }
    // Filled up front: assigning out of order would leave holes in the arrays.
    this.#slotAt = Array.from({ length: positions }, () => undefined);
    this.#runAt = Array.from({ length: positions }, () => undefined);
    for (const spec of runs) {
      const dir = join(this.#root, "runs", spec.header.runId);
      const run: RunState = {
        spec,
        dir,
        attemptsDir: childPath(dir, "attempts"),
        membersDir: childPath(dir, "members"),
        members: new Set(),
        pendingAttempts: new Set(),
        diagnostics: [],
      };
      this.#runs.push(run);
      for (const slot of spec.slots) {
        this.#slotAt[slot.position] = slot;
        this.#runAt[slot.position] = run;
      }
      await this.#guard.run(dir, async () => {
        await Deno.mkdir(run.membersDir, { recursive: true });
        await Deno.mkdir(run.attemptsDir, { recursive: true });
      });
      await this.#guard.write(dir, "run.json", runDocument(spec.header, null, []));
      for (const slot of spec.slots) {
        if (slot.carried) {
          this.#member(run, slot, "carried", {
            originRunId: slot.carried.originRunId,
            attemptId: slot.carried.attemptId,
          }, null);
        }
      }
    }
  }

  /** Consumes one run event. */
  handle(event: RunEvent): void {
    switch (event.type) {
      case "attempt_start": {
        const slot = this.#slotAt[event.slot.position];
        const run = this.#runAt[event.slot.position];
        if (!slot || !run) return;
        const header: AttemptHeader = {
          attemptId: event.attemptId,
          originRunId: run.spec.header.runId,
          experimentId: run.spec.header.experimentId,
          evalId: slot.evalId,
          ordinal: slot.ordinal,
          slotId: slot.slotId,
          executionIdentityDigest: slot.executionIdentityDigest,
          kind: slot.kind,
          startedAt: event.at,
        };
        const attempt: AttemptState = {
          run,
          header,
          dir: childPath(run.attemptsDir, event.attemptId),
          settled: false,
          dirCreated: false,
        };
        this.#attempts.set(slot.position, attempt);
        run.pendingAttempts.add(event.attemptId);
        this.#queue.push(slot.position, { kind: "reserve", attempt });
        return;
      }
      case "attempt_end":
        return this.#settle(event.slot.position, event.result);
      case "not_dispatched": {
        const slot = this.#slotAt[event.slot.position];
        const run = this.#runAt[event.slot.position];
        if (!slot || !run) return;
        const action: MemberAction = event.reason === "interrupted"
          ? "interrupted"
          : "not-dispatched";
        this.#member(run, slot, action, null, action === "interrupted" ? null : event.reason);
        return;
      }
      case "slot_errored": {
        const slot = this.#slotAt[event.slot.position];
        const run = this.#runAt[event.slot.position];
        if (slot && run) this.#member(run, slot, "not-dispatched", null, event.code);
        return;
      }
      case "diagnostic": {
        if (!event.persist || event.level === "info") return;
        for (const run of this.#runs) {
          if (event.experimentId !== null && run.spec.header.experimentId !== event.experimentId) {
            continue;
          }
          run.diagnostics.push({
            code: event.code,
            level: event.level,
            message: event.message,
            evalId: event.evalId,
            data: event.data,
          });
        }
        return;
      }
      default:
        return;
    }
  }

  /**
   * Waits for pending writes, closes unfilled slots as `interrupted`, then publishes every Run
   * whose slots all have members and whose Attempts are all final (REC-9 steps 6–7). Returns the
   * IDs of the published Runs.
   */
  async finish(completion: "completed" | "interrupted"): Promise<string[]> {
    await this.#drain();
    for (const run of this.#runs) {
      for (const slot of run.spec.slots) {
        if (!run.members.has(slot.slotId)) this.#member(run, slot, "interrupted", null, null);
      }
    }
    await this.#drain();
    const published: string[] = [];
    for (const run of this.#runs) {
      if (this.#guard.failure || run.pendingAttempts.size > 0) continue;
      if (await this.#publish(run, completion)) published.push(run.spec.header.runId);
    }
    return published;
  }

  /**
   * Publishes one Run (REC-9 steps 6–7). Before the marker: one fsync of `attempts/` (the entries
   * of the Attempt directories), the final `run.json` (its write fsyncs the Run directory) and one
   * fsync of `runs/` (the Run's own entry), so everything the marker publishes is durable first.
   * Then `complete`: exclusive create, fsync, fsync the Run directory and `runs/`. If a step after
   * the create fails, the marker is removed again: the Run stays unpublished.
   */
  async #publish(run: RunState, completion: "completed" | "interrupted"): Promise<boolean> {
    const attempts = run.attemptsDir;
    const runs = join(this.#root, "runs");
    const final = runDocument(
      run.spec.header,
      { completedAt: this.#clock.now(), completion },
      run.diagnostics,
    );
    const ready = await this.#guard.run(attempts, () => this.#syncer.sync(attempts)) &&
      await this.#guard.write(run.dir, "run.json", final) &&
      await this.#guard.run(runs, () => this.#syncer.sync(runs));
    if (!ready) return false;
    const marker = childPath(run.dir, "complete");
    const created = await this.#guard.run(
      marker,
      () => createExclusive(marker, "", { syncer: this.#syncer }),
    );
    if (created && await this.#guard.run(runs, () => this.#syncer.sync(runs))) return true;
    if (!(this.#guard.failure?.cause instanceof Deno.errors.AlreadyExists)) {
      await Deno.remove(marker).catch(() => undefined);
    }
    return false;
  }

  /**
   * `null` while the write backlog is small; else a promise that resolves once it has shrunk
   * (`runPlan`'s `backpressure`). Without it, Attempts that end faster than the Record can store
   * them pile up their results in memory.
   */
  backpressure(): Promise<void> | null {
    return this.#queue.size <= BACKLOG_HIGH ? null : this.#queue.whenAtMost(BACKLOG_LOW);
  }

  /** Waits until every queued write has finished. */
  flush(): Promise<void> {
    return this.#drain();
  }

  /** True when a reserved Attempt has no final `attempt.json` (INT-4); call after `flush()`. */
  hasUnsettledAttempts(): boolean {
    return this.#runs.some((run) => run.pendingAttempts.size > 0);
  }

  #settle(position: number, result: AttemptResult): void {
    const slot = this.#slotAt[position];
    const run = this.#runAt[position];
    const attempt = this.#attempts.get(position);
    if (!slot || !run || !attempt) return;
    attempt.settled = true;
    this.#attempts.delete(position);
    const files = settledFiles(attempt.header, result, this.#guard.redactor);
    this.#queue.push(position, { kind: "settle", attempt, files });
    this.#member(run, slot, "executed", {
      originRunId: run.spec.header.runId,
      attemptId: result.attemptId,
    }, null);
  }

  #member(
    run: RunState,
    slot: WriterSlot,
    action: MemberAction,
    attempt: { originRunId: string; attemptId: string } | null,
    reason: string | null,
  ): void {
    if (run.members.has(slot.slotId)) return;
    run.members.add(slot.slotId);
    this.#queue.push(slot.position, { kind: "member", run, slot, action, attempt, reason });
  }

  #drain(): Promise<void> {
    return this.#queue.idle();
  }
}
