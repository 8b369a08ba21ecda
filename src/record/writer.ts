/**
 * The Record writer (REC-7 … REC-9): turns run events into atomic file writes under
 * `runs/<RunId>/`, and publishes each Run with its `complete` marker once every planned slot has a
 * member. Writes of one slot stay in order; different slots write in parallel, bounded.
 */
import { join } from "node:path";
import pLimit from "p-limit";
import type { Clock } from "../_shared/mod.ts";
import { errorMessage } from "../_shared/mod.ts";
import type { AttemptResult, RecordedDiagnostic, RunEvent } from "../_shared/mod.ts";
import type { Random } from "../_shared/mod.ts";
import { createExclusive, writeJsonAtomic } from "./atomic.ts";
import {
  assertionsDocument,
  attemptDocument,
  type AttemptHeader,
  eventsDocument,
  type MemberAction,
  memberDocument,
  recordDocument,
  runDocument,
  type RunHeader,
} from "./documents.ts";

/** One planned slot as the writer needs it. */
export interface WriterSlot {
  readonly position: number;
  readonly slotId: string;
  readonly evalId: string;
  readonly ordinal: number;
  readonly kind: "pass" | "score";
  readonly executionIdentityDigest: string;
  /** Set for carried slots: the origin Attempt. */
  readonly carried: { readonly originRunId: string; readonly attemptId: string } | null;
}

/** One Run to write. */
export interface RunSpec {
  readonly header: RunHeader;
  readonly slots: readonly WriterSlot[];
}

/** Raised when a Record write fails; the run stops dispatching (REC-9). */
export class RecordWriteError extends Error {
  readonly path: string;
  constructor(path: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "RecordWriteError";
    this.path = path;
  }
}

interface RunState {
  readonly spec: RunSpec;
  readonly dir: string;
  readonly members: Set<string>;
  readonly pendingAttempts: Set<string>;
  readonly diagnostics: (RecordedDiagnostic & { evalId: string | null })[];
}

/** Writes one Invocation's Runs. */
export class RecordWriter {
  readonly #root: string;
  readonly #clock: Clock;
  readonly #random: Random;
  readonly #limit = pLimit(8);
  readonly #chains = new Map<number, Promise<void>>();
  readonly #runs: RunState[] = [];
  readonly #byPosition = new Map<number, { run: RunState; slot: WriterSlot }>();
  readonly #attempts = new Map<number, AttemptHeader>();
  #failure: RecordWriteError | undefined;
  /** Called once, on the first write failure. */
  onFailure: (error: RecordWriteError) => void = () => {};

  constructor(root: string, options: { clock: Clock; random: Random }) {
    this.#root = root;
    this.#clock = options.clock;
    this.#random = options.random;
  }

  /** The first write failure, if any. */
  get failure(): RecordWriteError | undefined {
    return this.#failure;
  }

  /** Creates the root, `runs/` and (first writer only) `record.json`; then writes REC-9 steps 1–2. */
  async begin(runs: readonly RunSpec[]): Promise<void> {
    await this.#guard(
      join(this.#root, "runs"),
      () => Deno.mkdir(join(this.#root, "runs"), { recursive: true }),
    );
    const recordPath = join(this.#root, "record.json");
    await this.#guard(recordPath, async () => {
      try {
        await createExclusive(
          recordPath,
          JSON.stringify(recordDocument(this.#random.uuid(), this.#clock.now()), null, 2) + "\n",
        );
      } catch (error) {
        if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
      }
    });
    for (const spec of runs) {
      const dir = join(this.#root, "runs", spec.header.runId);
      const run: RunState = {
        spec,
        dir,
        members: new Set(),
        pendingAttempts: new Set(),
        diagnostics: [],
      };
      this.#runs.push(run);
      for (const slot of spec.slots) this.#byPosition.set(slot.position, { run, slot });
      await this.#guard(dir, async () => {
        await Deno.mkdir(join(dir, "members"), { recursive: true });
        await Deno.mkdir(join(dir, "attempts"), { recursive: true });
      });
      await this.#write(join(dir, "run.json"), runDocument(spec.header, null, []));
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
        const found = this.#byPosition.get(event.slot.position);
        if (!found) return;
        const { run, slot } = found;
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
        this.#attempts.set(slot.position, header);
        run.pendingAttempts.add(event.attemptId);
        const dir = join(run.dir, "attempts", event.attemptId);
        this.#chain(slot.position, async () => {
          await this.#guard(dir, () => Deno.mkdir(dir, { recursive: true }));
          await this.#write(join(dir, "attempt.json"), attemptDocument(header, null));
        });
        return;
      }
      case "attempt_end":
        return this.#settle(event.slot.position, event.result);
      case "not_dispatched": {
        const found = this.#byPosition.get(event.slot.position);
        if (!found) return;
        const action: MemberAction = event.reason === "interrupted"
          ? "interrupted"
          : "not-dispatched";
        this.#member(
          found.run,
          found.slot,
          action,
          null,
          action === "interrupted" ? null : event.reason,
        );
        return;
      }
      case "slot_errored": {
        const found = this.#byPosition.get(event.slot.position);
        if (found) this.#member(found.run, found.slot, "not-dispatched", null, event.code);
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
      if (this.#failure || run.pendingAttempts.size > 0) continue;
      const ok = await this.#write(
        join(run.dir, "run.json"),
        runDocument(
          run.spec.header,
          { completedAt: this.#clock.now(), completion },
          run.diagnostics,
        ),
      );
      if (!ok) continue;
      const marker = join(run.dir, "complete");
      if (await this.#guard(marker, () => createExclusive(marker))) {
        published.push(run.spec.header.runId);
      }
    }
    return published;
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
    const found = this.#byPosition.get(position);
    const header = this.#attempts.get(position);
    if (!found || !header) return;
    const { run, slot } = found;
    const dir = join(run.dir, "attempts", result.attemptId);
    this.#chain(position, async () => {
      const ok = await this.#write(join(dir, "events.json"), eventsDocument(result)) &&
        await this.#write(join(dir, "assertions.json"), assertionsDocument(result)) &&
        await this.#write(join(dir, "attempt.json"), attemptDocument(header, result));
      if (ok) run.pendingAttempts.delete(result.attemptId);
    });
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
    const doc = memberDocument({
      slotId: slot.slotId,
      evalId: slot.evalId,
      ordinal: slot.ordinal,
      action,
      attempt,
      reason,
    });
    this.#chain(
      slot.position,
      () => this.#write(join(run.dir, "members", `${slot.slotId}.json`), doc).then(() => undefined),
    );
  }

  /** Runs `work` after earlier work of the same slot, within the parallel write bound. */
  #chain(position: number, work: () => Promise<void>): void {
    const prev = this.#chains.get(position) ?? Promise.resolve();
    const next = prev.then(() => this.#limit(work));
    this.#chains.set(position, next);
  }

  async #drain(): Promise<void> {
    while (true) {
      const pending = [...this.#chains.values()];
      this.#chains.clear();
      if (pending.length === 0) return;
      await Promise.all(pending);
    }
  }

  #write(path: string, doc: unknown): Promise<boolean> {
    return this.#guard(path, () => writeJsonAtomic(path, doc, this.#random));
  }

  /** Runs a write; the first failure is kept and reported, later writes are skipped. */
  async #guard(path: string, work: () => Promise<unknown>): Promise<boolean> {
    if (this.#failure) return false;
    try {
      await work();
      return true;
    } catch (error) {
      if (!this.#failure) {
        this.#failure = new RecordWriteError(path, errorMessage(error), { cause: error });
        this.onFailure(this.#failure);
      }
      return false;
    }
  }
}
