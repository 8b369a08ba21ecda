/**
 * The Record writer's queued writes (REC-9 steps 2–5) and the guard that keeps the first write
 * failure. Private to the writer.
 */
import { errorMessage } from "../_shared/mod.ts";
import type { AttemptResult, Random, RecordedDiagnostic, Redactor } from "../_shared/mod.ts";
import {
  childPath,
  type DirectorySyncer,
  type FileText,
  recordJson,
  writeFilesAtomic,
} from "./atomic.ts";
import {
  assertionsDocument,
  attemptDocument,
  type AttemptHeader,
  eventsDocument,
  type MemberAction,
  memberDocument,
  type RunSpec,
  type WriterSlot,
} from "./documents.ts";

/** Raised when a Record write fails; the run stops dispatching (REC-9). */
export class RecordWriteError extends Error {
  readonly path: string;
  constructor(path: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "RecordWriteError";
    this.path = path;
  }
}

/** One Run being written. */
export interface RunState {
  readonly spec: RunSpec;
  readonly dir: string;
  readonly attemptsDir: string;
  readonly membersDir: string;
  readonly members: Set<string>;
  readonly pendingAttempts: Set<string>;
  readonly diagnostics: (RecordedDiagnostic & { evalId: string | null })[];
}

/** One reserved Attempt as the writer tracks it. */
export interface AttemptState {
  readonly run: RunState;
  readonly header: AttemptHeader;
  /** `attempts/<AttemptId>/` of its Run. */
  readonly dir: string;
  /** Set at settle: a reservation write that has not started yet is superseded (REC-7a). */
  settled: boolean;
  dirCreated: boolean;
}

/** One queued write of a slot; documents are built when it runs. */
export type Job =
  | { readonly kind: "reserve"; readonly attempt: AttemptState }
  | { readonly kind: "settle"; readonly attempt: AttemptState; readonly files: SettledFiles }
  | {
    readonly kind: "member";
    readonly run: RunState;
    readonly slot: WriterSlot;
    readonly action: MemberAction;
    readonly attempt: { readonly originRunId: string; readonly attemptId: string } | null;
    readonly reason: string | null;
  };

/**
 * The settle-time files of an Attempt, serialized when it settles: a queued write then holds
 * their text instead of the whole result. Serializing can fail (an event that is not JSON); the
 * failure is kept and becomes the write's failure when the job runs, as for any file.
 */
type SettledFiles =
  | { readonly ok: true; readonly files: readonly FileText[] }
  | { readonly ok: false; readonly error: unknown };

/**
 * Renders a settled Attempt's files in rename order: events.json, assertions.json, final
 * attempt.json (REC-9 step 4), with credential values redacted (CLI-8).
 */
export function settledFiles(
  header: AttemptHeader,
  result: AttemptResult,
  redactor?: Redactor,
): SettledFiles {
  try {
    return {
      ok: true,
      files: [
        { name: "events.json", text: recordJson(eventsDocument(result), redactor) },
        { name: "assertions.json", text: recordJson(assertionsDocument(result), redactor) },
        { name: "attempt.json", text: recordJson(attemptDocument(header, result), redactor) },
      ],
    };
  } catch (error) {
    return { ok: false, error };
  }
}

/** Runs writes; keeps the first failure and reports it once, then skips every later write. */
export class WriteGuard {
  readonly #random: Random;
  readonly #syncer: DirectorySyncer;
  readonly #onFailure: (error: RecordWriteError) => void;
  /** Applied to every document written (CLI-8). */
  readonly redactor: Redactor | undefined;
  #failure: RecordWriteError | undefined;

  constructor(
    random: Random,
    syncer: DirectorySyncer,
    onFailure: (error: RecordWriteError) => void,
    redactor?: Redactor,
  ) {
    this.#random = random;
    this.#syncer = syncer;
    this.#onFailure = onFailure;
    this.redactor = redactor;
  }

  /** The first write failure, if any. */
  get failure(): RecordWriteError | undefined {
    return this.#failure;
  }

  /** Runs a write; false when it failed or an earlier write failed. */
  async run(path: string, work: () => Promise<unknown>): Promise<boolean> {
    if (this.#failure) return false;
    try {
      await work();
      return true;
    } catch (error) {
      if (!this.#failure) {
        this.#failure = new RecordWriteError(path, errorMessage(error), { cause: error });
        this.#onFailure(this.#failure);
      }
      return false;
    }
  }

  /**
   * Writes `doc` as redacted Record JSON to `dir`/`name` atomically (REC-8), sharing directory
   * fsyncs.
   */
  write(dir: string, name: string, doc: unknown): Promise<boolean> {
    return this.run(
      childPath(dir, name),
      () => this.writeFiles(dir, [{ name, text: recordJson(doc, this.redactor) }]),
    );
  }

  /** {@link writeFilesAtomic} with the guard's random source and syncer. */
  writeFiles(dir: string, files: readonly FileText[]): Promise<void> {
    return writeFilesAtomic(dir, files, { random: this.#random, syncer: this.#syncer });
  }
}

/** Performs one queued write; failures end in the guard, never in a rejection. */
export async function runJob(job: Job, guard: WriteGuard): Promise<void> {
  switch (job.kind) {
    case "reserve": {
      // Settled before this write could start: the final attempt.json queued behind it is the
      // Attempt's first and only write (REC-7a); the reserved one would be replaced at once.
      if (job.attempt.settled || !(await attemptDir(job.attempt, guard))) return;
      await guard.write(job.attempt.dir, "attempt.json", attemptDocument(job.attempt.header, null));
      return;
    }
    case "settle":
      return await writeSettled(job.attempt, job.files, guard);
    case "member": {
      const { run, slot, action, attempt, reason } = job;
      const doc = memberDocument({
        slotId: slot.slotId,
        evalId: slot.evalId,
        ordinal: slot.ordinal,
        action,
        attempt,
        reason,
      });
      await guard.write(run.membersDir, `${slot.slotId}.json`, doc);
      return;
    }
  }
}

/**
 * Writes events.json, assertions.json and the final attempt.json, renamed in that order and made
 * durable by one fsync of the Attempt directory (REC-9 step 4); the member is the slot's next job.
 */
async function writeSettled(
  attempt: AttemptState,
  settled: SettledFiles,
  guard: WriteGuard,
): Promise<void> {
  if (!(await attemptDir(attempt, guard))) return;
  const write = settled.ok
    ? () => guard.writeFiles(attempt.dir, settled.files)
    : () => Promise.reject(settled.error);
  if (await guard.run(attempt.dir, write)) {
    attempt.run.pendingAttempts.delete(attempt.header.attemptId);
  }
}

/** Creates the Attempt's directory once (its entry becomes durable at publish). */
async function attemptDir(attempt: AttemptState, guard: WriteGuard): Promise<boolean> {
  if (attempt.dirCreated) return true;
  const dir = attempt.dir;
  attempt.dirCreated = await guard.run(dir, () => Deno.mkdir(dir, MKDIR_PARENTS));
  return attempt.dirCreated;
}

const MKDIR_PARENTS: Deno.MkdirOptions = { recursive: true };
